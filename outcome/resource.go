package outcome

import "strings"

// Resource is one scarce resource of the system under test at one moment: one row of
// resources.csv (with the sample's time, which the run folder adds). The report's "which
// resource ran out" analysis reads nothing else, so any target (the built-in service, a process
// scraped over Prometheus) is attributed the same way. Capacity 0 means unbounded (it never
// saturates).
type Resource struct {
	// Name is "<kind>:<what>" (ResourcePool, ResourceQueue, ...) or one of the plain names
	// (ResourceInboundConns, ...).
	Name     string `json:"name"`
	Capacity int    `json:"capacity"`
	InUse    int    `json:"in_use"`
	// Rejected is the cumulative count of calls turned away because this resource was exhausted.
	Rejected uint64 `json:"rejected"`
}

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
