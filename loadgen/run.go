package loadgen

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Attack is one endpoint's load: GET URL at the times Pacer schedules, results to Out.
type Attack struct {
	// Name identifies the attack (vegeta's attack name, Result.Attack), normally the endpoint
	// path ("/a"). Names must be unique within a Run.
	Name string
	// URL is the full URL to GET.
	URL string
	// Pacer schedules the sends. Its rate must be in (0, MaxRate].
	Pacer Pacer
	// Out receives every result as one vegeta JSON line, as vegeta.NewJSONEncoder writes it but
	// with the header keys in sorted order (appendResult). Writes are buffered and flushed
	// before Wait returns; if Out has a Flush() error method it is called then too. The caller
	// owns Out and closes it after Wait.
	Out io.Writer
}

// Progress is one attack's live account, from Run.Progress. Its JSON (in the attack child's
// progress events) has snake_case keys, durations in ns.
type Progress struct {
	Name string `json:"name"`
	// Sent counts requests sent so far; Done counts results received (Sent - Done are in flight).
	Sent uint64 `json:"sent"`
	Done uint64 `json:"done"`
	// Errors counts results that were not 2xx (including transport errors), since the start.
	Errors uint64 `json:"errors"`
	// Window is the number of results completed in the last complete second (the rate at steady
	// state); ErrorRate is the fraction of
	// them that were errors and P99 their exact latency p99 (nearest rank). All three are zero
	// when nothing completed in the window.
	Window    uint64        `json:"window"`
	ErrorRate float64       `json:"error_rate"`
	P99       time.Duration `json:"p99_ns"`
}

// Add adds g, the same attack's progress in another shard, to p: counts and windows sum, the
// window's error rate is weighted by each shard's window, and its p99 is the worst shard's (an
// upper bound of the pooled p99, which the shards' events cannot give exactly).
func (p *Progress) Add(g Progress) {
	errs := p.ErrorRate*float64(p.Window) + g.ErrorRate*float64(g.Window)
	p.Sent, p.Done, p.Errors, p.Window = p.Sent+g.Sent, p.Done+g.Done, p.Errors+g.Errors, p.Window+g.Window
	p.ErrorRate = 0
	if p.Window > 0 {
		p.ErrorRate = errs / float64(p.Window)
	}
	p.P99 = max(p.P99, g.P99)
}

// Check is one attack's check of itself, from Run.Wait. Its JSON (in the attack child's done
// event) has snake_case keys, durations in ns.
type Check struct {
	Name string `json:"name"`
	// Scheduled counts the hits the pacer had due within the time actually run: the whole
	// duration, or up to the stop when Stop (or ctx) cut the run short. Sent counts results
	// written (every sent request yields one). Dropped counts scheduled hits never sent; after a
	// stop, hits due within the lag limit before the stop are not counted as dropped (they were
	// still on time), so Dropped may be less than Scheduled - Sent.
	Scheduled uint64 `json:"scheduled"`
	Sent      uint64 `json:"sent"`
	Dropped   uint64 `json:"dropped"`
	// LagP50, LagP99 and LagMax are quantiles of the send lag over all sends: actual send time
	// (Result.Timestamp) minus scheduled send time (attack start + Pacer.Scheduled(Seq)). They are
	// exact: nearest rank over every send's lag, kept to the nanosecond.
	LagP50 time.Duration `json:"lag_p50_ns"`
	LagP99 time.Duration `json:"lag_p99_ns"`
	LagMax time.Duration `json:"lag_max_ns"`
	// StartSkew is how long after T0 vegeta started this attack's clock. It is not part of the
	// lag; a skew above MaxStartSkew makes the run invalid (the attacks were out of step).
	StartSkew time.Duration `json:"start_skew_ns"`
	// Stopped is true when Stop or ctx cut the attack short before its duration.
	Stopped bool `json:"stopped"`
	// Valid is false when the lag p99 exceeded the lag limit, a send was dropped or writing the
	// results failed; Reasons then says why, in words and numbers.
	Valid   bool     `json:"valid"`
	Reasons []string `json:"reasons"`
	// Codes counts results by status code (0 for transport errors); Classes by Classify.
	Codes   map[uint16]uint64 `json:"codes"`
	Classes map[string]uint64 `json:"classes"`
	// Steal is the largest share of one CPU's time the hypervisor took from the start of the
	// run to its end (steal time; the same for every attack of a run), or -1 where the system
	// does not account it. From NotableSteal it is named in the lag and drop reasons.
	Steal float64 `json:"steal"`
}

