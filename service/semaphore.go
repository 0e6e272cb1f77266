package service

import (
	"container/list"
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/prometheus/client_golang/prometheus"
)

// Semaphore is a counting semaphore bulkhead (Resilience4j's SemaphoreBulkhead): the caller's
// goroutine holds a permit for the duration of its call. Up to QueueCapacity callers may wait for
// a permit, each at most MaxWait, in FIFO order; with QueueCapacity 0 or MaxWait 0 a caller that
// finds no free permit is rejected at once with ErrFull.
//
// The fast path is one atomic add (compare-and-swap when there is waiting room) on a word that
// holds both the permits in use and the admitted count, on a cache line of its own, and allocates
// nothing. Waiting callers are kept in a list under a mutex that exists only when the pool has
// waiting room. The padding and the time account make a semaphore without waiting room 256
// bytes (BenchmarkPoolMemory: 128 KB for 500 pools, 40 KB before either).
//
// The semaphore accounts its time exactly (see Usage): the time at capacity from the crossings
// of its size (the only transitions that read the clock in Acquire and Release), the peak from
// the level each acquire returns, and the level x time integral of the permits held in Do, which
// reads the clock when its call starts and ends.
//
// A Semaphore must be created with NewSemaphore; it is safe for concurrent use.
//
// Kind semaphore (SemaphoreParams) has no parameters of its own: Size is its permits,
// QueueCapacity and MaxWait its waiting room.
type Semaphore struct {
	// Read-mostly, set by NewSemaphore (closed once by Close).
	size     int64
	queueCap int32
	maxWait  time.Duration
	name     string
	room     *waitRoom // nil when the pool has no waiting room
	closed   atomic.Bool

	_ [64]byte // keep the fields above off the hot cache line
	// state is admitted<<32 + permits in use: one add admits and counts.
	state atomic.Int64
	pk    peak
	held  integral // permits held in Do, with their level x time integral
	full  atomic.Uint64
	_     [64 - 4*8]byte

	slots fullClock // crossings of size: written only when the pool fills or stops being full
	rd    usageReader
	queue *gauge       // callers waiting, nil without waiting room
	clock func() int64 // nil: now; a test's fake clock otherwise
}

// now reads the semaphore's clock.
func (s *Semaphore) now() int64 {
	if s.clock != nil {
		return s.clock()
	}
	return now()
}

// Subtleness ahead: the state word packs two counters. The low 32 bits are the permits in use
// (never above size plus the number of callers racing, see add); the high 32 bits the admitted
// calls, wrapping after 2^32 (Stats reads them modulo 2^32, see PoolStats.Admitted).
const (
	inUseMask = 1<<32 - 1
	oneIn     = 1         // one permit taken, not counted as admitted (TryAcquire, handover)
	oneAdmit  = 1<<32 + 1 // one permit taken by an admitted call
	admitOnly = int64(1 << 32)
)

// waitRoom is the waiting room of a semaphore that has one: waiters in FIFO order and the
// counters that only waiting can move.
type waitRoom struct {
	mu      sync.Mutex
	waiters list.List // of *semWaiter
	c       PoolCounters
}

type semWaiter struct {
	ready chan struct{} // closed when a permit has been handed to this waiter
	elem  *list.Element
}

// NewSemaphore returns a semaphore with cfg.Size permits. cfg.Kind is ignored. Waiting room
// exists only when both QueueCapacity and MaxWait are > 0. It panics if cfg.Size <= 0.
func NewSemaphore(cfg PoolConfig) *Semaphore {
	if cfg.Size <= 0 {
		panic("service: semaphore size must be > 0")
	}
	s := &Semaphore{size: int64(cfg.Size), name: cfg.Name}
	if cfg.QueueCapacity > 0 && cfg.MaxWait > 0 {
		s.queueCap = int32(cfg.QueueCapacity)
		s.maxWait = cfg.MaxWait
		s.room = new(waitRoom)
		s.queue = &gauge{capacity: int64(cfg.QueueCapacity)}
	}
	return s
}

// TryAcquire takes a permit without blocking. It returns true on success; false when every
// permit is taken or callers are already waiting (it never jumps the queue), leaving the
// semaphore unchanged. TryAcquire does not count toward Stats' admitted and rejected counters:
// it is the primitive, Acquire and Do are the accounted calls.
func (s *Semaphore) TryAcquire() bool { return s.try(oneIn) }

// try takes a permit adding inc (oneIn or oneAdmit) to the state word.
func (s *Semaphore) try(inc int64) bool {
	if s.room == nil {
		return s.add(inc)
	}
	if s.queue.level() != 0 {
		return false
	}
	return s.cas(inc)
}

