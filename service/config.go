package service

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
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
	// Inbound, when non-nil, makes this an accept-fast endpoint (seed 000's "other direction",
	// see inbound.go): it answers 202 at once and processes each request later, calling Calls in
	// order under one slot of Inbound.Pool, deferring work that finds no slot. Deadline is then
	// ignored.
	Inbound *InboundConfig `json:"inbound,omitempty" yaml:"inbound,omitempty"`
}

// InboundConfig is the accept-then-defer shape of an inbound endpoint (seed 000: "take the
// webhook, acknowledge it quickly, and let the slot limit control how fast you actually process
// it"). Every zero value is documented.
type InboundConfig struct {
	// Pool names the pool (of Config.Pools) whose slots bound the processing: the inbound
	// bulkhead. The processing of one item holds one slot of it while it calls the endpoint's
	// dependencies, which then do not take a slot of their own pools. The pool may cover
	// dependencies too (webhooks sharing the lookups' pool) or none (a pool for the inbound side
	// alone). "" means no bulkhead: every item is processed at once.
	Pool string `json:"pool,omitempty"`
	// Attempts is how many times one item is tried (dispatched) before it is given up, loudly:
	// counted, listed in the snapshot and logged. 0 means DefaultInboundAttempts.
	Attempts int `json:"attempts,omitempty"`
	// RetryDelay is how long, on average, a deferred item (no slot, or its calls failed) waits
	// before it is dispatched again with its attempt counter one higher: each wait is spread over
	// [0.5, 1.5) x RetryDelay by a hash of the item's id and attempt, so that items deferred
	// together do not come back together. 0 means DefaultInboundRetryDelay.
	RetryDelay time.Duration `json:"retry_delay,omitempty"`
	// MaxBacklog bounds the items accepted and not yet finished; a request over it is answered
	// 503 rejected (reason backlog-full) so the sender keeps it and retries. 0 means
	// DefaultInboundMaxBacklog.
	MaxBacklog int `json:"max_backlog,omitempty"`
	// Dedupe turns on a dedupe set keyed on each dispatch's fingerprint (endpoint, item id and
	// attempt), the idempotency layer of seed 000's article four: a dispatch whose fingerprint was
	// seen before is dropped as a duplicate. Redeliveries of an item id are dropped; deferred
	// items are not, because their attempt counter changes the fingerprint.
	Dedupe bool `json:"dedupe,omitempty"`
	// OmitAttempt leaves the attempt counter out of the fingerprint: the seed's trap ("a
	// re-dispatched command looks identical to the original and gets dropped as a duplicate").
	// With Dedupe it makes every deferred item vanish; it exists to show that.
	OmitAttempt bool `json:"omit_attempt,omitempty"`
}

// Inbound defaults, applied where InboundConfig fields are zero.
const (
	DefaultInboundAttempts   = 20
	DefaultInboundRetryDelay = 100 * time.Millisecond
	DefaultInboundMaxBacklog = 10000
)

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

// ErrInvalidConfig is wrapped by every error Validate returns.
var ErrInvalidConfig = errors.New("invalid service config")

// ValidationError lists every problem Validate found, each naming its field
// ("pools[1].size: must be > 0"). errors.Is(err, ErrInvalidConfig) holds.
type ValidationError struct {
	Problems []string
}

func (e *ValidationError) Error() string {
	return "invalid service config: " + strings.Join(e.Problems, "; ")
}

// Is reports ErrInvalidConfig.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidConfig }

// ParseMode returns the Mode named by s ("" means shared).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeShared:
		return ModeShared, nil
	case ModeSplit, ModeNone:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: must be shared, split or none", s)
}

// ParsePoolKind returns the PoolKind named by s ("" means semaphore).
func ParsePoolKind(s string) (PoolKind, error) {
	switch PoolKind(s) {
	case "", KindSemaphore:
		return KindSemaphore, nil
	case KindWorkers:
		return KindWorkers, nil
	}
	return "", fmt.Errorf("kind %q: must be semaphore or workers", s)
}

