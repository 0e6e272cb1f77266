package loadgen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen/h1"
	"github.com/bulkheadlab/bulkhead/outcome"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// stalledServer holds every request until release is closed (or the client gives up). arrived
// is closed when the want-th request has arrived.
type stalledServer struct {
	*httptest.Server
	count   atomic.Int64
	want    int64
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newStalledServer(t *testing.T, want int64) *stalledServer {
	t.Helper()
	s := &stalledServer{want: want, arrived: make(chan struct{}), release: make(chan struct{})}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.count.Add(1) == s.want {
			close(s.arrived)
		}
		select {
		case <-s.release:
		case <-r.Context().Done():
			return
		}
		w.Header().Set(outcome.HeaderOutcome, outcome.OK)
		w.Header().Set("X-Unrelated", "dropped")
		io.WriteString(w, "a body that is not stored")
	}))
	t.Cleanup(func() {
		s.Release()
		s.Close()
	})
	return s
}

// Release lets every held and future request finish.
func (s *stalledServer) Release() { s.once.Do(func() { close(s.release) }) }

func startRun(t *testing.T, attacks []Attack, d time.Duration, opts ...Opt) *Run {
	t.Helper()
	r, err := Start(context.Background(), attacks, d, opts...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	return r
}

// decodeAll reads a raw results file the way the vegeta CLI does (format detection), and checks
// that Seq runs 0..n-1 without gaps.
func decodeAll(t *testing.T, name string, raw []byte) []vegeta.Result {
	t.Helper()
	var out []vegeta.Result
	if len(raw) == 0 {
		return nil
	}
	dec := vegeta.DecoderFor(bytes.NewReader(raw))
	if dec == nil {
		t.Fatalf("%s: the vegeta CLI's decoder does not recognise the file", name)
	}
	for {
		var r vegeta.Result
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: decode result %d: %v", name, len(out), err)
		}
		out = append(out, r)
	}
	seqs := make([]uint64, len(out))
	for i, r := range out {
		seqs[i] = r.Seq
	}
	slices.Sort(seqs)
	for i, s := range seqs {
		if s != uint64(i) {
			t.Fatalf("%s: Seq has a gap: sorted seq[%d] = %d", name, i, s)
		}
	}
	if got := bytes.Count(raw, []byte("\n")); got != len(out) {
		t.Fatalf("%s: %d lines but %d results", name, got, len(out))
	}
	return out
}

