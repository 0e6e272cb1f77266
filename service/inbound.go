package service

import (
	"context"
	"errors"
	"hash/fnv"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// MaxGivenUpIDs bounds the ids of given-up items an inbound endpoint lists in its snapshot (the
// count keeps going).
const MaxGivenUpIDs = 100

// maxItemID bounds the length of an item id taken from the X-Bulkhead-Item request header.
const maxItemID = 128

// inbound is one accept-fast endpoint: the "other direction". A partner's webhooks arrive as a
// burst when its own backlog drains; each one is acknowledged at once (202, so the sender
// does not retry and turn the burst into a larger one) and becomes an item of work. An item is
// dispatched to its own goroutine, which tries to take a slot of the inbound bulkhead (the pool
// InboundConfig.Pool names) and, holding it, calls the endpoint's dependencies in order, each
// bounded by the client timeout. An item that finds no slot (the pool rejects it), or whose
// calls fail, is not dropped: it is deferred and dispatched again after RetryDelay with its
// attempt counter one higher (after a delay spread around RetryDelay, see retryDelay), and given
// up loudly after Attempts tries ("Add an attempt counter
// to the command so this cannot loop forever, and give up loudly rather than silently").
//
// With Dedupe, each dispatch's fingerprint (endpoint, item id, attempt) goes into a dedupe set
// and a dispatch whose fingerprint is already there is dropped as a duplicate: redeliveries of an
// item are dropped, deferred items are not, because the attempt changes the fingerprint. With
// OmitAttempt the fingerprint leaves the attempt out and every deferred item is dropped: the
// well-known trap.
//
// The dedupe set keeps every fingerprint for the life of the service (one entry per dispatch):
// it models the idempotency store, not a bounded cache.
type inbound struct {
	path    string
	cfg     InboundConfig // defaults filled
	pool    Pool          // nil: no bulkhead
	deps    []*dependency
	timeout time.Duration
	// after schedules f after d and returns a stop function (time.AfterFunc). It must not call f
	// synchronously. logf reports a given-up item.
	after func(d time.Duration, f func()) (stop func() bool)
	logf  func(format string, args ...any)
	// ctx is the processing's context: close cancels it, so in-flight calls end at shutdown.
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	closed     bool
	seen       map[string]struct{}    // dedupe set, by fingerprint
	timers     map[uint64]func() bool // deferred items waiting for their retry, by key
	nextTimer  uint64
	givenUpIDs []string
	wg         sync.WaitGroup // processing goroutines

	seq        atomic.Uint64 // ids of items that came without one
	backlog    gauge         // capacity MaxBacklog, set by newInbound
	inProgress atomic.Int64
	waiting    atomic.Int64
	accepted   atomic.Uint64
	refused    atomic.Uint64
	processed  atomic.Uint64
	deferred   atomic.Uint64
	failed     atomic.Uint64
	givenUp    atomic.Uint64
	duplicates atomic.Uint64
	stopped    atomic.Uint64
}

// item is one unit of inbound work: the request's id and how many times it was dispatched
// before.
type item struct {
	id      string
	attempt int
}

// newInbound builds the inbound side of endpoint path, filling cfg's defaults. pool may be nil.
func newInbound(path string, cfg InboundConfig, pool Pool, deps []*dependency, timeout time.Duration,
	after func(time.Duration, func()) func() bool, logf func(string, ...any)) *inbound {
	if cfg.Attempts == 0 {
		cfg.Attempts = DefaultInboundAttempts
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = DefaultInboundRetryDelay
	}
	if cfg.MaxBacklog == 0 {
		cfg.MaxBacklog = DefaultInboundMaxBacklog
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &inbound{
		path: path, cfg: cfg, pool: pool, deps: deps, timeout: timeout, after: after, logf: logf,
		ctx: ctx, cancel: cancel, seen: map[string]struct{}{}, timers: map[uint64]func() bool{},
		backlog: gauge{capacity: int64(cfg.MaxBacklog)},
	}
}

// ServeHTTP accepts one item: it answers 202 accepted at once, with the item's id in
// X-Bulkhead-Item, and dispatches the item; or 503 rejected (backlog-full) when MaxBacklog items
// are already in the backlog, keeping nothing. It does not wait for the processing.
func (in *inbound) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20)) //nolint:errcheck // the body is not used
	if !in.backlog.tryInc(int64(in.cfg.MaxBacklog)) {
		in.refused.Add(1)
		response{status: http.StatusServiceUnavailable, outcome: outcome.Rejected,
			pool: "inbound:" + in.path, reason: outcome.ReasonBacklogFull}.write(w)
		return
	}
	id := r.Header.Get(outcome.HeaderItem)
	if id == "" || len(id) > maxItemID {
		id = "n" + strconv.FormatUint(in.seq.Add(1), 10)
	}
	in.accepted.Add(1)
	in.dispatch(item{id: id})
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set(outcome.HeaderOutcome, outcome.Accepted)
	h.Set(outcome.HeaderItem, id)
	w.WriteHeader(http.StatusAccepted)
	io.WriteString(w, "accepted "+id+"\n") //nolint:errcheck // the client went away
}

