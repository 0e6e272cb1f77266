package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Adaptive is a bulkhead whose size is a concurrency limit that an algorithm moves as it learns
// from the calls it admits (Netflix concurrency-limits' SimpleLimiter over a Limit: AIMD,
// Gradient2, Vegas; see aimd.go, gradient2.go, vegas.go). A call is admitted while fewer calls
// than the limit are in flight and rejected at once otherwise (ErrFull, reason full): there is no
// waiting room. Each admitted call's outcome is one sample:
//
//   - success: its round-trip time (admission to return), with the calls in flight when it was
//     admitted, itself included;
//   - dropped: a timeout (ErrTimeout, context.DeadlineExceeded) or the dependency turning the
//     call away itself (HTTP 503 or 429), which loss-based algorithms back off from;
//   - ignored: any other failure (a reset, a refused connection, another status), which ends
//     too early to say anything of the time a call takes, and a call whose caller gave up.
//
// These are concurrency-limits' onSuccess, onDropped and onIgnore. The limit is the integer part
// of the algorithm's estimate, within [min_limit, size]. Its moves are accounted exactly: Slots
// is a Meter whose capacity is the limit, so the time at capacity is the time the calls in
// flight were at or above the limit of that moment and Slots.CapacityNS integrates the limit.
//
// An Adaptive must be created with NewAdaptive; it is safe for concurrent use. The algorithm runs
// under the pool's mutex, one sample at a time, as concurrency-limits' AbstractLimit.onSample is
// synchronized.
type Adaptive struct {
	name     string
	kind     PoolKind
	min, max int
	meter    *Meter
	clock    func() time.Duration
	c        PoolCounters
	closed   atomic.Bool

	mu       sync.Mutex
	alg      LimitAlgorithm
	estimate float64
	limit    int
	changes  uint64
	samples  uint64
	drops    uint64
	ignored  uint64
	rtt      time.Duration
}

var _ Pool = (*Adaptive)(nil)

// LimitAlgorithm is an adaptive concurrency limit: concurrency-limits' Limit. It is not safe for
// concurrent use; the pool serialises its calls.
type LimitAlgorithm interface {
	// Update learns from one sample and returns the new estimate of the limit.
	Update(s LimitSample) float64
	// BaseRTT returns the round-trip time the algorithm compares samples against (0 when it
	// keeps none), for the pool's account.
	BaseRTT() time.Duration
}

// LimitSample is one admitted call's outcome, as a LimitAlgorithm sees it.
type LimitSample struct {
	// RTT is the time from the call's admission to its return.
	RTT time.Duration
	// InFlight is the calls in flight when the call was admitted, itself included.
	InFlight int
	// Dropped is true for a timeout or a rejection by the dependency (see Adaptive).
	Dropped bool
}

// NewAdaptive returns an adaptive pool named cfg.Name of kind cfg.Kind whose limit alg moves,
// starting at the integer part of initial, kept within [minLimit, cfg.Size], reading the clock
// clock (nil: Now) for round-trip times. It panics (misuse) if cfg.Size <= 0, minLimit < 1 or
// minLimit > cfg.Size. cfg's QueueCapacity and MaxWait are ignored: an adaptive pool does not
// queue.
func NewAdaptive(cfg PoolConfig, alg LimitAlgorithm, initial float64, minLimit int, clock func() time.Duration) *Adaptive {
	if cfg.Size <= 0 || minLimit < 1 || minLimit > cfg.Size {
		panic("service: adaptive pool needs 1 <= min limit <= size")
	}
	if clock == nil {
		clock = Now
	}
	p := &Adaptive{name: cfg.Name, kind: cfg.Kind, min: minLimit, max: cfg.Size, clock: clock, alg: alg, estimate: initial}
	p.limit = p.clamp(initial)
	p.meter = NewMeter(p.limit, clock)
	return p
}

func (p *Adaptive) clamp(estimate float64) int {
	return min(max(int(estimate), p.min), p.max)
}