// The open model at small scale: with every request held until all have arrived, the load
// generator still sends every scheduled request on time, and writes every result.
func TestOpenModelFidelity(t *testing.T) {
	const (
		rate     = 100
		duration = time.Second
	)
	tests := []struct {
		name     string
		arrivals Arrivals
	}{
		{"constant", ArrivalsConstant},
		{"poisson", ArrivalsPoisson},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pacer := mustPacer(t, rate, tt.arrivals, 3)
			due := pacer.Hits(duration)
			srv := newStalledServer(t, int64(due))
			var out bytes.Buffer
			r := startRun(t, []Attack{{Name: "/a", URL: srv.URL + "/a", Pacer: pacer, Out: &out}}, duration,
				WithTimeout(5*time.Second))
			var (
				checks []Check
				err    error
				waited = make(chan struct{})
			)
			go func() {
				checks, err = r.Wait()
				close(waited)
			}()

			// Every scheduled request is out while none has been answered: nothing waits for a
			// response before sending the next. (If fewer are sent, the held ones end at the
			// client timeout and the counts below fail.)
			select {
			case <-srv.arrived:
				p := r.Progress()[0]
				if p.Sent != due || p.Done != 0 {
					t.Errorf("with every request held: Progress sent %d, done %d; want %d, 0", p.Sent, p.Done, due)
				}
				srv.Release()
			case <-waited:
			}
			<-waited
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			c := checks[0]
			if tt.arrivals == ArrivalsConstant && c.Scheduled != rate*uint64(duration/time.Second) {
				t.Errorf("constant: Scheduled = %d; want rate x duration = %d", c.Scheduled, rate)
			}
			if c.Scheduled != due || c.Sent != due || c.Dropped != 0 || c.Stopped {
				t.Errorf("Check scheduled %d, sent %d, dropped %d, stopped %v; want %d, %d, 0, false (%v)",
					c.Scheduled, c.Sent, c.Dropped, c.Stopped, due, due, c.Reasons)
			}
			if got := srv.count.Load(); got != int64(due) {
				t.Errorf("server saw %d requests; want %d", got, due)
			}
			if c.Classes["ok"] != due || c.Codes[200] != due {
				t.Errorf("Classes %v, Codes %v; want %d ok", c.Classes, c.Codes, due)
			}
			if c.LagP50 > c.LagP99 || c.LagP99 > c.LagMax {
				t.Errorf("lag quantiles out of order: p50 %v, p99 %v, max %v", c.LagP50, c.LagP99, c.LagMax)
			}
			if p := r.Progress()[0]; p.Sent != due || p.Done != due || p.Errors != 0 {
				t.Errorf("Progress after Wait = %+v; want sent = done = %d, no errors", p, due)
			}

			results := decodeAll(t, "/a", out.Bytes())
			if uint64(len(results)) != due {
				t.Fatalf("file has %d results; want %d", len(results), due)
			}
			var lags []time.Duration
			for _, res := range results {
				if res.Attack != "/a" || res.Code != 200 || len(res.Body) != 0 || res.BytesIn == 0 {
					t.Fatalf("result %d: attack %q code %d body %q bytes in %d; want /a, 200, no body, bytes counted",
						res.Seq, res.Attack, res.Code, res.Body, res.BytesIn)
				}
				want := http.Header{
					outcome.HeaderOutcome:   {outcome.OK},
					outcome.HeaderScheduled: {strconv.FormatInt(int64(pacer.Scheduled(res.Seq)), 10)},
					outcome.HeaderClass:     {"ok"},
				}
				if !equalHeader(res.Headers, want) {
					t.Fatalf("result %d headers %v; want %v", res.Seq, res.Headers, want)
				}
				// The stored schedule and send time reproduce the lag the check measured, on the
				// attack's own clock (T0 + StartSkew).
				lag := res.Timestamp.Sub(r.T0().Add(c.StartSkew)) - pacer.Scheduled(res.Seq)
				if lag < -time.Microsecond || lag > c.LagMax+time.Microsecond {
					t.Fatalf("result %d: lag from the file %v outside [0, LagMax %v]", res.Seq, lag, c.LagMax)
				}
				lags = append(lags, max(lag, 0))
			}
			// The check's quantiles are exact: an independent nearest-rank recomputation over
			// the lags in the file gives the same, up to the file's wall-clock timestamps
			// against the check's monotonic clock (well under a microsecond).
			for _, q := range []struct {
				name string
				got  time.Duration
				q    float64
			}{{"p50", c.LagP50, 0.50}, {"p99", c.LagP99, 0.99}, {"max", c.LagMax, 1}} {
				if want := nearestRank(lags, q.q); (q.got - want).Abs() > time.Microsecond {
					t.Errorf("lag %s = %v; nearest rank over the file's %d lags = %v", q.name, q.got, len(lags), want)
				}
			}
		})
	}
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// A worker cap of one turns the open model into a closed loop against a stalled server; the
// check must say so rather than report a clean run.
func TestTinyWorkerCapIsDetected(t *testing.T) {
	const duration = 300 * time.Millisecond
	srv := newStalledServer(t, -1) // never released: each request ends at the client timeout
	pacer := mustPacer(t, 100, ArrivalsConstant, 0)
	r := startRun(t, []Attack{{Name: "/a", URL: srv.URL, Pacer: pacer, Out: io.Discard}}, duration,
		WithMaxWorkers(1), WithTimeout(50*time.Millisecond))
	checks, err := r.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	c := checks[0]
	if c.Scheduled != 30 {
		t.Errorf("Scheduled = %d; want 30 (100/s for 300ms)", c.Scheduled)
	}
	if c.Valid || c.Dropped == 0 || c.Dropped != c.Scheduled-c.Sent {
		t.Fatalf("Check valid %v, scheduled %d, sent %d, dropped %d; want invalid with scheduled - sent dropped",
			c.Valid, c.Scheduled, c.Sent, c.Dropped)
	}
	if !containsPrefix(c.Reasons, "dropped ") {
		t.Errorf("Reasons %q do not name the dropped sends", c.Reasons)
	}
	if c.Classes["timeout:client"] != c.Sent {
		t.Errorf("Classes %v; want every one of %d sent timeout:client", c.Classes, c.Sent)
	}
}

