package service

import "time"

// Mode says how dependency calls are admitted.
type Mode string

const (
	// ModeShared puts every dependency behind one pool.
	ModeShared Mode = "shared"
	// ModeSplit gives each dependency (or named group of dependencies) its own pool.
	ModeSplit Mode = "split"
	// ModeNone admits every call at once (a goroutine per request), so that the next scarce
	// resource (connections, inbound accept, CPU) is the one that shows.
	ModeNone Mode = "none"
)

// PoolKind is the admission mechanism of one pool: the two Resilience4j bulkhead variants.
type PoolKind string

const (
	// KindSemaphore is a counting semaphore: the caller's goroutine holds a permit for the call.
	// Up to QueueCapacity callers may wait for a permit, each at most MaxWait; MaxWait 0 rejects at
	// once when no permit is free.
	KindSemaphore PoolKind = "semaphore"
	// KindWorkers is a fixed set of Size worker goroutines fed by a bounded FIFO queue of
	// QueueCapacity tasks; a full queue rejects at once. A task that waited in the queue longer than
	// MaxWait (when MaxWait > 0) is dropped with reason wait-timeout instead of being run.
	KindWorkers PoolKind = "workers"
)

// PoolConfig describes one pool. Every field is explicit: there is no unbounded queue.
type PoolConfig struct {
	// Name identifies the pool in headers, metrics and snapshots ("shared", "A", ...).
	Name string `json:"name" yaml:"name"`
	// Kind is semaphore or workers. The zero value means semaphore.
	Kind PoolKind `json:"kind" yaml:"kind"`
	// Size is the number of permits (semaphore) or worker goroutines (workers). Must be > 0.
	Size int `json:"size" yaml:"size"`
	// QueueCapacity bounds the callers waiting for a permit (semaphore) or the queued tasks
	// (workers). 0 means no waiting room: reject as soon as every slot is taken.
	QueueCapacity int `json:"queue_capacity" yaml:"queue_capacity"`
	// MaxWait bounds the time one call may wait for a slot. For semaphores 0 means do not wait.
	// For workers 0 means a queued task waits until a worker takes it (bounded by the queue and by
	// the inbound request's context).
	MaxWait time.Duration `json:"max_wait" yaml:"max_wait"`
	// Dependencies lists the dependency names whose calls take a slot from this pool.
	Dependencies []string `json:"dependencies" yaml:"dependencies"`
}

// BreakerConfig turns on a circuit breaker (sony/gobreaker) in front of one dependency.
type BreakerConfig struct {
	// SlowCallThreshold counts a successful call slower than this as a failure (seed 000).
	// 0 means only errors count.
	SlowCallThreshold time.Duration `json:"slow_call_threshold" yaml:"slow_call_threshold"`
	// MinCalls is the number of calls in the current window before the breaker may trip.
	// 0 means 10.
	MinCalls uint32 `json:"min_calls" yaml:"min_calls"`
	// FailureRatio trips the breaker when failures/calls reaches it. 0 means 0.5.
	FailureRatio float64 `json:"failure_ratio" yaml:"failure_ratio"`
	// OpenTimeout is how long the breaker stays open before letting a trial call through.
	// 0 means 5s.
	OpenTimeout time.Duration `json:"open_timeout" yaml:"open_timeout"`
	// Interval clears the closed-state counts periodically. 0 means never (gobreaker default).
	Interval time.Duration `json:"interval" yaml:"interval"`
}

// DependencyConfig names one dependency and where to reach it.
type DependencyConfig struct {
	// Name identifies the dependency ("A", "partner-017").
	Name string `json:"name" yaml:"name"`
	// URL is the base URL the service calls (normally a Toxiproxy listener in front of the
	// dependency). The service issues GET URL + "/".
	URL string `json:"url" yaml:"url"`
	// Breaker, when non-nil, puts a circuit breaker in front of this dependency's calls.
	Breaker *BreakerConfig `json:"breaker,omitempty" yaml:"breaker,omitempty"`
}

// Deadline says how an endpoint that calls several dependencies budgets its waits (seed 002).
type Deadline string

const (
	// DeadlinePerCall gives each dependency call its own ClientTimeout, waited on one after the
	// other: the worst case is the sum.
	DeadlinePerCall Deadline = "per-call"
	// DeadlineShared gives all calls of one request a single ClientTimeout budget.
	DeadlineShared Deadline = "shared"
)

// EndpointConfig maps an inbound path to the dependencies it calls.
type EndpointConfig struct {
	// Path is the inbound path ("/a").
	Path string `json:"path" yaml:"path"`
	// Calls lists the dependencies called for each request. With more than one, the calls are
	// started concurrently and their results collected in order, budgeted by Deadline.
	Calls []string `json:"calls" yaml:"calls"`
	// Deadline applies when Calls has more than one entry. The zero value means per-call.
	Deadline Deadline `json:"deadline,omitempty" yaml:"deadline,omitempty"`
}

// Config is the whole service. The zero values are documented per field; Validate reports
// anything that cannot run.
type Config struct {
	// Mode is shared, split or none. The zero value means shared.
	Mode Mode `json:"mode"`
	// Pools lists the pools. In shared mode exactly one pool covering every dependency; in split
	// mode one or more pools that together cover every dependency exactly once; in none mode empty.
	Pools []PoolConfig `json:"pools"`
	// Dependencies lists every dependency the endpoints call.
	Dependencies []DependencyConfig `json:"dependencies"`
	// Endpoints lists the inbound paths.
	Endpoints []EndpointConfig `json:"endpoints"`
	// ClientTimeout bounds each dependency call (connect to last byte), identical in every
	// configuration. Must be > 0.
	ClientTimeout time.Duration `json:"client_timeout"`
	// MaxInboundConns caps concurrent inbound connections (netutil.LimitListener style). 0 = no cap.
	MaxInboundConns int `json:"max_inbound_conns"`
	// MaxOutboundConns caps connections to all dependencies together. 0 = no cap.
	MaxOutboundConns int `json:"max_outbound_conns"`
	// MaxIdleConnsPerDependency sets the transport's idle pool per host. 0 means 1024.
	MaxIdleConnsPerDependency int `json:"max_idle_conns_per_dependency"`
}
