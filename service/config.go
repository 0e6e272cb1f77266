package service

import (
	"fmt"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

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

// PoolConfig describes one pool. Every field is explicit: there is no unbounded queue. The yaml
// keys are the ones a scenario file writes (queue, not queue_capacity); the json keys are what a
// run records. In YAML and JSON a pool is one flat mapping: the fields below, then the keys of
// its kind's parameters (see PoolParams).
type PoolConfig struct {
	// Name identifies the pool in headers, metrics and snapshots ("shared", "A", ...).
	Name string `json:"name" yaml:"name" scenario:"required"`
	// Kind is a registered pool kind (see PoolKinds and docs/pools.md).
	// The zero value means DefaultPoolKind (semaphore), or Params' kind when Params is set.
	Kind PoolKind `json:"kind" yaml:"kind"`
	// Size bounds the calls the pool runs at once, in [1, MaxPoolSize]: the permits of a
	// semaphore, the worker goroutines of a workers pool, the largest limit of an adaptive one.
	Size int `json:"size" yaml:"size" scenario:"required"`
	// QueueCapacity bounds the callers waiting for a permit (semaphore) or the queued tasks
	// (workers), at most MaxQueueCapacity. 0 means no waiting room: reject as soon as every slot
	// is taken.
	QueueCapacity int `json:"queue_capacity" yaml:"queue"`
	// MaxWait bounds the time one call may wait for a slot. For semaphores 0 means do not wait.
	// For workers 0 means a queued task waits until a worker takes it (bounded by the queue and by
	// the inbound request's context).
	MaxWait time.Duration `json:"max_wait" yaml:"max_wait"`
	// Dependencies lists the dependency names whose calls take a slot from this pool.
	Dependencies []string `json:"dependencies" yaml:"dependencies" scenario:"required"`
	// Params are the kind's own parameters (a *Gradient2Params for kind gradient2). nil means
	// the kind's zero parameters (see WithDefaults); a kind this build does not know, read from
	// a manifest written by another version, keeps nil.
	Params PoolParams `json:"-" yaml:"-"`
}

// BreakerConfig turns on a circuit breaker (sony/gobreaker) in front of one dependency.
type BreakerConfig struct {
	// SlowCallThreshold counts a successful call slower than this as a failure (a dependency that
	// answers 200, slowly, is as bad as one that fails). 0 means only errors count.
	SlowCallThreshold time.Duration `json:"slow_call_threshold" yaml:"slow_call_threshold"`
	// MinCalls is the number of calls in the current window before the breaker may trip; MinCalls
	// consecutive failures trip it whatever the window's earlier counts (a failure ratio of 1 over
	// the last MinCalls calls). 0 means 10.
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
	// Name identifies the dependency ("A", "partner-017"); see ValidName.
	Name string `json:"name" yaml:"name" scenario:"required"`
	// URL is the base URL the service calls (normally a Toxiproxy listener in front of the
	// dependency). The service issues GET URL + "/". A scenario file does not write it: the
	// runner fills it in.
	URL string `json:"url" yaml:"url,omitempty" scenario:"-"`
	// Breaker, when non-nil, puts a circuit breaker in front of this dependency's calls.
	Breaker *BreakerConfig `json:"breaker,omitempty" yaml:"breaker,omitempty"`
}

// Deadline says how an endpoint that calls several dependencies budgets its waits.
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
	// Path is the inbound path ("/a"): a clean path the router takes literally (see Validate).
	Path string `json:"path" yaml:"path" scenario:"required"`
	// Calls lists the dependencies called for each request. With more than one, the calls are
	// started concurrently and their results collected in order, budgeted by Deadline.
	Calls []string `json:"calls" yaml:"calls" scenario:"required"`
	// Deadline applies when Calls has more than one entry. The zero value means per-call.
	Deadline Deadline `json:"deadline,omitempty" yaml:"deadline,omitempty"`
	// Inbound, when non-nil, makes this an accept-fast endpoint (the "other direction", see
	// inbound.go): it answers 202 at once and processes each request later, calling Calls in
	// order under one slot of Inbound.Pool, deferring work that finds no slot. Deadline is then
	// ignored.
	Inbound *InboundConfig `json:"inbound,omitempty" yaml:"inbound,omitempty"`
}