func containsPrefix(ss []string, prefix string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// Stop cuts the run short: the file stays well-formed and the check counts only what was due
// by the stop.
func TestStopMidRun(t *testing.T) {
	const stopAfter = 20
	tests := []struct {
		name string
		stop func(r *Run, cancel context.CancelFunc)
	}{
		{"Stop", func(r *Run, _ context.CancelFunc) { r.Stop(); r.Stop() }},
		{"ctx", func(_ *Run, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached := make(chan struct{})
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == stopAfter {
					close(reached)
				}
			}))
			defer srv.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pacer := mustPacer(t, 100, ArrivalsConstant, 0)
			var out bytes.Buffer
			r, err := Start(ctx, []Attack{{Name: "/b", URL: srv.URL, Pacer: pacer, Out: &out}}, 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			<-reached
			tt.stop(r, cancel)
			checks, err := r.Wait()
			if err != nil {
				t.Fatalf("Wait: %v", err)
			}
			c := checks[0]
			full := pacer.Hits(10 * time.Second)
			if !c.Stopped || c.Scheduled >= full || c.Sent < stopAfter || c.Sent > c.Scheduled {
				t.Errorf("Check stopped %v, scheduled %d, sent %d; want stopped, %d <= sent <= scheduled < %d",
					c.Stopped, c.Scheduled, c.Sent, stopAfter, full)
			}
			if results := decodeAll(t, "/b", out.Bytes()); uint64(len(results)) != c.Sent {
				t.Errorf("file has %d results; Check says %d sent", len(results), c.Sent)
			}
			if again, _ := r.Wait(); again[0].Sent != c.Sent {
				t.Errorf("second Wait returned a different check")
			}
		})
	}
}