// fingerprint is what the dedupe set is keyed on: endpoint, id and, unless OmitAttempt, the
// attempt.
func (in *inbound) fingerprint(it item) string {
	fp := in.path + "\x00" + it.id
	if !in.cfg.OmitAttempt {
		fp += "\x00" + strconv.Itoa(it.attempt)
	}
	return fp
}

// dispatch starts processing it on its own goroutine, unless the dedupe set drops it or the
// endpoint is closed (then it is counted as pending at stop). it is in the backlog already.
func (in *inbound) dispatch(it item) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		in.stop(1)
		return
	}
	if in.cfg.Dedupe {
		fp := in.fingerprint(it)
		if _, dup := in.seen[fp]; dup {
			in.mu.Unlock()
			in.duplicates.Add(1)
			in.backlog.dec()
			return
		}
		in.seen[fp] = struct{}{}
	}
	in.inProgress.Add(1)
	in.wg.Add(1) // under mu and before closed: close's Wait cannot start before this Add
	in.mu.Unlock()
	go in.process(it)
}

// process makes one attempt at it: a slot of the inbound bulkhead, then the calls. It blocks for
// as long as the pool lets it wait for a slot and the calls take.
func (in *inbound) process(it item) {
	defer in.wg.Done()
	err := in.work(in.ctx)
	in.inProgress.Add(-1)
	var rej *RejectedError
	switch {
	case err == nil:
		in.processed.Add(1)
		in.backlog.dec()
	case in.ctx.Err() != nil || errors.Is(err, ErrClosed):
		in.stop(1)
	case errors.As(err, &rej):
		in.deferred.Add(1)
		in.retry(it, err)
	default:
		in.failed.Add(1)
		in.retry(it, err)
	}
}

// work runs the endpoint's calls in order under one slot of the pool (or directly without one).
// A call does not take a slot of its dependency's own pool: the item's slot is the bulkhead.
func (in *inbound) work(ctx context.Context) error {
	fn := func(ctx context.Context) error {
		for _, d := range in.deps {
			cctx, cancel := context.WithTimeoutCause(ctx, in.timeout, ErrTimeout)
			err := d.do(cctx)
			cancel()
			if err != nil {
				return err
			}
		}
		return nil
	}
	if in.pool == nil {
		return fn(ctx)
	}
	return in.pool.Do(ctx, fn)
}

// retry defers it after a failed attempt (cause): dispatched again after RetryDelay with the
// attempt counter one higher, or given up when that was its last attempt.
func (in *inbound) retry(it item, cause error) {
	it.attempt++
	if it.attempt >= in.cfg.Attempts {
		in.giveUp(it, cause)
		return
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		in.stop(1)
		return
	}
	key := in.nextTimer
	in.nextTimer++
	in.waiting.Add(1)
	// Subtleness ahead: the callback may run before after returns (a short delay). It takes mu,
	// which is held here until the stop function is in the map, so it always finds its key; a
	// missing key means close took the item (and counted it).
	in.timers[key] = in.after(in.retryDelay(it), func() {
		in.mu.Lock()
		_, ok := in.timers[key]
		delete(in.timers, key)
		in.mu.Unlock()
		if ok {
			in.waiting.Add(-1)
			in.dispatch(it)
		}
	})
}