// Do runs fn on the caller's goroutine if fewer calls than the limit are in flight, and returns
// fn's error; otherwise it returns a *RejectedError wrapping ErrFull at once, without running
// fn. After Close it returns ErrClosed. fn's outcome is a sample for the algorithm, which may
// move the limit before Do returns.
func (p *Adaptive) Do(ctx context.Context, fn func(context.Context) error) error {
	if p.closed.Load() {
		return ErrClosed
	}
	inFlight, ok := p.meter.TryAdd()
	if !ok {
		return p.c.reject(p.name, ErrFull)
	}
	defer p.meter.Add(-1)
	p.c.admitted.Add(1)
	start := p.clock()
	err := fn(ctx)
	p.learn(LimitSample{RTT: p.clock() - start, InFlight: inFlight}, err)
	return err
}

// learn gives the algorithm the sample of a call that ended with err, or counts it as ignored.
func (p *Adaptive) learn(s LimitSample, err error) {
	counted, dropped := sampleOf(err)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !counted {
		p.ignored++
		return
	}
	s.Dropped = dropped
	p.samples++
	if dropped {
		p.drops++
	}
	p.rtt = s.RTT
	p.estimate = p.alg.Update(s)
	if l := p.clamp(p.estimate); l != p.limit {
		p.limit = l
		p.changes++
		p.meter.SetCapacity(l)
	}
}

// sampleOf says whether a call that ended with err is a sample, and whether it was dropped (see
// Adaptive). A caller that gave up (context.Canceled) is ignored like any other failure.
func sampleOf(err error) (counted, dropped bool) {
	if err == nil {
		return true, false // before the errors.As below, whose target escapes: no allocation
	}
	if errors.Is(err, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		return true, true
	}
	var se *StatusError
	if errors.As(err, &se) && (se.Code == http.StatusServiceUnavailable || se.Code == http.StatusTooManyRequests) {
		return true, true
	}
	return false, false
}

// Stats returns the pool's account now.
func (p *Adaptive) Stats() PoolStats { return p.Account(p.clock(), false) }

// Account returns the account at at (see Pool): Capacity is the limit now, InUse the calls in
// flight, Slots their exact account against the limit, Limit the algorithm's state. take starts
// a new sampling interval.
func (p *Adaptive) Account(at time.Duration, take bool) PoolStats {
	p.mu.Lock()
	ls := &LimitStats{Min: p.min, Max: p.max, Estimate: p.estimate, Changes: p.changes, Samples: p.samples,
		Drops: p.drops, Ignored: p.ignored, RTT: p.rtt, BaseRTT: p.alg.BaseRTT()}
	limit := p.limit
	p.mu.Unlock()
	st := PoolStats{Name: p.name, Kind: p.kind, Capacity: limit, InUse: p.meter.Level(),
		Slots: p.meter.Usage(at, take), Limit: ls}
	p.c.fill(&st)
	return st
}

// Close makes later calls to Do return ErrClosed. An adaptive pool owns no goroutine.
func (p *Adaptive) Close() { p.closed.Store(true) }

// checkAdaptive checks what every adaptive kind's parameters share: no waiting room, and the
// bounds of the limit (initial in [min, size] once defaulted, min in [0, size]).
func checkAdaptive(cfg PoolConfig, initial, minLimit int) []FieldError {
	var ps []FieldError
	if cfg.QueueCapacity != 0 {
		ps = append(ps, FieldError{Path: "queue", Reason: "an adaptive pool rejects at once when its limit is reached: queue must be 0"})
	}
	if cfg.MaxWait != 0 {
		ps = append(ps, FieldError{Path: "max_wait", Reason: "an adaptive pool does not wait for a slot: max_wait must be 0"})
	}
	switch {
	case minLimit < 0:
		ps = append(ps, FieldError{Path: "min_limit", Reason: fmt.Sprintf("must be >= 0 (0 = 1), got %d", minLimit)})
	case minLimit > cfg.Size:
		ps = append(ps, FieldError{Path: "min_limit", Reason: fmt.Sprintf("must be at most size (%d), got %d", cfg.Size, minLimit)})
	}
	switch {
	case initial < 0:
		ps = append(ps, FieldError{Path: "initial_limit", Reason: fmt.Sprintf("must be >= 0 (0 = 20, at most size), got %d", initial)})
	case initial > cfg.Size:
		ps = append(ps, FieldError{Path: "initial_limit", Reason: fmt.Sprintf("must be at most size (%d), got %d", cfg.Size, initial)})
	case initial != 0 && initial < minLimit:
		ps = append(ps, FieldError{Path: "initial_limit", Reason: fmt.Sprintf("must be at least min_limit (%d), got %d", minLimit, initial)})
	}
	return ps
}