// add is the fast path of a semaphore without waiting room: one atomic add, undone when it went
// past the size. Subtleness ahead: a single add bounces the cache line once where a load plus
// compare-and-swap bounces it twice and retries under contention (measured at GOMAXPROCS=2:
// about 20 ns against 100 ns per acquire+release). The price is that a rejected caller's
// increment is outstanding for a few nanoseconds, so another caller racing a Release exactly at
// capacity may be rejected as it would have been a moment earlier. It never admits more than
// Size. Semaphores with waiting room use cas, which is exact, because permits are handed over to
// waiters.
//
// The level moves by ±1 steps in the order of the adds, so it crosses size exactly when an add
// lands on size (entry) and a subtraction on size-1 (exit), whoever makes them: add's undo can
// be the exit, when a Release ran while its increment was outstanding.
func (s *Semaphore) add(inc int64) bool {
	n := s.state.Add(inc) & inUseMask
	if n <= s.size {
		s.took(n)
		return true
	}
	if s.state.Add(-inc)&inUseMask == s.size-1 {
		s.freed()
	}
	return false
}

// took records a successful acquire that brought the level to n. It is small enough to inline;
// the clock is read out of line, only when the pool fills.
func (s *Semaphore) took(n int64) {
	if n > s.pk.v.Load() || n == s.size {
		s.tookMore(n)
	}
}

// tookMore records a new peak n, or that the pool reached capacity now.
//
//go:noinline
func (s *Semaphore) tookMore(n int64) {
	s.pk.raise(n)
	if n == s.size {
		s.slots.enter(s.now())
	}
}

// freed records that the pool left capacity now.
//
//go:noinline
func (s *Semaphore) freed() { s.slots.exit(s.now()) }

// cas takes a permit if one is free, ignoring waiters. The load before the compare-and-swap
// keeps a full semaphore read-only (no cache-line write per rejection).
func (s *Semaphore) cas(inc int64) bool {
	w := s.state.Load()
	for w&inUseMask < s.size {
		if s.state.CompareAndSwap(w, w+inc) {
			s.took(w&inUseMask + 1)
			return true
		}
		w = s.state.Load()
	}
	return false
}

// Acquire takes a permit, waiting for one up to MaxWait when the pool has waiting room with a
// free place. It returns nil on success. Otherwise it returns a *RejectedError wrapping ErrFull
// (no permit, no waiting room), ErrQueueFull (waiting room at capacity) or ErrWaitTimeout (waited
// MaxWait), or ctx.Err() when ctx is done first, or ErrClosed after Close; on failure the
// semaphore is left unchanged.
func (s *Semaphore) Acquire(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	if s.try(oneAdmit) {
		return nil
	}
	if s.room == nil {
		s.full.Add(1)
		return &RejectedError{Pool: s.name, Reason: outcome.ReasonFull, Err: ErrFull}
	}
	return s.wait(ctx)
}

// wait is Acquire's slow path: join the waiting room and wait for a permit to be handed over.
func (s *Semaphore) wait(ctx context.Context) error {
	r := s.room
	start := time.Now()
	r.mu.Lock()
	if int32(s.queue.level()) >= s.queueCap {
		r.mu.Unlock()
		return r.c.reject(s.name, ErrQueueFull)
	}
	w := &semWaiter{ready: make(chan struct{})}
	w.elem = r.waiters.PushBack(w)
	s.queue.inc()
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
		s.state.Add(admitOnly)
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
			s.state.Add(admitOnly)
			r.c.waited(time.Since(start))
			return nil
		}
		s.Release()
		return err
	default:
		r.waiters.Remove(w.elem)
		s.queue.dec()
		r.mu.Unlock()
	}
	r.c.waited(time.Since(start))
	if err == ErrWaitTimeout {
		return r.c.reject(s.name, ErrWaitTimeout)
	}
	return err
}

// grantLocked hands free permits to waiters in FIFO order. s.room.mu must be held.
func (s *Semaphore) grantLocked() {
	r := s.room
	for e := r.waiters.Front(); e != nil; e = r.waiters.Front() {
		if !s.cas(oneIn) {
			return
		}
		w := r.waiters.Remove(e).(*semWaiter)
		s.queue.dec()
		close(w.ready)
	}
}

// Release returns a permit, handing it to the longest waiter if there is one. It panics if more
// permits are released than were taken.
func (s *Semaphore) Release() {
	n := s.state.Add(-1) & inUseMask
	if n == s.size-1 {
		s.freed()
	} else if n == inUseMask {
		panic("service: semaphore released more than held")
	}
	if s.room != nil {
		s.handOver()
	}
}

// handOver gives freed permits to waiters, if any wait.
//
//go:noinline
func (s *Semaphore) handOver() {
	if s.queue.level() > 0 {
		s.room.mu.Lock()
		s.grantLocked()
		s.room.mu.Unlock()
	}
}

// Do runs fn on the caller's goroutine while holding a permit; see Acquire for how it waits and
// fails. It returns fn's error, or the Acquire error without running fn. It reads the clock when
// fn starts and when it returns, to account the permits' level x time integral.
func (s *Semaphore) Do(ctx context.Context, fn func(context.Context) error) error {
	if err := s.Acquire(ctx); err != nil {
		return err
	}
	s.held.add(1, s.now())
	defer s.doneDo()
	return fn(ctx)
}