// Run is a set of attacks started together. Its methods are safe for concurrent use.
type Run struct {
	t0 time.Time
	// ready is when Start had the connections warm, before it waited for a common start.
	ready    time.Time
	duration time.Duration
	opts     options
	attacks  []*attackRun

	mu       sync.Mutex
	stopped  bool
	stopAt   time.Duration // offset from t0 of the first stop
	stopKind stopKind

	timer     *time.Timer
	unhookCtx func() bool
	done      chan struct{}

	waitOnce sync.Once
	checks   []Check
	err      error

	// cpuStart is the machine's CPU time accounting read at T0; steal, what it says was stolen
	// by the time the last attack ended (Check.Steal), set before done is closed.
	cpuStart cpuTimes
	steal    float64
}

type stopKind int

const (
	stopNone     stopKind = iota
	stopUser              // Stop or ctx
	stopDeadline          // still sending StopGrace after the duration
	stopWrite             // writing results failed
)

// resultBuffer is the write buffer of each attack's results: a few dozen results, so that 500
// attacks do not reserve megabytes before sending anything.
const resultBuffer = 8 << 10

type attackRun struct {
	Attack
	attacker  *vegeta.Attacker
	transport idleCloser
	pacer     *boundedPacer
	sent      atomic.Uint64
	done      atomic.Uint64
	errors    atomic.Uint64
	window    *window

	// workers is how many workers the attack starts with; Start opens warm connections for them
	// before T0 and warmed says how many it did (warm).
	workers      uint64
	warm, warmed int
	// shard is the attack's part of the unsharded schedule (the zero Shard: all of it).
	shard Shard

	// Owned by the drain goroutine until it ends: every send's lag, exactly, in memory that grows
	// with the sends.
	lag      samples
	lagMax   time.Duration
	codes    map[uint16]uint64
	classes  map[string]uint64
	writeErr error
	// The reduced headers of the result being written, reused for every result (see record).
	headers                    http.Header
	scheduledValue, classValue [1]string
}

// boundedPacer stops the attack once every hit due within the duration was sent, and records
// when vegeta started the attack's clock.
type boundedPacer struct {
	Pacer
	limit     uint64
	exhausted atomic.Bool
	beganOnce sync.Once
	began     time.Time
	// origin, when set, is the common T0 (WithStartAt) the schedule is laid from instead of
	// vegeta's start: the attack starts a little before it (startEarly) and waits for its first
	// hit on the common time line, so that its own start does not shift its sends.
	origin time.Time
	// timer is the pacing goroutine's, created at its first wait (noTimer: the kernel refused
	// one) and closed when the attack has ended.
	timer   *hrTimer
	noTimer bool
	// behind counts the hits sent one after another because they were already due, yields the
	// times catchUp parked the pacer.
	behind, yields uint64
}