// InboundConfig is the accept-then-defer shape of an inbound endpoint: take the request (a
// webhook), acknowledge it quickly, and let the slot limit control how fast it is actually
// processed. Every zero value is documented.
type InboundConfig struct {
	// Pool names the pool (of Config.Pools) whose slots bound the processing: the inbound
	// bulkhead. The processing of one item holds one slot of it while it calls the endpoint's
	// dependencies, which then do not take a slot of their own pools. The pool may cover
	// dependencies too (webhooks sharing the lookups' pool) or none (a pool for the inbound side
	// alone). "" means no bulkhead: every item is processed at once.
	Pool string `json:"pool,omitempty" yaml:"pool,omitempty" scenario:"-"`
	// Attempts is how many times one item is tried (dispatched) before it is given up, loudly:
	// counted, listed in the snapshot and logged. 0 means DefaultInboundAttempts.
	Attempts int `json:"attempts,omitempty" yaml:"attempts,omitempty"`
	// RetryDelay is how long, on average, a deferred item (no slot, or its calls failed) waits
	// before it is dispatched again with its attempt counter one higher: each wait is spread over
	// [0.5, 1.5) x RetryDelay by a hash of the item's id and attempt, so that items deferred
	// together do not come back together. 0 means DefaultInboundRetryDelay.
	RetryDelay time.Duration `json:"retry_delay,omitempty" yaml:"retry_delay,omitempty"`
	// MaxBacklog bounds the items accepted and not yet finished; a request over it is answered
	// 503 rejected (reason backlog-full) so the sender keeps it and retries. 0 means
	// DefaultInboundMaxBacklog.
	MaxBacklog int `json:"max_backlog,omitempty" yaml:"max_backlog,omitempty"`
	// Dedupe turns on a dedupe set keyed on each dispatch's fingerprint (endpoint, item id and
	// attempt), an idempotency layer: a dispatch whose fingerprint was
	// seen before is dropped as a duplicate. Redeliveries of an item id are dropped; deferred
	// items are not, because their attempt counter changes the fingerprint.
	Dedupe bool `json:"dedupe,omitempty" yaml:"dedupe,omitempty"`
	// OmitAttempt leaves the attempt counter out of the fingerprint: the known trap ("a
	// re-dispatched command looks identical to the original and gets dropped as a duplicate").
	// With Dedupe it makes every deferred item vanish; it exists to show that.
	OmitAttempt bool `json:"omit_attempt,omitempty" yaml:"omit_attempt,omitempty"`
}

// Inbound defaults, applied where InboundConfig fields are zero.
const (
	DefaultInboundAttempts   = 20
	DefaultInboundRetryDelay = 100 * time.Millisecond
	DefaultInboundMaxBacklog = 10000
)

// Config is the whole service. The zero values are documented per field; Validate reports
// anything that cannot run, naming each field by the path of its yaml keys ("pools[1].size").
type Config struct {
	// Mode is shared, split or none. The zero value means shared.
	Mode Mode `json:"mode" yaml:"mode"`
	// Pools lists the pools. In shared mode exactly one pool covering every dependency; in split
	// mode one or more pools that together cover every dependency exactly once; in none mode empty.
	Pools []PoolConfig `json:"pools" yaml:"pools"`
	// Dependencies lists every dependency the endpoints call.
	Dependencies []DependencyConfig `json:"dependencies" yaml:"dependencies"`
	// Endpoints lists the inbound paths.
	Endpoints []EndpointConfig `json:"endpoints" yaml:"endpoints"`
	// ClientTimeout bounds each dependency call (connect to last byte), identical in every
	// configuration. Must be > 0 and at most MaxDuration.
	ClientTimeout time.Duration `json:"client_timeout" yaml:"client_timeout"`
	// MaxInboundConns caps concurrent inbound connections (netutil.LimitListener style). 0 = no cap.
	MaxInboundConns int `json:"max_inbound_conns" yaml:"max_inbound_conns,omitempty"`
	// MaxOutboundConns caps connections to all dependencies together. 0 = no cap.
	MaxOutboundConns int `json:"max_outbound_conns" yaml:"max_outbound_conns,omitempty"`
	// MaxIdleConnsPerDependency sets the transport's idle pool per host. 0 means 1024.
	MaxIdleConnsPerDependency int `json:"max_idle_conns_per_dependency" yaml:"max_idle_conns_per_dependency,omitempty"`
}

// Defaults applied where a Config field is zero.
const (
	// DefaultMaxIdleConnsPerDependency is the idle connection pool per dependency. The
	// net/http default of 2 collapses at a few thousand requests per second: every extra
	// concurrent call dials a new connection and closes it afterwards.
	DefaultMaxIdleConnsPerDependency = 1024
	// DebugResourcesPath serves the Snapshot as JSON.
	DebugResourcesPath = "/debug/resources"
	// MetricsPath serves Prometheus metrics.
	MetricsPath = "/metrics"
)

// WithURLs returns c with every dependency's URL taken from urls, by name (a run plans the
// config with placeholders and fills the proxies' addresses once they listen). The result shares
// no dependency slice with c. It returns an error naming the first dependency urls has no URL
// for.
func (c Config) WithURLs(urls map[string]string) (Config, error) {
	deps := make([]DependencyConfig, len(c.Dependencies))
	for i, d := range c.Dependencies {
		u, ok := urls[d.Name]
		if !ok || u == "" {
			return Config{}, fmt.Errorf("dependency %q: no url", d.Name)
		}
		d.URL = u
		deps[i] = d
	}
	c.Dependencies = deps
	return c, nil
}

// Topology returns the contract view of c that the report attributes failures from: the pool
// layout, each pool's slots and members, each endpoint's dependencies and the client timeout.
func (c Config) Topology() outcome.Topology {
	t := outcome.Topology{Mode: string(c.Mode), ClientTimeout: c.ClientTimeout}
	if t.Mode == "" {
		t.Mode = outcome.ModeShared
	}
	for _, p := range c.Pools {
		p = p.WithDefaults()
		t.Pools = append(t.Pools, outcome.TopologyPool{Name: p.Name, Kind: string(p.Kind), Size: p.Size,
			QueueCapacity: p.QueueCapacity, MaxWait: p.MaxWait, Dependencies: p.Dependencies,
			Goroutines: PoolGoroutines(p)})
	}
	for _, e := range c.Endpoints {
		t.Endpoints = append(t.Endpoints, outcome.TopologyCall{Path: e.Path, Calls: e.Calls})
	}
	return t
}