// Each outcome of the service and each transport failure arrives as its class.
func TestClassesEndToEnd(t *testing.T) {
	respond := func(code int, oc, reason string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if oc != "" {
				w.Header().Set(outcome.HeaderOutcome, oc)
				w.Header().Set(outcome.HeaderDependency, "A")
			}
			if reason != "" {
				w.Header().Set(outcome.HeaderReason, reason)
			}
			w.WriteHeader(code)
		}
	}
	hijack := func(reset bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			if reset {
				conn.(*net.TCPConn).SetLinger(0)
			}
			conn.Close()
		}
	}
	hold := make(chan struct{})
	defer close(hold)
	mux := http.NewServeMux()
	routes := map[string]http.HandlerFunc{
		"/ok":       respond(200, outcome.OK, ""),
		"/full":     respond(503, outcome.Rejected, outcome.ReasonFull),
		"/breaker":  respond(503, outcome.Rejected, outcome.ReasonBreakerOpen),
		"/deptime":  respond(504, outcome.Timeout, ""),
		"/upstream": respond(502, outcome.Upstream, "status-500"),
		"/missing":  respond(404, "", ""),
		"/eof":      hijack(false),
		"/reset":    hijack(true),
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		},
	}
	for path, h := range routes {
		mux.Handle(path, h)
	}
	srv := httptest.NewServer(mux)
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	refusedURL := closed.URL
	closed.Close()

	want := map[string]string{
		"/ok":       "ok",
		"/full":     "rejected:full",
		"/breaker":  "rejected:breaker-open",
		"/deptime":  "timeout:dependency",
		"/upstream": "upstream:status-500",
		"/missing":  "other:status-404",
		"/eof":      "connection:eof",
		"/reset":    "connection:reset",
		"/slow":     "timeout:client",
		"/refused":  "connection:refused",
	}
	var attacks []Attack
	outs := map[string]*bytes.Buffer{}
	for path := range want {
		base := srv.URL
		if path == "/refused" {
			base = refusedURL
		}
		outs[path] = &bytes.Buffer{}
		attacks = append(attacks, Attack{Name: path, URL: base + path, Pacer: mustPacer(t, 20, ArrivalsConstant, 0), Out: outs[path]})
	}
	r := startRun(t, attacks, 200*time.Millisecond, WithTimeout(100*time.Millisecond))
	checks, err := r.Wait()
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	for _, c := range checks {
		t.Run(c.Name, func(t *testing.T) {
			class := want[c.Name]
			if c.Sent != 4 || c.Classes[class] != c.Sent || len(c.Classes) != 1 {
				t.Fatalf("sent %d, classes %v; want 4 sent, all %s", c.Sent, c.Classes, class)
			}
			for _, res := range decodeAll(t, c.Name, outs[c.Name].Bytes()) {
				if got := res.Headers.Get(outcome.HeaderClass); got != class {
					t.Fatalf("stored class %q; want %q", got, class)
				}
				if strings.Contains(res.Headers.Get(outcome.HeaderClass), "127.0.0.1") {
					t.Fatalf("class embeds an address")
				}
			}
		})
	}
	p := r.Progress()
	for _, p := range p {
		wantErrs := uint64(4)
		if p.Name == "/ok" {
			wantErrs = 0
		}
		if p.Errors != wantErrs {
			t.Errorf("%s: Progress.Errors = %d; want %d", p.Name, p.Errors, wantErrs)
		}
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

// A writer that fails ends the run with the error and an invalid check, instead of a silent
// partial file.
func TestWriteFailure(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r := startRun(t, []Attack{{Name: "/a", URL: srv.URL, Pacer: mustPacer(t, 50, ArrivalsConstant, 0), Out: failingWriter{}}},
		200*time.Millisecond)
	checks, err := r.Wait()
	if !errors.Is(err, errDiskFull) {
		t.Fatalf("Wait error = %v; want one wrapping the writer's error", err)
	}
	if checks[0].Valid || !containsPrefix(checks[0].Reasons, "flush results of /a") {
		t.Errorf("Check valid %v, reasons %q; want invalid, naming the failed write", checks[0].Valid, checks[0].Reasons)
	}
}

func TestStartRejects(t *testing.T) {
	p := mustPacer(t, 10, ArrivalsConstant, 0)
	ok := Attack{Name: "/a", URL: "http://127.0.0.1:1/a", Pacer: p, Out: io.Discard}
	with := func(f func(*Attack)) []Attack { a := ok; f(&a); return []Attack{a} }
	tests := []struct {
		name     string
		attacks  []Attack
		duration time.Duration
		opts     []Opt
	}{
		{name: "no attacks", duration: time.Second},
		{name: "zero duration", attacks: []Attack{ok}},
		{name: "empty name", attacks: with(func(a *Attack) { a.Name = "" }), duration: time.Second},
		{name: "duplicate name", attacks: []Attack{ok, ok}, duration: time.Second},
		{name: "no pacer", attacks: with(func(a *Attack) { a.Pacer = nil }), duration: time.Second},
		{name: "zero pacer", attacks: with(func(a *Attack) { a.Pacer = ConstantPacer{} }), duration: time.Second},
		{name: "no writer", attacks: with(func(a *Attack) { a.Out = nil }), duration: time.Second},
		{name: "relative url", attacks: with(func(a *Attack) { a.URL = "/a" }), duration: time.Second},
		{name: "other scheme", attacks: with(func(a *Attack) { a.URL = "ftp://127.0.0.1/a" }), duration: time.Second},
		{name: "zero timeout", attacks: []Attack{ok}, duration: time.Second, opts: []Opt{WithTimeout(0)}},
		{name: "zero workers", attacks: []Attack{ok}, duration: time.Second, opts: []Opt{WithMaxWorkers(0)}},
		{name: "zero connections", attacks: []Attack{ok}, duration: time.Second, opts: []Opt{WithConnections(0)}},
		{name: "zero lag limit", attacks: []Attack{ok}, duration: time.Second, opts: []Opt{WithLagLimit(0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Start(context.Background(), tt.attacks, tt.duration, tt.opts...)
			if !errors.Is(err, ErrInvalid) || r != nil {
				t.Fatalf("Start = %v, %v; want nil and an error wrapping ErrInvalid", r, err)
			}
		})
	}
	t.Run("ctx already done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if r, err := Start(ctx, []Attack{ok}, time.Second); !errors.Is(err, context.Canceled) || r != nil {
			t.Fatalf("Start = %v, %v; want nil and context.Canceled", r, err)
		}
	})
}

