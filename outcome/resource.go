package outcome

import (
	"strings"
	"time"
)

// Resource is one scarce resource of the system under test at one moment, and over the sampling
// interval that ends then: one row of resources.csv (with the sample's time, which the run folder
// adds). The report's "which resource ran out" analysis reads nothing else, so any target (the
// built-in service, a process scraped over Prometheus) is attributed the same way. Capacity 0
// means unbounded (it never saturates).
type Resource struct {
	// Name is "<kind>:<what>" (ResourcePool, ResourceQueue, ...) or one of the plain names
	// (ResourceInboundConns, ...).
	Name     string `json:"name"`
	Capacity int    `json:"capacity"`
	// InUse is the level at the sample's instant.
	InUse int `json:"in_use"`
	// Rejected is the cumulative count of calls turned away because this resource was exhausted.
	Rejected uint64 `json:"rejected"`

	// Interval is the length of the sampling interval that ends at the sample, over which the
	// figures below are exact (accounted from the resource's own transitions). 0 means the row is
	// a point sample only: a resource that keeps no time account, the first sample of a run, or
	// a run folder written before the figures existed; the fields below are then meaningless.
	Interval time.Duration `json:"interval_ns,omitempty"`
	// MeanInUse is the time-weighted mean level over the interval and MaxInUse its highest level.
	MeanInUse float64 `json:"mean_in_use,omitempty"`
	MaxInUse  int     `json:"max_in_use,omitempty"`
	// AtCapacity is the time the level was at or above Capacity during the interval.
	AtCapacity time.Duration `json:"at_capacity_ns,omitempty"`
	// FirstAtCapacity is the offset from the interval's start at which the level was first at
	// capacity (0 when it already was at the start), or -1 when it never was in the interval.
	FirstAtCapacity time.Duration `json:"first_at_capacity_ns,omitempty"`
}

// Exact reports whether r carries the exact figures of a sampling interval.
func (r Resource) Exact() bool { return r.Interval > 0 }

// Resource kinds: the part of a resource's name before the ':'.
const (
	// ResourcePool is a pool's slots ("pool:<pool>").
	ResourcePool = "pool"
	// ResourceQueue is a pool's waiting room ("queue:<pool>").
	ResourceQueue = "queue"
	// ResourceConns is the connections open to a dependency ("conns:<dependency>").
	ResourceConns = "conns"
	// ResourceCalls is a dependency's calls in flight ("calls:<dependency>").
	ResourceCalls = "calls"
	// ResourceBreaker is a dependency's circuit breaker, at capacity while open ("breaker:<dependency>").
	ResourceBreaker = "breaker"
	// ResourceInbound is an inbound endpoint's backlog ("inbound:<path>").
	ResourceInbound = "inbound"
	// ResourceRetry is an inbound endpoint's deferred items ("retry:<path>").
	ResourceRetry = "retry"
)

// Plain resource names, without a ':' part.
const (
	ResourceInboundConns  = "inbound-conns"
	ResourceOutboundConns = "outbound-conns"
	ResourceGoroutines    = "goroutines"
	ResourceHeapBytes     = "heap-bytes"
	ResourceStackBytes    = "stack-bytes"
)

// ResourceKinds lists the kinds, and PlainResources the plain names, a resource may have.
var (
	ResourceKinds  = []string{ResourcePool, ResourceQueue, ResourceConns, ResourceCalls, ResourceBreaker, ResourceInbound, ResourceRetry}
	PlainResources = []string{ResourceInboundConns, ResourceOutboundConns, ResourceGoroutines, ResourceHeapBytes, ResourceStackBytes}
)

// ResourceName returns "<kind>:<what>".
func ResourceName(kind, what string) string { return kind + ":" + what }

// SplitResource returns the kind and the named part of a resource name ("pool", "shared" for
// "pool:shared"); a plain name returns itself as kind and "".
func SplitResource(name string) (kind, what string) {
	kind, what, _ = strings.Cut(name, ":")
	return kind, what
}