func (s *Semaphore) doneDo() {
	s.held.add(-1, s.now())
	s.Release()
}

// Stats returns the semaphore's account now: Capacity is Size, InUse the permits held, Waiting
// the callers in the waiting room.
func (s *Semaphore) Stats() PoolStats { return s.account(s.now(), false) }

// Account returns the account at at (see Pool); take starts a new sampling interval.
func (s *Semaphore) Account(at time.Duration, take bool) PoolStats { return s.account(int64(at), take) }

func (s *Semaphore) account(t int64, take bool) PoolStats {
	w := s.state.Load()
	st := PoolStats{
		Name:          s.name,
		Kind:          KindSemaphore,
		Capacity:      int(s.size),
		InUse:         min(int(w&inUseMask), int(s.size)), // see add
		QueueCapacity: int(s.queueCap),
	}
	st.Slots = s.rd.read(t, &s.held, &s.slots, &s.pk, take)
	var c PoolCounters
	if s.room != nil {
		st.Waiting = s.queue.level()
		q := s.queue.usage(t, take)
		st.Queue = &q
		c.queueFull.Store(s.room.c.queueFull.Load())
		c.waitTimeout.Store(s.room.c.waitTimeout.Load())
		c.waitTotal.Store(s.room.c.waitTotal.Load())
		c.waitMax.Store(s.room.c.waitMax.Load())
	}
	c.admitted.Store(uint64(w) >> 32)
	c.full.Store(s.full.Load())
	c.fill(&st)
	return st
}

// Close makes later Acquire and Do calls fail with ErrClosed. A semaphore owns no goroutine;
// callers already waiting keep waiting for a permit or their MaxWait.
func (s *Semaphore) Close() { s.closed.Store(true) }

// KindSemaphore is a counting semaphore: the caller's goroutine holds a permit for the call. Up
// to QueueCapacity callers may wait for a permit, each at most MaxWait; MaxWait 0 rejects at once
// when no permit is free.
const KindSemaphore PoolKind = "semaphore"

var _ Pool = (*Semaphore)(nil)

func init() { RegisterPoolKind(&SemaphoreParams{}) }

// SemaphoreParams is kind semaphore: it has no parameters beyond the ones every pool has (size:
// the permits; queue and max_wait: the waiting room).
type SemaphoreParams struct{}

// Kind returns KindSemaphore.
func (*SemaphoreParams) Kind() PoolKind { return KindSemaphore }

// Check requires max_wait > 0 when the semaphore has a queue: with max_wait 0 a caller never
// waits, so the queue would stay empty.
func (*SemaphoreParams) Check(cfg PoolConfig) []FieldError {
	if cfg.QueueCapacity > 0 && cfg.MaxWait == 0 {
		return []FieldError{{Path: "max_wait", Reason: "must be > 0 for a semaphore with a queue (a semaphore with max_wait 0 never waits, so its queue would stay empty)"}}
	}
	return nil
}

// New returns NewSemaphore(cfg).
func (*SemaphoreParams) New(cfg PoolConfig) Pool { return NewSemaphore(cfg) }

// Goroutines is 0: a semaphore's calls run on their callers' goroutines.
func (*SemaphoreParams) Goroutines(PoolConfig) int { return 0 }

// String is "": a semaphore has no parameters of its own.
func (*SemaphoreParams) String() string { return "" }

// Metrics is Resilience4j's bulkhead family (TaggedBulkheadMetrics: available and max allowed
// concurrent calls), so dashboards built for Resilience4j read it unchanged, and the waiting
// room Resilience4j does not publish.
func (*SemaphoreParams) Metrics() []PoolMetric { return semaphoreMetrics }

var semaphoreMetrics = []PoolMetric{
	metricAvailable, metricMaxAllowed,
	{Name: "bulkhead_semaphore_waiting_calls", Help: "Calls waiting for a permit of a semaphore pool.",
		Type: prometheus.GaugeValue, Value: func(st PoolStats) float64 { return float64(st.Waiting) }},
	{Name: "bulkhead_semaphore_waiting_capacity", Help: "Capacity of a semaphore pool's waiting room (0: none).",
		Type: prometheus.GaugeValue, Value: func(st PoolStats) float64 { return float64(st.QueueCapacity) }},
}

// metricAvailable and metricMaxAllowed are Resilience4j's semaphore bulkhead gauges; adaptive
// pools publish them too, with the limit of the moment as the maximum.
var (
	metricAvailable = PoolMetric{Name: "resilience4j_bulkhead_available_concurrent_calls", Help: "The number of available permissions",
		Type: prometheus.GaugeValue, Value: func(st PoolStats) float64 { return float64(st.Capacity - st.InUse) }}
	metricMaxAllowed = PoolMetric{Name: "resilience4j_bulkhead_max_allowed_concurrent_calls", Help: "The maximum number of available permissions",
		Type: prometheus.GaugeValue, Value: func(st PoolStats) float64 { return float64(st.Capacity) }}
)