// Start opens each attack's first connections before T0, one per worker it starts with, and
// sends nothing on them: the server sees exactly the requests the results hold.
func TestStartOpensTheFirstConnectionsBeforeT0(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	defer srv.Close()
	var out bytes.Buffer
	r := startRun(t, []Attack{{Name: "/", URL: srv.URL + "/", Pacer: mustPacer(t, 300, ArrivalsConstant, 0), Out: &out}}, 100*time.Millisecond)
	a := r.attacks[0]
	warmed, dialsAtT0 := a.warmed, a.transport.(*h1.Transport).Dials()
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if a.workers != 3 || warmed != 3 || dialsAtT0 != 3 {
		t.Errorf("at 300/s: %d workers, %d connections warmed and %d dialed before T0, want 3 each", a.workers, warmed, dialsAtT0)
	}
	results := decodeAll(t, "/", out.Bytes())
	if got := requests.Load(); got != int64(len(results)) || got != int64(checks[0].Sent) {
		t.Errorf("the server saw %d requests, the results hold %d and the check counts %d sent", got, len(results), checks[0].Sent)
	}
}

// WithoutWarm: no connection before T0; the first send dials.
func TestStartWithoutWarmOpensNoConnectionBeforeT0(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	r := startRun(t, []Attack{{Name: "/", URL: srv.URL + "/", Pacer: mustPacer(t, 1, ArrivalsConstant, 0), Out: io.Discard}}, 100*time.Millisecond, WithoutWarm())
	warmed := r.attacks[0].warmed
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	if warmed != 0 {
		t.Errorf("WithoutWarm: %d connections opened before T0, want 0", warmed)
	}
}

// An attack warms connections for warmSpan of its peak rate, for every worker it starts with, and
// no more than it may keep idle.
func TestWarmConnectionsCoverTheWorkersAndAFewMillisecondsOfSends(t *testing.T) {
	for _, tc := range []struct {
		rate        float64
		maxWorkers  uint64
		connections int
		want        int
	}{
		{1, DefaultMaxWorkers, DefaultConnections, 1},         // one worker, one connection
		{300, DefaultMaxWorkers, DefaultConnections, 3},       // 3 workers (10 ms of sends) outnumber 5 ms of sends
		{8000, DefaultMaxWorkers, DefaultConnections, 40},     // 5 ms of sends: 40 in flight at once before a dial
		{100_000, DefaultMaxWorkers, DefaultConnections, 500}, // no cap of its own
		{8000, 25, DefaultConnections, 25},                    // the workers the attack may have
		{8000, DefaultMaxWorkers, 16, 16},                     // the idle connections it may keep
	} {
		workers := initialWorkers(tc.rate, tc.maxWorkers)
		if got := warmConnections(tc.rate, workers, tc.maxWorkers, tc.connections); got != tc.want {
			t.Errorf("warmConnections(%v/s, %d workers of %d, %d connections) = %d, want %d", tc.rate, workers, tc.maxWorkers, tc.connections, got, tc.want)
		}
	}
}

// The rolling window behind Progress, on a synthetic clock.
func TestWindow(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newWindow(t0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	w.add(at(0), 10*time.Millisecond, false)
	for i := range 98 {
		w.add(at(500*time.Millisecond+time.Duration(i)*time.Millisecond), 10*time.Millisecond, false)
	}
	w.add(at(900*time.Millisecond), 2*time.Second, true)

	tests := []struct {
		name string
		now  time.Duration
		done uint64
		errs uint64
		p99  time.Duration
	}{
		// The window is the second of complete slots before now's; p99 is the nearest rank.
		{"the slot being filled is not counted yet", 950 * time.Millisecond, 99, 0, 10 * time.Millisecond},
		{"the whole first second", 1050 * time.Millisecond, 100, 1, 10 * time.Millisecond},
		{"the first slot has aged out", 1150 * time.Millisecond, 99, 1, 2 * time.Second},
		{"everything aged out", 3 * time.Second, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			done, errs, p99 := w.read(at(tt.now))
			if done != tt.done || errs != tt.errs {
				t.Errorf("read = %d done, %d errors; want %d, %d", done, errs, tt.done, tt.errs)
			}
			if p99 != tt.p99 {
				t.Errorf("p99 = %v; want %v", p99, tt.p99)
			}
		})
	}
	// A slot is reused once its second has passed, and counted once complete.
	w.add(at(10*time.Second), time.Millisecond, false)
	if done, _, _ := w.read(at(10*time.Second + 100*time.Millisecond)); done != 1 {
		t.Errorf("after reuse: %d done; want 1", done)
	}
}