// Pace waits until hit number hits is due and returns 0, or stops the attack once every hit due
// within the duration was sent. vegeta would sleep the returned wait with time.Sleep, and the Go
// runtime's timers wake an idle process only with millisecond granularity (it blocks in
// epoll_wait, whose timeout is in milliseconds), which alone costs about 0.5 ms of send lag on
// average and 1 ms at p99. So Pace sleeps on a kernel high-resolution timer read through the
// netpoller (hrTimer): its expiry wakes the runtime out of epoll_wait at once, and the pacing
// goroutine parks meanwhile like any network read, holding no thread and no P. (A blocking
// nanosleep holds the thread, and waits shorter than its 200 µs floor fell back on the coarse
// sleep; measured at 1,000 rps on one core, lag p50 98 µs vs 265 µs, CPU 17% vs 23%.) Hits
// already due are sent at once, in bursts with a yield to the netpoller between (catchUp).
func (p *boundedPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	now := time.Now()
	p.beganOnce.Do(func() { p.began = now.Add(-elapsed) })
	if hits >= p.limit {
		p.exhausted.Store(true)
		return 0, true
	}
	var wait time.Duration
	var stop bool
	switch e := elapsed; {
	case !p.origin.IsZero() && e-p.origin.Sub(p.began) < 0:
		// Before the common T0: wait for the hit's time on the common time line (vegeta's
		// pacers are not defined for a negative elapsed time).
		e -= p.origin.Sub(p.began)
		wait = time.Second // a hit never due (a silent schedule): the duration ends the attack
		if s := p.Pacer.Scheduled(hits); s < 1<<62 {
			wait = s - e
		}
	case !p.origin.IsZero():
		wait, stop = p.Pacer.Pace(e-p.origin.Sub(p.began), hits)
	default:
		wait, stop = p.Pacer.Pace(elapsed, hits)
	}
	if stop {
		return wait, stop
	}
	if wait <= 0 {
		p.catchUp()
		return wait, stop
	}
	p.behind = 0
	// Due on the attack's own clock, on which the lag is measured.
	if p.wait(p.began.Add(elapsed+wait), wait) {
		return 0, false
	}
	return wait, false
}

// Start validates the attacks and options, opens each attack's first connections (warm, at most
// a second), records T0 and starts every attack at once, each on its own vegeta.Attacker (an
// Attacker is single-use: a Run is too). It returns once they started; the attacks send in the
// background, every hit due within duration and no more, and end by themselves.
//
// When ctx is done the run stops as by Stop. Invalid attacks or options return an error wrapping
// ErrInvalid; a ctx already done returns ctx.Err(). On error nothing was started. The caller must
// call Wait to collect the checks and release the run.
func Start(ctx context.Context, attacks []Attack, duration time.Duration, opts ...Opt) (*Run, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if err := validateAttacks(attacks, duration); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start load: %w", err)
	}

	r := &Run{duration: duration, opts: o, done: make(chan struct{})}
	for _, a := range attacks {
		client, tr := newClient(o)
		rate := peakRate(a.Pacer)
		workers := initialWorkers(rate, o.maxWorkers)
		ar := &attackRun{
			Attack:    a,
			transport: tr,
			workers:   workers,
			warm:      warmConnections(rate, workers, o.maxWorkers, o.connections),
			attacker: vegeta.NewAttacker(
				vegeta.Client(client),
				vegeta.MaxWorkers(o.maxWorkers),
				vegeta.Workers(workers),
				vegeta.MaxBody(maxBody),
			),
			pacer:   &boundedPacer{Pacer: a.Pacer, limit: a.Pacer.Hits(duration)},
			window:  newWindow(time.Time{}),
			codes:   map[uint16]uint64{},
			classes: map[string]uint64{},
		}
		if st, ok := a.Pacer.(Striped); ok {
			ar.shard = st.Shard
		}
		r.attacks = append(r.attacks, ar)
	}

	if !o.noWarm {
		warm(ctx, r.attacks, min(o.timeout, maxWarm))
	}
	if err := ctx.Err(); err != nil {
		for _, a := range r.attacks {
			a.transport.CloseIdleConnections()
		}
		return nil, fmt.Errorf("start load: %w", err)
	}

	r.ready = time.Now()
	// T0 is taken immediately before the attacks start. Everything an attack needs was built
	// above and Attack only spawns goroutines (a worker or a few each), so calling them in turn
	// keeps every attack's own start close to T0 (Check.StartSkew): 500 attacks in milliseconds.
	// A common start (WithStartAt) is waited for here, on a high-resolution timer.
	if !o.startAt.IsZero() {
		for _, a := range r.attacks {
			a.pacer.origin = o.startAt
		}
		if err := sleepUntil(ctx, o.startAt.Add(-startEarly)); err != nil {
			for _, a := range r.attacks {
				a.transport.CloseIdleConnections()
			}
			return nil, fmt.Errorf("start load: %w", err)
		}
	}
	r.cpuStart = cpuTimesNow()
	r.t0 = time.Now()
	if !o.startAt.IsZero() {
		r.t0 = o.startAt
	}
	for _, a := range r.attacks {
		a.window.t0 = r.t0
	}
	var wg sync.WaitGroup
	for _, a := range r.attacks {
		res := a.attacker.Attack(a.targeter(), a.pacer, 0, a.Name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.drain(r, res)
		}()
	}
	r.timer = time.AfterFunc(time.Until(r.t0.Add(duration+StopGrace)), func() { r.stop(stopDeadline) })
	r.unhookCtx = context.AfterFunc(ctx, r.Stop)
	go func() {
		wg.Wait()
		for _, a := range r.attacks {
			a.transport.CloseIdleConnections()
			if a.pacer.timer != nil {
				a.pacer.timer.close()
			}
		}
		r.timer.Stop()
		r.unhookCtx()
		r.steal = stealFraction(r.cpuStart, cpuTimesNow())
		close(r.done)
	}()
	return r, nil
}

