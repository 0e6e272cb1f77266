package service

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Workers is a thread-pool bulkhead (Resilience4j's ThreadPoolBulkhead): Size worker goroutines
// take calls from a bounded FIFO queue of QueueCapacity tasks. A call that finds the queue full
// is rejected at once: ErrQueueFull, or ErrFull when QueueCapacity is 0 and every worker is busy.
// A task that waited in the queue longer than MaxWait (when MaxWait > 0) is not run and fails with
// ErrWaitTimeout. The caller blocks until its task has run, or gives up on its ctx.
//
// This is the shape of a server's request worker pool: a slow dependency keeps workers busy and
// every other call waits behind it in the same queue.
//
// All Size workers are started up front and live until Close, as a Java thread pool's core
// threads do once started: the pool owns its goroutines whether or not calls come (seed 003's
// point about thread-pool bulkheads stays measurable). A call goes to the worker that went idle
// last (a stack of idle workers, as fasthttp's worker pool keeps), not to the one idle longest:
// which worker runs a call changes nothing a caller sees, but a pool whose calls never overlap
// keeps reusing one worker, whose stack has grown to the depth of an HTTP call, while the others
// keep the small stack they started with. Memory then grows with the concurrency that was used,
// not with Size (the partners scenario: 20 workers per partner, at most one or two ever busy).
//
// A Workers must be created with NewWorkers and stopped with Close; it is safe for concurrent use.
//
// Kind workers (WorkersParams) has no parameters of its own: Size is its workers, QueueCapacity
// its queue, MaxWait the longest a task may wait in it.
type Workers struct {
	name     string
	size     int
	queueCap int
	maxWait  time.Duration
	// mu guards idle and the hand-over between the queue and idle workers: a task is queued only
	// when no worker is idle, and a worker goes idle only when the queue is empty, so a queued
	// task never waits while a worker is idle.
	mu   sync.Mutex
	idle []*worker // idle workers, the one that went idle last at the end
	// tasks is the FIFO queue of tasks no worker was idle for. It holds Size+QueueCapacity so
	// that a send under mu never blocks (admission keeps at most that many tasks accepted).
	tasks  chan *task
	quit   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	closed atomic.Bool
	// busy and queued are the workers running a task and the tasks in the queue, with their exact
	// time accounts (a task takes microseconds to hand over, a clock read is nothing next to it).
	busy   gauge
	queued gauge
	// accepted counts tasks accepted and not yet finished or discarded (busy + queued + handed to
	// a worker that has not started it, including abandoned tasks still queued). Admission is a
	// compare-and-swap on it against Size+QueueCapacity, so a call is rejected exactly when every
	// worker is busy and the queue is full, never because a worker had not yet taken its task.
	accepted atomic.Int32
	c        PoolCounters
}

// Task states. A task moves from queued to running (a worker took it) or to abandoned (its caller
// gave up first); whichever compare-and-swap wins decides.
const (
	taskQueued int32 = iota
	taskRunning
	taskAbandoned
)

// worker is one worker goroutine's mailbox: an idle worker waits on it for the next task.
type worker struct {
	next chan *task // capacity 1: the one task handed to this worker when it was taken off idle
}

type task struct {
	ctx   context.Context
	fn    func(context.Context) error
	enq   time.Time
	state atomic.Int32
	done  chan struct{} // closed by the worker once err is set
	err   error
}

// NewWorkers starts cfg.Size worker goroutines behind a queue of cfg.QueueCapacity tasks.
// cfg.Kind is ignored. It panics if cfg.Size <= 0 or cfg.QueueCapacity < 0.
func NewWorkers(cfg PoolConfig) *Workers {
	if cfg.Size <= 0 || cfg.QueueCapacity < 0 {
		panic("service: workers need size > 0 and queue capacity >= 0")
	}
	p := &Workers{
		name:     cfg.Name,
		size:     cfg.Size,
		queueCap: cfg.QueueCapacity,
		maxWait:  cfg.MaxWait,
		tasks:    make(chan *task, cfg.Size+cfg.QueueCapacity),
		quit:     make(chan struct{}),
		busy:     gauge{capacity: int64(cfg.Size)},
		queued:   gauge{capacity: int64(cfg.QueueCapacity)},
	}
	p.idle = make([]*worker, 0, cfg.Size)
	p.wg.Add(cfg.Size)
	for range cfg.Size {
		go p.work(&worker{next: make(chan *task, 1)})
	}
	return p
}

// work is one worker goroutine: it takes the oldest queued task, or, with none, goes idle on top
// of the idle stack and waits for a task handed to it, until Close.
func (p *Workers) work(w *worker) {
	defer p.wg.Done()
	for {
		var t *task
		p.mu.Lock()
		select {
		case t = <-p.tasks:
			p.queued.dec()
		default:
			p.idle = append(p.idle, w)
		}
		p.mu.Unlock()
		if t == nil {
			select {
			case <-p.quit:
				return
			case t = <-w.next:
			}
		}
		p.run(t)
		p.accepted.Add(-1)
	}
}

// dispatch hands t to the worker that went idle last, or queues it (and counts it as waiting)
// when no worker is idle. It never blocks: a worker taken off idle has an empty mailbox, and the
// queue has room for every accepted task.
func (p *Workers) dispatch(t *task) {
	p.mu.Lock()
	if n := len(p.idle); n > 0 {
		w := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		w.next <- t
		return
	}
	p.queued.inc()
	p.tasks <- t
	p.mu.Unlock()
}

func (p *Workers) run(t *task) {
	if !t.state.CompareAndSwap(taskQueued, taskRunning) {
		return // the caller gave up while the task was queued
	}
	wait := time.Since(t.enq)
	p.c.waited(wait)
	if p.maxWait > 0 && wait > p.maxWait {
		t.err = p.c.reject(p.name, ErrWaitTimeout)
		close(t.done)
		return
	}
	p.c.admitted.Add(1)
	p.busy.inc()
	defer func() {
		p.busy.dec()
		close(t.done)
	}()
	t.err = t.fn(t.ctx)
}

// Do queues fn and blocks until a worker has run it, returning fn's error; fn runs on a worker
// goroutine with ctx. It returns a *RejectedError without queuing when the queue is full
// (ErrQueueFull, or ErrFull with QueueCapacity 0), and a *RejectedError wrapping ErrWaitTimeout
// when the task is still queued after MaxWait. When ctx is done while the task is queued, Do
// returns ctx.Err() and the task will not run (it keeps its queue place until a worker discards
// it, as a cancelled Future does in a Java executor). Once fn is running, Do waits for it to
// return, so fn never outlives Do; fn must honour ctx. After Close, Do returns ErrClosed.
func (p *Workers) Do(ctx context.Context, fn func(context.Context) error) error {
	if p.closed.Load() {
		return ErrClosed
	}
	for limit := int32(p.size + p.queueCap); ; {
		n := p.accepted.Load()
		if n >= limit {
			if p.queueCap == 0 {
				return p.c.reject(p.name, ErrFull)
			}
			return p.c.reject(p.name, ErrQueueFull)
		}
		if p.accepted.CompareAndSwap(n, n+1) {
			break
		}
	}
	t := &task{ctx: ctx, fn: fn, enq: time.Now(), done: make(chan struct{})}
	p.dispatch(t)

	var timeout <-chan time.Time
	if p.maxWait > 0 {
		tm := time.NewTimer(p.maxWait)
		defer tm.Stop()
		timeout = tm.C
	}
	done, quit := ctx.Done(), p.quit
	for {
		select {
		case <-t.done:
			return t.err
		case <-timeout:
			timeout = nil
			if t.state.CompareAndSwap(taskQueued, taskAbandoned) {
				p.c.waited(time.Since(t.enq))
				return p.c.reject(p.name, ErrWaitTimeout)
			}
		case <-done:
			done = nil
			if t.state.CompareAndSwap(taskQueued, taskAbandoned) {
				return ctx.Err()
			}
		case <-quit:
			quit = nil
			if t.state.CompareAndSwap(taskQueued, taskAbandoned) {
				return ErrClosed
			}
		}
	}
}

// Stats returns the pool's account now: Capacity is Size, InUse the busy workers, Waiting the
// tasks in the queue (including abandoned ones no worker has discarded yet).
func (p *Workers) Stats() PoolStats { return p.account(now(), false) }

// Account returns the account at at (see Pool); take starts a new sampling interval.
func (p *Workers) Account(at time.Duration, take bool) PoolStats { return p.account(int64(at), take) }

func (p *Workers) account(t int64, take bool) PoolStats {
	st := PoolStats{
		Name:          p.name,
		Kind:          KindWorkers,
		Capacity:      p.size,
		InUse:         p.busy.level(),
		Waiting:       p.queued.level(),
		QueueCapacity: p.queueCap,
		Slots:         p.busy.usage(t, take),
	}
	if p.queueCap > 0 {
		q := p.queued.usage(t, take)
		st.Queue = &q
	}
	p.c.fill(&st)
	return st
}

// Close stops the workers and blocks until they have exited: a worker finishes the task it is
// running, queued tasks are not run and their callers get ErrClosed. Close is idempotent.
func (p *Workers) Close() {
	p.once.Do(func() {
		p.closed.Store(true)
		close(p.quit)
	})
	p.wg.Wait()
}

// KindWorkers is a fixed set of Size worker goroutines fed by a bounded FIFO queue of
// QueueCapacity tasks; a full queue rejects at once. A task that waited in the queue longer than
// MaxWait (when MaxWait > 0) is dropped with reason wait-timeout instead of being run.
const KindWorkers PoolKind = "workers"

var _ Pool = (*Workers)(nil)

func init() { RegisterPoolKind(&WorkersParams{}) }

// WorkersParams is kind workers: it has no parameters beyond the ones every pool has (size: the
// workers; queue: the tasks waiting for one; max_wait: how long a task may wait, 0 for as long
// as its caller does).
type WorkersParams struct{}

// Kind returns KindWorkers.
func (*WorkersParams) Kind() PoolKind { return KindWorkers }

// Check has nothing to add to the checks every pool gets: any queue and max_wait can run.
func (*WorkersParams) Check(PoolConfig) []FieldError { return nil }

// New returns NewWorkers(cfg), which starts its Size workers.
func (*WorkersParams) New(cfg PoolConfig) Pool { return NewWorkers(cfg) }

// Goroutines is Size: the workers live from New to Close.
func (*WorkersParams) Goroutines(cfg PoolConfig) int { return cfg.Size }

// String is "": a workers pool has no parameters of its own.
func (*WorkersParams) String() string { return "" }

// Metrics is Resilience4j's thread-pool bulkhead family (TaggedThreadPoolBulkheadMetrics), so
// dashboards built for Resilience4j read it unchanged. A workers pool starts its Size workers up
// front and never grows: core, maximum and current size are all Size.
func (*WorkersParams) Metrics() []PoolMetric { return workersMetrics }

var workersMetrics = func() []PoolMetric {
	g := func(name, help string, v func(PoolStats) float64) PoolMetric {
		return PoolMetric{Name: name, Help: help, Type: prometheus.GaugeValue, Value: v}
	}
	size := func(st PoolStats) float64 { return float64(st.Capacity) }
	return []PoolMetric{
		g("resilience4j_bulkhead_thread_pool_size", "The thread pool size", size),
		g("resilience4j_bulkhead_core_thread_pool_size", "The core thread pool size", size),
		g("resilience4j_bulkhead_max_thread_pool_size", "The maximum thread pool size", size),
		g("resilience4j_bulkhead_active_thread_count", "The number of active threads", func(st PoolStats) float64 { return float64(st.InUse) }),
		g("resilience4j_bulkhead_available_thread_count", "The number of available threads", func(st PoolStats) float64 { return float64(st.Capacity - st.InUse) }),
		g("resilience4j_bulkhead_queue_depth", "The queue depth", func(st PoolStats) float64 { return float64(st.Waiting) }),
		g("resilience4j_bulkhead_queue_capacity", "The queue capacity", func(st PoolStats) float64 { return float64(st.QueueCapacity) }),
	}
}()
