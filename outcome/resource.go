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
//
// Levels and capacities are float64 so that a scraped resource keeps what its exporter reports
// (a CPU share of 0.35 of a core, an event-loop delay of 0.012 s against a bound of 0.05 s). The
// built-in service's are whole counts from its exact integer accounting, converted once per
// sample; resources.csv writes a whole value as an integer, as it always has.
type Resource struct {
	// Name is "<kind>:<what>" (ResourcePool, ResourceQueue, ...) or one of the plain names
	// (ResourceInboundConns, ...).
	Name     string  `json:"name"`
	Capacity float64 `json:"capacity"`
	// InUse is the level at the sample's instant.
	InUse float64 `json:"in_use"`
	// Rejected is the cumulative count of calls turned away because this resource was exhausted;
	// RejectedUnknown says no such count is known (a scraped target without a rejection counter
	// for it), so Rejected is 0 for want of a count, not a count of 0.
	Rejected        uint64 `json:"rejected"`
	RejectedUnknown bool   `json:"rejected_unknown,omitempty"`

	// Interval is the length of the sampling interval that ends at the sample, over which the
	// figures below are exact (accounted from the resource's own transitions). 0 means the row is
	// a point sample only: a resource that keeps no time account, the first sample of a run, or
	// a run folder written before the figures existed; the fields below are then meaningless.
	Interval time.Duration `json:"interval_ns,omitempty"`
	// MeanInUse is the time-weighted mean level over the interval and MaxInUse its highest level.
	MeanInUse float64 `json:"mean_in_use,omitempty"`
	MaxInUse  float64 `json:"max_in_use,omitempty"`
	// MeanCapacity is, for a resource whose capacity changes (an adaptive pool's limit), the
	// time-weighted mean capacity over the interval; Capacity is then the capacity at the
	// sample's instant. 0 for a resource whose capacity is fixed (it is Capacity throughout).
	MeanCapacity float64 `json:"mean_capacity,omitempty"`
	// AtCapacity is the time the level was at or above Capacity during the interval (above the
	// capacity of each moment, for a capacity that changes).
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
	// ResourceEventLoop is an event loop's delay ("eventloop:<name>"), a level against a bound in
	// the same unit (seconds as exported, or milliseconds after a scale of 1000): at its bound,
	// every callback on the loop waited that long, so it has run out by itself (scraped, e.g.
	// Node's event-loop lag).
	ResourceEventLoop = "eventloop"
	// ResourceCPU is a process's CPU use ("cpu:<name>"), a level in cores (0.35) or any unit its
	// bound shares (scraped, e.g. process_cpu_seconds_total's rate). At its bound it is full;
	// whether anyone waited for it is told by the event loop or a queue.
	ResourceCPU = "cpu"
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
	ResourceKinds  = []string{ResourcePool, ResourceQueue, ResourceConns, ResourceCalls, ResourceBreaker, ResourceInbound, ResourceRetry, ResourceEventLoop, ResourceCPU}
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