// startEarly is how long before a common T0 (WithStartAt) the attacks start: enough for vegeta
// to start its workers and call the pacer, which then waits for the first hit on the common
// time line (boundedPacer.origin). Measured here, starting at T0 itself put every send of a
// shard 0.3-0.7 ms late on the common schedule.
const startEarly = 2 * time.Millisecond

// sleepUntil blocks until the wall-clock instant t (at once when it has passed), on a kernel
// high-resolution timer where there is one, or until ctx is done (returning ctx.Err()).
func sleepUntil(ctx context.Context, t time.Time) error {
	// The coarse part on the runtime's timers, which may wake a millisecond late; the last
	// stretch on the hrTimer (or, without one, the runtime's timers after all).
	if d := time.Until(t) - 5*time.Millisecond; d > 0 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if d := time.Until(t); d > 0 {
		if hr, err := newHRTimer(); err == nil {
			defer hr.close()
			if hr.sleep(d) == nil {
				return nil
			}
		}
		time.Sleep(time.Until(t))
	}
	return nil
}

// maxWarm bounds how long Start warms the attacks' connections.
const maxWarm = time.Second

// warmer is a transport that can open connections before the first request (h1's).
type warmer interface {
	Warm(ctx context.Context, rawURL string, n int) int
}

// warmSpan is how much of an attack's peak rate Start opens connections for before T0: the
// connections that many sends in flight at once need (warmConnections). Only figures change it.
var warmSpan = 5 * time.Millisecond

// warmConnections is how many connections Start opens for an attack before T0: enough for
// warmSpan of its peak rate in flight, and for every worker it starts with, within the workers it
// may have and the idle connections it may keep.
func warmConnections(rate float64, workers, maxWorkers uint64, connections int) int {
	n := max(uint64(math.Ceil(rate*warmSpan.Seconds())), workers)
	return int(min(n, maxWorkers, uint64(connections)))
}

// warm opens each attack's first connections (attackRun.warm of them), all attacks at once, and
// blocks until they are open, failed, or within passed.
//
// Why: an attack's first sends otherwise each dial, and the server accepts, at the moment the
// schedule starts: at 8,000 sends/s on one core the first 25 ms of a run held 77-660 sends over
// 1 ms late (issue 12), up to more than the whole run's lag budget of 400. Opening a connection
// sends nothing, so the system under test counts no request that is not in the results.
func warm(ctx context.Context, attacks []*attackRun, within time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var wg sync.WaitGroup
	for _, a := range attacks {
		w, ok := a.transport.(warmer)
		if !ok {
			continue
		}
		wg.Go(func() { a.warmed = w.Warm(ctx, a.URL, a.warm) })
	}
	wg.Wait()
}