// adaptiveBounds returns the initial and minimum limit with their defaults: initial 0 is
// concurrency-limits' default of 20, at most size and at least the minimum; min 0 is 1.
func adaptiveBounds(cfg PoolConfig, initial, minLimit int) (int, int) {
	if minLimit == 0 {
		minLimit = 1
	}
	if initial == 0 {
		initial = max(min(20, cfg.Size), minLimit)
	}
	return initial, minLimit
}

// adaptiveMetrics is the metric family of every adaptive kind: Resilience4j's semaphore gauges
// with the limit of the moment as the maximum (so a scraper that reads Resilience4j reads the
// limit as the pool's capacity), and the limit's own state.
var adaptiveMetrics = func() []PoolMetric {
	limit := func(v func(*LimitStats) float64) func(PoolStats) float64 {
		return func(st PoolStats) float64 {
			if st.Limit == nil {
				return 0
			}
			return v(st.Limit)
		}
	}
	g, c := prometheus.GaugeValue, prometheus.CounterValue
	return []PoolMetric{
		metricAvailable, metricMaxAllowed,
		{Name: "bulkhead_pool_limit", Help: "An adaptive pool's concurrency limit now: the calls it admits at once.",
			Type: g, Value: func(st PoolStats) float64 { return float64(st.Capacity) }},
		{Name: "bulkhead_pool_limit_estimate", Help: "An adaptive pool's limit as its algorithm estimates it (the limit is its integer part, within the bounds).",
			Type: g, Value: limit(func(l *LimitStats) float64 { return l.Estimate })},
		{Name: "bulkhead_pool_limit_min", Help: "The lowest limit an adaptive pool may take.",
			Type: g, Value: limit(func(l *LimitStats) float64 { return float64(l.Min) })},
		{Name: "bulkhead_pool_limit_max", Help: "The highest limit an adaptive pool may take (its size).",
			Type: g, Value: limit(func(l *LimitStats) float64 { return float64(l.Max) })},
		{Name: "bulkhead_pool_limit_changes_total", Help: "Times an adaptive pool's limit changed.",
			Type: c, Value: limit(func(l *LimitStats) float64 { return float64(l.Changes) })},
		{Name: "bulkhead_pool_limit_samples_total", Help: "Calls an adaptive pool's algorithm learned from.",
			Type: c, Value: limit(func(l *LimitStats) float64 { return float64(l.Samples) })},
		{Name: "bulkhead_pool_limit_drops_total", Help: "Samples that were drops: timeouts, or rejections by the dependency (503, 429).",
			Type: c, Value: limit(func(l *LimitStats) float64 { return float64(l.Drops) })},
		{Name: "bulkhead_pool_limit_ignored_total", Help: "Calls an adaptive pool's algorithm did not learn from (other failures).",
			Type: c, Value: limit(func(l *LimitStats) float64 { return float64(l.Ignored) })},
		{Name: "bulkhead_pool_limit_rtt_seconds", Help: "The round-trip time of an adaptive pool's last sample.",
			Type: g, Value: limit(func(l *LimitStats) float64 { return l.RTT.Seconds() })},
		{Name: "bulkhead_pool_limit_base_rtt_seconds", Help: "The round-trip time an adaptive pool's algorithm compares samples against (0: none).",
			Type: g, Value: limit(func(l *LimitStats) float64 { return l.BaseRTT.Seconds() })},
	}
}()

// or returns v, or def when v is zero.
func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
