package service

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// Pool is one bulkhead: it admits a bounded number of concurrent calls and turns the rest away
// with a *RejectedError. Each kind lives in its own file (semaphore.go, workers.go, aimd.go,
// gradient2.go, vegas.go) behind the registry of poolkind.go; a kind can live in another
// package, since everything a pool reports is built from exported accounting (Meter,
// PoolCounters, Usage).
type Pool interface {
	// Do runs fn once a slot is free and returns fn's error. It blocks while the call waits for a
	// slot (bounded by the pool's waiting room and MaxWait) and while fn runs. When no slot can be
	// had it returns a *RejectedError wrapping ErrFull, ErrQueueFull or ErrWaitTimeout without
	// running fn. When ctx is done while waiting it returns ctx.Err() and leaves the pool as it
	// was. fn receives ctx (or a context derived from it) and must honour its cancellation.
	Do(ctx context.Context, fn func(context.Context) error) error
	// Account returns the pool's account at at, a reading of Now shared by every resource of one
	// snapshot (atomic loads and short critical sections only; it does not wait for calls).
	// take starts a new sampling interval: it resets the peaks and first times at capacity that
	// Service.Sample reports per interval; only the service's one sampler passes true.
	Account(at time.Duration, take bool) PoolStats
	// Close makes later calls to Do return ErrClosed and releases the pool's goroutines, if it
	// has any (a Workers pool blocks until its workers have exited; a Semaphore has none).
	Close()
}

// Sentinel errors of a rejected call. A pool returns them wrapped in a *RejectedError naming the
// pool; check them with errors.Is.
var (
	// ErrFull: every slot is taken and there is no waiting room (QueueCapacity 0 or, for a
	// semaphore, MaxWait 0).
	ErrFull = errors.New("bulkhead full")
	// ErrQueueFull: every slot is taken and the waiting room is at capacity.
	ErrQueueFull = errors.New("bulkhead queue full")
	// ErrWaitTimeout: the call waited MaxWait for a slot and none came.
	ErrWaitTimeout = errors.New("bulkhead wait timed out")
	// ErrClosed: the pool was closed.
	ErrClosed = errors.New("bulkhead closed")
)

// RejectedError is a call turned away by a pool or by an open circuit breaker. Pool is the pool
// name (or "breaker:<dependency>"), Reason one of the Reason* constants, Err the sentinel.
type RejectedError struct {
	Pool   string
	Reason string
	Err    error
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("pool %s rejected the call (%s): %v", e.Pool, e.Reason, e.Err)
}

// Unwrap returns the sentinel, so errors.Is(err, ErrFull) works.
func (e *RejectedError) Unwrap() error { return e.Err }

// NewPool builds the pool described by cfg with its kind's constructor (Kind "" is
// DefaultPoolKind). It returns a *ValidationError naming the field when cfg cannot run, an
// unknown kind included (see Config.Validate).
func NewPool(cfg PoolConfig) (Pool, error) {
	if problems := validatePool("pool", cfg); len(problems) > 0 {
		return nil, &ValidationError{Problems: problems}
	}
	cfg = cfg.WithDefaults()
	cfg.Params = cfg.params()
	return cfg.Params.New(cfg), nil
}

// PoolCounters is the part of a pool's account every kind keeps the same way: admissions,
// rejections by reason and the time calls waited for a slot. Plain atomics, no lock; the zero
// value is ready to use.
type PoolCounters struct {
	admitted    atomic.Uint64
	full        atomic.Uint64
	queueFull   atomic.Uint64
	waitTimeout atomic.Uint64
	waitTotal   atomic.Int64 // ns
	waitMax     atomic.Int64 // ns
}

// Admit counts one admitted call.
func (c *PoolCounters) Admit() { c.admitted.Add(1) }

// Reject counts a rejection of a call by the pool named pool and returns the *RejectedError for
// it: sentinel is ErrFull, ErrQueueFull or ErrWaitTimeout.
func (c *PoolCounters) Reject(pool string, sentinel error) error { return c.reject(pool, sentinel) }

// Waited records the time one call spent waiting for a slot (admitted or not).
func (c *PoolCounters) Waited(d time.Duration) { c.waited(d) }

// Fill writes the counters into st (Admitted, Rejected, WaitTotal, WaitMax).
func (c *PoolCounters) Fill(st *PoolStats) { c.fill(st) }

// reject counts a rejection and returns the error for it.
func (c *PoolCounters) reject(pool string, sentinel error) error {
	reason := outcome.ReasonFull
	switch sentinel {
	case ErrFull:
		c.full.Add(1)
	case ErrQueueFull:
		c.queueFull.Add(1)
		reason = outcome.ReasonQueueFull
	case ErrWaitTimeout:
		c.waitTimeout.Add(1)
		reason = outcome.ReasonWaitTimeout
	}
	return &RejectedError{Pool: pool, Reason: reason, Err: sentinel}
}

// waited records the time one call spent waiting for a slot (admitted or not).
func (c *PoolCounters) waited(d time.Duration) {
	n := int64(d)
	c.waitTotal.Add(n)
	for {
		m := c.waitMax.Load()
		if n <= m || c.waitMax.CompareAndSwap(m, n) {
			return
		}
	}
}

func (c *PoolCounters) fill(st *PoolStats) {
	st.Admitted = c.admitted.Load()
	st.Rejected = map[string]uint64{
		outcome.ReasonFull:        c.full.Load(),
		outcome.ReasonQueueFull:   c.queueFull.Load(),
		outcome.ReasonWaitTimeout: c.waitTimeout.Load(),
	}
	st.WaitTotal = time.Duration(c.waitTotal.Load())
	st.WaitMax = time.Duration(c.waitMax.Load())
}