// initialWorkers is the number of vegeta workers an attack starts with: about 10 ms worth of its
// peak rate, at least 1, at most vegeta's default (10) and the cap. vegeta adds a worker whenever
// every worker is busy at a send, so this saves only idle goroutines and their stacks (a 1/s
// attack needs one, not ten; 500 such attacks 4,500 fewer goroutines).
func initialWorkers(rate float64, maxWorkers uint64) uint64 {
	return min(max(uint64(math.Ceil(rate/100)), 1), vegeta.DefaultWorkers, maxWorkers)
}

func validateAttacks(attacks []Attack, duration time.Duration) error {
	if len(attacks) == 0 {
		return fmt.Errorf("no attacks: %w", ErrInvalid)
	}
	if duration <= 0 {
		return fmt.Errorf("duration %v must be positive: %w", duration, ErrInvalid)
	}
	seen := map[string]bool{}
	for i, a := range attacks {
		switch {
		case a.Name == "":
			return fmt.Errorf("attack %d: empty name: %w", i, ErrInvalid)
		case seen[a.Name]:
			return fmt.Errorf("attack %q: duplicate name: %w", a.Name, ErrInvalid)
		case a.Pacer == nil:
			return fmt.Errorf("attack %q: no pacer: %w", a.Name, ErrInvalid)
		case a.Out == nil:
			return fmt.Errorf("attack %q: no writer for results: %w", a.Name, ErrInvalid)
		}
		seen[a.Name] = true
		if err := checkRate(peakRate(a.Pacer)); err != nil {
			return fmt.Errorf("attack %q: pacer rate: %w", a.Name, err)
		}
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("attack %q: url %q is not an absolute http(s) URL: %w", a.Name, a.URL, ErrInvalid)
		}
	}
	return nil
}

// T0 returns the common start instant of every attack: the time line's zero. Scheduled send
// offsets and send lags are measured from it.
func (r *Run) T0() time.Time { return r.t0 }

// Ready returns when the run was ready to send: its attacks built and their connections warm,
// before it waited for a common start (WithStartAt). T0 minus Ready is the margin a common
// start's lead left this load generator; negative, it was ready only after T0 and its attacks
// started late (Check.StartSkew).
func (r *Run) Ready() time.Time { return r.ready }

// Progress returns each attack's live account, in the order the attacks were given. It takes a
// lock per attack briefly and does not block on the attacks.
func (r *Run) Progress() []Progress {
	now := time.Now()
	out := make([]Progress, len(r.attacks))
	for i, a := range r.attacks {
		done, errs, p99 := a.window.read(now)
		p := Progress{
			Name: a.Name, Sent: a.sent.Load(), Done: a.done.Load(), Errors: a.errors.Load(),
			Window: done, P99: p99,
		}
		if done > 0 {
			p.ErrorRate = float64(errs) / float64(done)
		}
		out[i] = p
	}
	return out
}

// Stop stops sending at once (vegeta's Attacker.Stop on every attack). Requests in flight finish
// or hit the timeout; their results are still written. Hits due before the stop count as
// scheduled, later ones do not. Stop does not block and is idempotent; Wait collects the results.
func (r *Run) Stop() { r.stop(stopUser) }

func (r *Run) stop(kind stopKind) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.stopped, r.stopAt, r.stopKind = true, time.Since(r.t0), kind
	r.mu.Unlock()
	for _, a := range r.attacks {
		a.attacker.Stop()
	}
}

// Wait blocks until every attack has ended, every result is written and every Out flushed
// (requests in flight are bounded by the timeout), then returns one Check per attack in the order
// given. The error joins any failure to write or flush results; the checks are returned either
// way. Calling Wait again returns the same.
func (r *Run) Wait() ([]Check, error) {
	r.waitOnce.Do(func() {
		<-r.done
		var errs []error
		for _, a := range r.attacks {
			r.checks = append(r.checks, r.check(a))
			if a.writeErr != nil {
				errs = append(errs, a.writeErr)
			}
		}
		r.err = errors.Join(errs...)
	})
	return r.checks, r.err
}