// DefaultPools returns the pool layout seed 004 compares, for p slots in total, the given
// dependencies and the client timeout:
//
//   - shared: ONE pool named "shared" of kind workers, Size p, QueueCapacity 2p, MaxWait timeout,
//     covering every dependency. It is shaped like a server's request worker pool, which is what
//     "one pool of size P" means in a service without bulkheads: requests do not fail fast when
//     the workers are busy, they wait in the worker queue (here up to one client timeout), so a
//     dependency answering just under the timeout holds workers and makes every endpoint queue
//     behind it. The queue is bounded (2p) so that the pool never hides load in an unbounded
//     queue.
//   - split: one semaphore per dependency, named after it, Size max(1, p/2), QueueCapacity 0,
//     MaxWait 0: the "per-dependency semaphore bulkheads" that "reject quickly once full". A
//     stalled dependency takes its own p/2 permits and every further call to it is rejected at
//     once (503 full), while the other dependencies keep theirs.
//   - none: no pool.
//
// The client timeout is identical in both layouts, as the seed requires; only admission differs.
// With two dependencies both layouts hold p slots in total, so the split layout's cost (lower
// peak throughput for one dependency) is visible too.
func DefaultPools(mode Mode, p int, deps []string, timeout time.Duration) []PoolConfig {
	switch mode {
	case ModeSplit:
		pools := make([]PoolConfig, 0, len(deps))
		for _, d := range deps {
			pools = append(pools, PoolConfig{
				Name:         d,
				Kind:         KindSemaphore,
				Size:         max(1, p/2),
				Dependencies: []string{d},
			})
		}
		return pools
	case ModeNone:
		return nil
	default:
		return []PoolConfig{{
			Name:          "shared",
			Kind:          KindWorkers,
			Size:          max(1, p),
			QueueCapacity: 2 * max(1, p),
			MaxWait:       timeout,
			Dependencies:  slices.Clone(deps),
		}}
	}
}

// Validate reports every problem that would stop the service from running, as a
// *ValidationError naming each field. It does not change c.
func (c Config) Validate() error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	mode, err := ParseMode(string(c.Mode))
	if err != nil {
		add("mode: %v", err)
	}
	if c.ClientTimeout <= 0 {
		add("client_timeout: must be > 0")
	}
	if c.MaxInboundConns < 0 {
		add("max_inbound_conns: must be >= 0")
	}
	if c.MaxOutboundConns < 0 {
		add("max_outbound_conns: must be >= 0")
	}
	if c.MaxIdleConnsPerDependency < 0 {
		add("max_idle_conns_per_dependency: must be >= 0")
	}

	deps := map[string]bool{}
	if len(c.Dependencies) == 0 {
		add("dependencies: must not be empty")
	}
	for i, d := range c.Dependencies {
		f := fmt.Sprintf("dependencies[%d]", i)
		switch {
		case d.Name == "":
			add("%s.name: must not be empty", f)
		case deps[d.Name]:
			add("%s.name: %q is declared twice", f, d.Name)
		}
		deps[d.Name] = true
		if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("%s.url: %q is not an http(s) URL with a host", f, d.URL)
		}
		if b := d.Breaker; b != nil {
			if b.FailureRatio < 0 || b.FailureRatio > 1 {
				add("%s.breaker.failure_ratio: must be in [0, 1]", f)
			}
			if b.SlowCallThreshold < 0 || b.OpenTimeout < 0 || b.Interval < 0 {
				add("%s.breaker: durations must be >= 0", f)
			}
		}
	}

	paths := map[string]bool{}
	if len(c.Endpoints) == 0 {
		add("endpoints: must not be empty")
	}
	for i, e := range c.Endpoints {
		f := fmt.Sprintf("endpoints[%d]", i)
		switch {
		case !strings.HasPrefix(e.Path, "/"):
			add("%s.path: %q must start with /", f, e.Path)
		case e.Path == DebugResourcesPath || e.Path == MetricsPath || strings.HasPrefix(e.Path, "/debug/"):
			add("%s.path: %q collides with the service's own debug paths", f, e.Path)
		case paths[e.Path]:
			add("%s.path: %q is declared twice", f, e.Path)
		}
		paths[e.Path] = true
		if len(e.Calls) == 0 {
			add("%s.calls: must name at least one dependency", f)
		}
		for j, name := range e.Calls {
			if !deps[name] {
				add("%s.calls[%d]: unknown dependency %q", f, j, name)
			}
		}
		if e.Deadline != "" && e.Deadline != DeadlinePerCall && e.Deadline != DeadlineShared {
			add("%s.deadline: %q must be per-call or shared", f, e.Deadline)
		}
		if in := e.Inbound; in != nil {
			if in.Attempts < 0 || in.RetryDelay < 0 || in.MaxBacklog < 0 {
				add("%s.inbound: attempts, retry_delay and max_backlog must be >= 0", f)
			}
			if in.Pool != "" && !slices.ContainsFunc(c.Pools, func(p PoolConfig) bool { return p.Name == in.Pool }) {
				add("%s.inbound.pool: unknown pool %q", f, in.Pool)
			}
		}
	}

	covered := map[string]string{} // dependency -> pool
	names := map[string]bool{}
	for i, p := range c.Pools {
		f := fmt.Sprintf("pools[%d]", i)
		errs = append(errs, validatePool(f, p)...)
		if names[p.Name] && p.Name != "" {
			add("%s.name: %q is declared twice", f, p.Name)
		}
		names[p.Name] = true
		for j, d := range p.Dependencies {
			switch {
			case !deps[d]:
				add("%s.dependencies[%d]: unknown dependency %q", f, j, d)
			case covered[d] != "":
				add("%s.dependencies[%d]: %q is already in pool %q", f, j, d, covered[d])
			default:
				covered[d] = p.Name
			}
		}
	}
	switch mode {
	case ModeNone:
		if len(c.Pools) > 0 {
			add("pools: must be empty in mode none")
		}
	case ModeShared:
		if len(c.Pools) != 1 {
			add("pools: mode shared needs exactly one pool, got %d", len(c.Pools))
		} else if len(c.Pools[0].Dependencies) > 0 {
			for _, d := range c.Dependencies {
				if covered[d.Name] == "" && d.Name != "" {
					add("pools[0].dependencies: the shared pool must cover %q (or list none to cover all)", d.Name)
				}
			}
		}
	case ModeSplit:
		if len(c.Pools) == 0 {
			add("pools: mode split needs at least one pool")
		}
		for _, d := range c.Dependencies {
			if covered[d.Name] == "" && d.Name != "" {
				add("pools: dependency %q is in no pool (split mode covers every dependency exactly once)", d.Name)
			}
		}
		for i, p := range c.Pools {
			if len(p.Dependencies) == 0 && !c.inboundPool(p.Name) {
				add("pools[%d].dependencies: must not be empty in mode split (unless an inbound endpoint processes under it)", i)
			}
		}
	}
	if len(errs) > 0 {
		return &ValidationError{Problems: errs}
	}
	return nil
}