// At a steady rate the window's count is the rate, whenever it is read: 50 completions a second
// read as 50, not the 45 of a window that counted the slot being filled.
func TestWindowCountsTheRate(t *testing.T) {
	t0 := time.Unix(1000, 0)
	w := newWindow(t0)
	for i := range 150 { // 50/s for 3 s, read between completions from the first full second on
		at := time.Duration(i) * 20 * time.Millisecond
		w.add(t0.Add(at), time.Millisecond, false)
		if now := at + 7*time.Millisecond; now >= time.Second {
			if done, _, _ := w.read(t0.Add(now)); done != 50 {
				t.Fatalf("read at %v = %d done, want 50", now, done)
			}
		}
	}
}

// Attacks too sparse for a p99 of their own are judged together: with a lag limit no real send
// can meet, each sparse attack passes its own check while the pooled check fails.
func TestSparseAttacksAreJudgedPooled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	var attacks []Attack
	for i := 0; i < 3; i++ {
		p, err := NewPacer(20, ArrivalsConstant, 1)
		if err != nil {
			t.Fatal(err)
		}
		attacks = append(attacks, Attack{Name: fmt.Sprintf("/p%d", i), URL: srv.URL, Pacer: p, Out: io.Discard})
	}
	r := startRun(t, attacks, 500*time.Millisecond, WithLagLimit(time.Nanosecond))
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range checks {
		if !c.Valid || c.Sent != 10 {
			t.Errorf("%s: valid %v sent %d reasons %v; want valid with 10 sent (too few sends for its own p99)", c.Name, c.Valid, c.Sent, c.Reasons)
		}
	}
	pooled := r.Pooled()
	if pooled.Valid || pooled.Sent != 30 || pooled.Scheduled != 30 {
		t.Errorf("pooled: valid %v sent %d scheduled %d; want invalid with 30 of 30", pooled.Valid, pooled.Sent, pooled.Scheduled)
	}
}

// Starting an attack reserves memory for its machinery only, nothing sized for the samples it
// may measure (issue 12: an HDR lag histogram of 221 KB, 11 window histograms of 26.7 KB and a
// 64 KB buffer each used to be allocated up front).
func TestStartReservesLittlePerAttack(t *testing.T) {
	const (
		n        = 200
		perLimit = 32 << 10
	)
	attacks := make([]Attack, n)
	for i := range attacks {
		// 1/s for 100 ms: nothing is due, so nothing is sent.
		attacks[i] = Attack{Name: fmt.Sprintf("/p%03d", i), URL: "http://127.0.0.1:9/", Pacer: mustPacer(t, 1, ArrivalsConstant, 0), Out: io.Discard}
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := startRun(t, attacks, 100*time.Millisecond)
	runtime.ReadMemStats(&after)
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if checks[0].Sent != 0 {
		t.Fatalf("sent %d; want nothing due", checks[0].Sent)
	}
	per := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("Start allocated %d bytes per attack", per)
	if per > perLimit {
		t.Errorf("Start allocated %d bytes per attack; want at most %d", per, perLimit)
	}
}

// Shards' progress adds up: counts and windows sum, the window's error rate is the pooled share
// (each shard weighted by its window), and the p99 is the worst shard's.
func TestProgressAdd(t *testing.T) {
	var p Progress
	p.Add(Progress{Sent: 100, Done: 90, Errors: 10, Window: 20, ErrorRate: 0.5, P99: 3 * time.Millisecond})
	p.Add(Progress{Sent: 100, Done: 95, Errors: 3, Window: 30, ErrorRate: 0.1, P99: 9 * time.Millisecond})
	want := Progress{Sent: 200, Done: 185, Errors: 13, Window: 50, ErrorRate: (10 + 3) / 50.0, P99: 9 * time.Millisecond}
	if math.Abs(p.ErrorRate-want.ErrorRate) > 1e-12 {
		t.Errorf("error rate %v, want %v (13 of the window's 50)", p.ErrorRate, want.ErrorRate)
	}
	p.ErrorRate = want.ErrorRate
	if p != want {
		t.Errorf("got %+v, want %+v", p, want)
	}
	var idle Progress
	idle.Add(Progress{Sent: 5, Done: 5})
	if idle.ErrorRate != 0 || idle.Window != 0 {
		t.Errorf("an empty window: %+v, want no error rate", idle)
	}
}