// check builds an ended attack's Check.
// Pooled returns the self-check of every attack's sends taken together (Name "all"): counts are
// summed and the lag quantiles are over the pooled sends. It is invalid when the pooled lag p99
// exceeds the lag limit, which is how attacks too sparse for a p99 of their own (fewer than
// MinLagSamples sends each, e.g. 500 partners at 1/s) are judged. Call it after Wait.
func (r *Run) Pooled() Check {
	c := Check{Name: "all", Valid: true, Steal: r.steal}
	var lag samples
	for i, a := range r.attacks {
		lag.addAll(&a.lag)
		if i < len(r.checks) {
			k := r.checks[i]
			c.Scheduled += k.Scheduled
			c.Sent += k.Sent
			c.Dropped += k.Dropped
			c.LagMax = max(c.LagMax, k.LagMax)
			c.StartSkew = max(c.StartSkew, k.StartSkew)
		}
	}
	c.LagP50, c.LagP99 = lag.quantile(0.50), lag.quantile(0.99)
	if c.LagP99 > r.opts.lagLimit {
		c.Valid = false
		c.Reasons = append(c.Reasons, fmt.Sprintf("send lag p99 over all %d sends %v exceeds the %v limit (p50 %v, max %v)%s",
			lag.len(), c.LagP99, r.opts.lagLimit, c.LagP50, c.LagMax, stealNote(c.Steal)))
	}
	return c
}

func (r *Run) check(a *attackRun) Check {
	r.mu.Lock()
	stopped, stopAt, kind := r.stopped, r.stopAt, r.stopKind
	r.mu.Unlock()

	c := Check{
		Name:    a.Name,
		Sent:    a.done.Load(),
		LagMax:  a.lagMax,
		Codes:   a.codes,
		Classes: a.classes,
		Steal:   r.steal,
	}
	c.LagP50, c.LagP99 = a.lag.quantile(0.50), a.lag.quantile(0.99)
	if !a.pacer.began.IsZero() {
		c.StartSkew = a.pacer.began.Sub(r.t0)
		if !a.pacer.origin.IsZero() {
			// Started ahead of the common T0 on purpose: only a start after it is a skew.
			c.StartSkew = max(c.StartSkew, 0)
		}
	}

	limit := a.pacer.limit
	due := limit
	c.Scheduled = limit
	if stopped && kind != stopDeadline && stopAt < r.duration && !a.pacer.exhausted.Load() {
		// Cut short: count what was due by the stop. A hit vegeta let out while the stop landed
		// was scheduled too.
		c.Stopped = true
		c.Scheduled = max(min(a.Pacer.Hits(stopAt), limit), c.Sent)
		due = min(a.Pacer.Hits(stopAt-r.opts.lagLimit), limit)
	}
	if c.Sent < due {
		c.Dropped = due - c.Sent
	}

	if c.Dropped > 0 {
		why := "the worker cap or the CPU held the attack back"
		if !c.Stopped && !a.pacer.exhausted.Load() {
			why = fmt.Sprintf("the attack was still behind %v after the end and was stopped", StopGrace)
		}
		c.Reasons = append(c.Reasons, fmt.Sprintf("dropped %d of %d scheduled sends (%.2f%%): %s%s",
			c.Dropped, c.Scheduled, 100*float64(c.Dropped)/float64(max(c.Scheduled, 1)), why, stealNote(c.Steal)))
	}
	if c.StartSkew > MaxStartSkew {
		c.Reasons = append(c.Reasons, fmt.Sprintf("attack started %v after the time line's zero (limit %v)", c.StartSkew, MaxStartSkew))
	}
	// A p99 over fewer than MinLagSamples sends is just the slowest one or two; such sparse
	// attacks are judged together by Pooled instead.
	if c.LagP99 > r.opts.lagLimit && a.lag.len() >= MinLagSamples {
		c.Reasons = append(c.Reasons, fmt.Sprintf("send lag p99 %v exceeds the %v limit (p50 %v, max %v)%s",
			c.LagP99, r.opts.lagLimit, c.LagP50, c.LagMax, stealNote(c.Steal)))
	}
	if a.writeErr != nil {
		c.Reasons = append(c.Reasons, a.writeErr.Error())
	}
	c.Valid = len(c.Reasons) == 0
	return c
}