// validatePool checks one pool; f is the field prefix used in messages.
func validatePool(f string, p PoolConfig) []string {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if p.Name == "" {
		add("%s.name: must not be empty", f)
	} else if strings.HasPrefix(p.Name, "breaker:") || strings.ContainsAny(p.Name, " \t\r\n") {
		add("%s.name: %q must not start with breaker: nor contain spaces", f, p.Name)
	}
	kind, err := ParsePoolKind(string(p.Kind))
	if err != nil {
		add("%s.kind: %v", f, err)
	}
	if p.Size <= 0 {
		add("%s.size: must be > 0", f)
	}
	if p.QueueCapacity < 0 {
		add("%s.queue_capacity: must be >= 0", f)
	}
	if p.MaxWait < 0 {
		add("%s.max_wait: must be >= 0", f)
	}
	if kind == KindSemaphore && p.QueueCapacity > 0 && p.MaxWait == 0 {
		add("%s.max_wait: must be > 0 for a semaphore with queue_capacity > 0 (0 means never wait)", f)
	}
	return errs
}

// inboundPool reports whether an inbound endpoint processes under the pool named name.
func (c Config) inboundPool(name string) bool {
	return slices.ContainsFunc(c.Endpoints, func(e EndpointConfig) bool {
		return e.Inbound != nil && e.Inbound.Pool == name
	})
}

// Topology returns the contract view of c that the report attributes failures from: the pool
// layout, each pool's slots and members, each endpoint's dependencies and the client timeout.
func (c Config) Topology() outcome.Topology {
	t := outcome.Topology{Mode: string(c.Mode), ClientTimeout: c.ClientTimeout}
	if t.Mode == "" {
		t.Mode = outcome.ModeShared
	}
	for _, p := range c.Pools {
		kind := string(p.Kind)
		if kind == "" {
			kind = string(KindSemaphore)
		}
		t.Pools = append(t.Pools, outcome.TopologyPool{Name: p.Name, Kind: kind, Size: p.Size,
			QueueCapacity: p.QueueCapacity, MaxWait: p.MaxWait, Dependencies: p.Dependencies})
	}
	for _, e := range c.Endpoints {
		t.Endpoints = append(t.Endpoints, outcome.TopologyCall{Path: e.Path, Calls: e.Calls})
	}
	return t
}