// retryDelay is RetryDelay spread uniformly over [0.5, 1.5) x RetryDelay by a hash of the item's
// id and attempt: deterministic, and different from item to item. Subtleness ahead: with one
// fixed delay, the items a burst deferred together come back together, a wave finds the slots
// taken but for the first few, and the rest go round again in step; between waves the slots sit
// idle. Measured with two slots of 44 ms and 200 ms retries: the last 50 items of a backlog
// drained at ~20 items/s instead of ~45.
func (in *inbound) retryDelay(it item) time.Duration {
	h := fnv.New64a()
	io.WriteString(h, it.id)                    //nolint:errcheck // hashes never fail
	io.WriteString(h, strconv.Itoa(it.attempt)) //nolint:errcheck
	// FNV's high bits barely change between similar ids ("c-1", "c-2"): mix them (splitmix64's
	// finaliser) before taking the top 53 bits as a fraction in [0, 1).
	x := h.Sum64()
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	frac := float64(x>>11) / (1 << 53)
	return time.Duration(float64(in.cfg.RetryDelay) * (0.5 + frac))
}

// giveUp ends it after its last attempt, loudly: counted, its id listed, and logged.
func (in *inbound) giveUp(it item, cause error) {
	in.givenUp.Add(1)
	in.backlog.dec()
	in.mu.Lock()
	if len(in.givenUpIDs) < MaxGivenUpIDs {
		in.givenUpIDs = append(in.givenUpIDs, it.id)
	}
	in.mu.Unlock()
	in.logf("service: inbound %s: gave up on item %s after %d attempts: %v", in.path, it.id, it.attempt, cause)
}

// stop counts n items that leave the backlog because the endpoint is closing.
func (in *inbound) stop(n int) {
	in.stopped.Add(uint64(n))
	in.backlog.add(-int64(n))
}

// close stops the endpoint: deferred items are not retried, in-flight processing is cancelled,
// and both are counted as pending at stop. It blocks until every processing goroutine has
// returned. It is idempotent.
func (in *inbound) close() {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		in.wg.Wait()
		return
	}
	in.closed = true
	n := len(in.timers)
	for k, stop := range in.timers {
		stop()
		delete(in.timers, k)
	}
	in.mu.Unlock()
	in.waiting.Add(-int64(n))
	in.stop(n)
	in.cancel()
	in.wg.Wait()
}

// stats returns the endpoint's account at t (take: see Service.Sample). It takes the endpoint's
// lock for the given-up ids.
func (in *inbound) stats(t int64, take bool) InboundStats {
	st := InboundStats{
		Endpoint:      in.path,
		Pool:          in.cfg.Pool,
		Accepted:      in.accepted.Load(),
		Refused:       in.refused.Load(),
		Backlog:       in.backlog.level(),
		BacklogUsage:  in.backlog.usage(t, take),
		InProgress:    int(in.inProgress.Load()),
		Waiting:       int(in.waiting.Load()),
		MaxBacklog:    in.cfg.MaxBacklog,
		Processed:     in.processed.Load(),
		Deferred:      in.deferred.Load(),
		Failed:        in.failed.Load(),
		GivenUp:       in.givenUp.Load(),
		Duplicates:    in.duplicates.Load(),
		PendingAtStop: in.stopped.Load(),
	}
	in.mu.Lock()
	if len(in.givenUpIDs) > 0 {
		st.GivenUpIDs = append([]string(nil), in.givenUpIDs...)
	}
	in.mu.Unlock()
	return st
}

// inboundEndpoint builds the inbound side of e (e.Inbound non-nil) and returns its handler,
// counted in flight like every endpoint. The clock seam and the logger are read at call time,
// so tests may replace them after New.
func (s *Service) inboundEndpoint(e EndpointConfig) http.Handler {
	var pool Pool
	for i, pc := range s.cfg.Pools {
		if pc.Name == e.Inbound.Pool {
			pool = s.pools[i]
		}
	}
	deps := make([]*dependency, len(e.Calls))
	for i, n := range e.Calls {
		deps[i] = s.byName[n]
	}
	in := newInbound(e.Path, *e.Inbound, pool, deps, s.cfg.ClientTimeout,
		func(d time.Duration, f func()) func() bool { return s.afterFunc(d, f) },
		func(format string, args ...any) { s.logf(format, args...) })
	s.inbounds = append(s.inbounds, in)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		in.ServeHTTP(w, r)
	})
}