// targeter returns vegeta's Targeter for the attack: GET URL, counting each send.
func (a *attackRun) targeter() vegeta.Targeter {
	return func(t *vegeta.Target) error {
		a.sent.Add(1)
		t.Method = http.MethodGet
		t.URL = a.URL
		return nil
	}
}

type flusher interface{ Flush() error }

// drain writes every result of the attack as it arrives and accounts for it. It returns when
// vegeta closes the channel (every worker done).
func (a *attackRun) drain(r *Run, results <-chan *vegeta.Result) {
	bw := bufio.NewWriterSize(a.Out, resultBuffer)
	enc := resultWriter{w: bw}
	for res := range results {
		a.record(r, res)
		if a.writeErr != nil {
			continue // keep draining so vegeta's workers can finish
		}
		// res is written before the next result is recorded, and dropped: record relies on it.
		if err := enc.write(res); err != nil {
			a.writeErr = fmt.Errorf("write results of %s: %w", a.Name, err)
			r.stop(stopWrite)
		}
	}
	if a.writeErr == nil {
		if err := bw.Flush(); err != nil {
			a.writeErr = fmt.Errorf("flush results of %s: %w", a.Name, err)
		} else if f, ok := a.Out.(flusher); ok {
			if err := f.Flush(); err != nil {
				a.writeErr = fmt.Errorf("flush results of %s: %w", a.Name, err)
			}
		}
	}
}

// record accounts for one result and reduces it to what is stored: no body, the outcome headers
// plus the scheduled offset and the class.
func (a *attackRun) record(r *Run, res *vegeta.Result) {
	scheduled := a.Pacer.Scheduled(res.Seq)
	// A shard's results carry the unsharded run's Seq, so that the shards' files merge into one
	// gapless sequence (the local one is gapless too: vegeta's, mapped one to one).
	defer func() { res.Seq = a.shard.Global(res.Seq) }()
	// Lag is measured on the attack's own clock (vegeta's start of this attack), so that the few
	// microseconds to milliseconds between starting one attack and the next on a busy machine
	// are not charged to every send of the later ones; that offset is StartSkew, checked apart.
	start := a.pacer.began
	if start.IsZero() || !a.pacer.origin.IsZero() {
		start = r.t0 // a common start: lag against the common schedule
	}
	lag := max(res.Timestamp.Sub(start)-scheduled, 0)
	a.lagMax = max(a.lagMax, lag)
	a.lag.add(lag)

	class := r.opts.classify(int(res.Code), res.Headers, res.Error)
	// One header map and one pair of value slices serve every result of the attack, instead of
	// a fresh map per result. That is safe because the reduced headers live no longer than the
	// line they are written to: drain writes each result (appendResult reads the map and copies
	// out the bytes) before it records the next one, and keeps no reference to it; vegeta made
	// res for this send alone and never touches it after handing it over; classify saw the
	// response's own headers above, not this map; and nothing else in the package reads results.
	h := a.headers
	if h == nil {
		h = make(http.Header, len(outcome.KeptHeaders)+2)
		a.headers = h
	}
	clear(h)
	for _, k := range outcome.KeptHeaders {
		if v := res.Headers[k]; len(v) > 0 {
			h[k] = v
		}
	}
	a.scheduledValue[0] = strconv.FormatInt(int64(scheduled), 10)
	a.classValue[0] = class
	h[outcome.HeaderScheduled] = a.scheduledValue[:]
	h[outcome.HeaderClass] = a.classValue[:]
	res.Headers = h
	res.Body = nil

	a.codes[res.Code]++
	a.classes[class]++
	isErr := res.Code < 200 || res.Code >= 300
	a.done.Add(1)
	if isErr {
		a.errors.Add(1)
	}
	a.window.add(time.Now(), res.Latency, isErr)
}
