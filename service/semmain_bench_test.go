package service

// This file is a benchmark peer, not code under test: the semaphore as it was on main before the
// exact accounting and the cache-line layout (issue 11 item 1, issue 12 item 5), kept verbatim
// under another name so BenchmarkSemaphore can report before and after in one run, as x/sync's
// semaphore_bench_test.go keeps semChan.

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

type semMain struct {
	inUse    atomic.Int32
	waiting  atomic.Int32
	size     int32
	queueCap int32
	maxWait  time.Duration
	name     string
	closed   atomic.Bool
	admitted atomic.Uint64
	full     atomic.Uint64
	room     *waitRoom // nil when the pool has no waiting room
}

// newSemMain returns a semaphore with cfg.Size permits. cfg.Kind is ignored. Waiting room
// exists only when both QueueCapacity and MaxWait are > 0. It panics if cfg.Size <= 0.
func newSemMain(cfg PoolConfig) *semMain {
	if cfg.Size <= 0 {
		panic("service: semaphore size must be > 0")
	}
	s := &semMain{size: int32(cfg.Size), name: cfg.Name}
	if cfg.QueueCapacity > 0 && cfg.MaxWait > 0 {
		s.queueCap = int32(cfg.QueueCapacity)
		s.maxWait = cfg.MaxWait
		s.room = new(waitRoom)
	}
	return s
}

// TryAcquire takes a permit without blocking. It returns true on success; false when every
// permit is taken or callers are already waiting (it never jumps the queue), leaving the
// semaphore unchanged. TryAcquire does not count toward Stats' admitted and rejected counters:
// it is the primitive, Acquire and Do are the accounted calls.
func (s *semMain) TryAcquire() bool {
	if s.room == nil {
		return s.add()
	}
	if s.waiting.Load() != 0 {
		return false
	}
	return s.cas()
}

// add is the fast path of a semaphore without waiting room: one atomic add, undone when it went
// past the size. Subtleness ahead: a single add bounces the cache line once where a load plus
// compare-and-swap bounces it twice and retries under contention (measured at GOMAXPROCS=2:
// about 20 ns against 100 ns per acquire+release). The price is that a rejected caller's
// increment is outstanding for a few nanoseconds, so another caller racing a Release exactly at
// capacity may be rejected as it would have been a moment earlier. It never admits more than
// Size. semMains with waiting room use cas, which is exact, because permits are handed over to
// waiters.
func (s *semMain) add() bool {
	if s.inUse.Add(1) <= s.size {
		return true
	}
	s.inUse.Add(-1)
	return false
}

// cas takes a permit if one is free, ignoring waiters. The load before the compare-and-swap
// keeps a full semaphore read-only (no cache-line write per rejection).
func (s *semMain) cas() bool {
	n := s.inUse.Load()
	for n < s.size {
		if s.inUse.CompareAndSwap(n, n+1) {
			return true
		}
		n = s.inUse.Load()
	}
	return false
}

// Acquire takes a permit, waiting for one up to MaxWait when the pool has waiting room with a
// free place. It returns nil on success. Otherwise it returns a *RejectedError wrapping ErrFull
// (no permit, no waiting room), ErrQueueFull (waiting room at capacity) or ErrWaitTimeout (waited
// MaxWait), or ctx.Err() when ctx is done first, or ErrClosed after Close; on failure the
// semaphore is left unchanged.
func (s *semMain) Acquire(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.TryAcquire() {
		s.admitted.Add(1)
		return nil
	}
	if s.room == nil {
		s.full.Add(1)
		return &RejectedError{Pool: s.name, Reason: outcome.ReasonFull, Err: ErrFull}
	}
	return s.wait(ctx)
}

// wait is Acquire's slow path: join the waiting room and wait for a permit to be handed over.
func (s *semMain) wait(ctx context.Context) error {
	r := s.room
	start := time.Now()
	r.mu.Lock()
	if s.waiting.Load() >= s.queueCap {
		r.mu.Unlock()
		return r.c.reject(s.name, ErrQueueFull)
	}
	w := &semWaiter{ready: make(chan struct{})}
	w.elem = r.waiters.PushBack(w)
	s.waiting.Add(1)
	// Subtleness ahead: a Release may have run between our failed TryAcquire and the waiting
	// count going up, and seen no waiter. Granting here closes that gap: either Release sees
	// waiting > 0 and grants, or we see the permit it freed (both use sequentially consistent
	// atomics).
	s.grantLocked()
	r.mu.Unlock()

	timer := time.NewTimer(s.maxWait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		s.admitted.Add(1)
		r.c.waited(time.Since(start))
		return nil
	case <-timer.C:
		err = ErrWaitTimeout
	case <-ctx.Done():
		err = ctx.Err()
	}
	r.mu.Lock()
	select {
	case <-w.ready:
		// A permit was handed over just as we gave up.
		r.mu.Unlock()
		if err == ErrWaitTimeout {
			s.admitted.Add(1)
			r.c.waited(time.Since(start))
			return nil
		}
		s.Release()
		return err
	default:
		r.waiters.Remove(w.elem)
		s.waiting.Add(-1)
		r.mu.Unlock()
	}
	r.c.waited(time.Since(start))
	if err == ErrWaitTimeout {
		return r.c.reject(s.name, ErrWaitTimeout)
	}
	return err
}

// grantLocked hands free permits to waiters in FIFO order. s.room.mu must be held.
func (s *semMain) grantLocked() {
	r := s.room
	for e := r.waiters.Front(); e != nil; e = r.waiters.Front() {
		if !s.cas() {
			return
		}
		w := r.waiters.Remove(e).(*semWaiter)
		s.waiting.Add(-1)
		close(w.ready)
	}
}

// Release returns a permit, handing it to the longest waiter if there is one. It panics if more
// permits are released than were taken.
func (s *semMain) Release() {
	if s.inUse.Add(-1) < 0 {
		panic("service: semaphore released more than held")
	}
	if s.room != nil && s.waiting.Load() > 0 {
		s.room.mu.Lock()
		s.grantLocked()
		s.room.mu.Unlock()
	}
}

// Do runs fn on the caller's goroutine while holding a permit; see Acquire for how it waits and
// fails. It returns fn's error, or the Acquire error without running fn.
func (s *semMain) Do(ctx context.Context, fn func(context.Context) error) error {
	if err := s.Acquire(ctx); err != nil {
		return err
	}
	defer s.Release()
	return fn(ctx)
}

// Stats returns the semaphore's account: Capacity is Size, InUse the permits held, Waiting the
// callers in the waiting room.
func (s *semMain) Stats() PoolStats {
	st := PoolStats{
		Name:          s.name,
		Kind:          KindSemaphore,
		Capacity:      int(s.size),
		InUse:         min(int(s.inUse.Load()), int(s.size)), // see add
		Waiting:       int(s.waiting.Load()),
		QueueCapacity: int(s.queueCap),
	}
	var c PoolCounters
	if s.room != nil {
		c.queueFull.Store(s.room.c.queueFull.Load())
		c.waitTimeout.Store(s.room.c.waitTimeout.Load())
		c.waitTotal.Store(s.room.c.waitTotal.Load())
		c.waitMax.Store(s.room.c.waitMax.Load())
	}
	c.admitted.Store(s.admitted.Load())
	c.full.Store(s.full.Load())
	c.fill(&st)
	return st
}

// Close makes later Acquire and Do calls fail with ErrClosed. A semaphore owns no goroutine;
// callers already waiting keep waiting for a permit or their MaxWait.
func (s *semMain) Close() { s.closed.Store(true) }
