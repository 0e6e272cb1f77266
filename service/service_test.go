package service

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// fakeDep is a dependency held open by a channel: with hold set, every request waits until
// release is closed (or its own context ends, reported on cancelled); then it answers status.
type fakeDep struct {
	srv       *httptest.Server
	arrived   chan struct{}
	cancelled chan struct{}
	release   chan struct{}
	once      sync.Once
}

func newFakeDep(t *testing.T, hold bool, status int) *fakeDep {
	t.Helper()
	f := &fakeDep{
		arrived:   make(chan struct{}, 64),
		cancelled: make(chan struct{}, 64),
		release:   make(chan struct{}),
	}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.arrived <- struct{}{}
		if hold {
			select {
			case <-f.release:
			case <-r.Context().Done():
				f.cancelled <- struct{}{}
				return
			}
		}
		w.WriteHeader(status)
		io.WriteString(w, "dep\n")
	}))
	t.Cleanup(func() { f.Release(); f.srv.Close() })
	return f
}

// Release lets every held request (and every later one) answer.
func (f *fakeDep) Release() { f.once.Do(func() { close(f.release) }) }

// waitArrived blocks until n requests have reached the fake.
func (f *fakeDep) waitArrived(n int) {
	for range n {
		<-f.arrived
	}
}

// testService starts a service for cfg on a loopback port and returns it, its URL and a client.
// Cleanup releases the fakes, shuts the service down and checks that no goroutine is left.
func testService(t *testing.T, cfg Config, fakes ...*fakeDep) (*Service, string, *http.Client) {
	t.Helper()
	base := runtime.NumGoroutine()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	url, err := s.Start("")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	client := &http.Client{Transport: tr}
	t.Cleanup(func() {
		for _, f := range fakes {
			f.Release()
		}
		if err := s.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		tr.CloseIdleConnections()
		checkNoLeak(t, base)
	})
	return s, url, client
}

// result is the outcome of one request as a load generator sees it.
type result struct {
	status                       int
	outcome, pool, reason, depen string
}

func get(t *testing.T, c *http.Client, url string) result {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Errorf("GET %s: %v", url, err)
		return result{}
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h := resp.Header
	return result{resp.StatusCode, h.Get(outcome.HeaderOutcome), h.Get(outcome.HeaderPool), h.Get(outcome.HeaderReason), h.Get(outcome.HeaderDependency)}
}

// goGet issues the request in a goroutine and returns where its result arrives.
func goGet(t *testing.T, c *http.Client, url string) <-chan result {
	out := make(chan result, 1)
	go func() { out <- get(t, c, url) }()
	return out
}

func twoDeps(mode Mode, p int, a, b *fakeDep, timeout time.Duration) Config {
	names := []string{"A", "B"}
	return Config{
		Mode:  mode,
		Pools: layout(mode, p, names, timeout),
		Dependencies: []DependencyConfig{
			{Name: "A", URL: a.srv.URL},
			{Name: "B", URL: b.srv.URL},
		},
		Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}},
		ClientTimeout: timeout,
	}
}

var ok = result{200, outcome.OK, "", "", ""}

// TestSharedPoolStarvesB is the bulkhead claim in miniature: A stalls (held open) and only /a calls
// it. With one shared pool of P=2 workers (queue 4), A's calls take both workers and fill the
// queue, and /b, which never calls A, is turned away. With split pools of P/2, A's calls are
// rejected at once once A's one permit is taken, and /b keeps answering 200.
func TestSharedPoolStarvesB(t *testing.T) {
	t.Run("shared", func(t *testing.T) {
		a, b := newFakeDep(t, true, 200), newFakeDep(t, false, 200)
		s, url, c := testService(t, twoDeps(ModeShared, 2, a, b, time.Minute), a, b)

		if got := get(t, c, url+"/b"); got != ok {
			t.Fatalf("baseline /b = %+v, want ok", got)
		}
		var held []<-chan result
		for range 2 { // both workers into A
			held = append(held, goGet(t, c, url+"/a"))
		}
		a.waitArrived(2)
		for range 4 { // the queue fills behind them
			held = append(held, goGet(t, c, url+"/a"))
		}
		eventually(t, "queue full", func() bool { return s.Snapshot().Pools[0].Waiting == 4 })

		want := result{503, outcome.Rejected, "shared", outcome.ReasonQueueFull, "B"}
		if got := get(t, c, url+"/b"); got != want {
			t.Errorf("/b while A stalls = %+v, want %+v", got, want)
		}
		a.Release()
		for _, h := range held {
			if got := <-h; got != ok {
				t.Errorf("/a after release = %+v, want ok", got)
			}
		}
	})
	t.Run("split", func(t *testing.T) {
		a, b := newFakeDep(t, true, 200), newFakeDep(t, false, 200)
		_, url, c := testService(t, twoDeps(ModeSplit, 2, a, b, time.Minute), a, b)

		held := goGet(t, c, url+"/a")
		a.waitArrived(1)
		wantA := result{503, outcome.Rejected, "A", outcome.ReasonFull, "A"}
		if got := get(t, c, url+"/a"); got != wantA {
			t.Errorf("second /a while A stalls = %+v, want %+v", got, wantA)
		}
		for range 3 {
			if got := get(t, c, url+"/b"); got != ok {
				t.Errorf("/b while A stalls = %+v, want ok", got)
			}
		}
		a.Release()
		if got := <-held; got != ok {
			t.Errorf("/a after release = %+v, want ok", got)
		}
	})
}

// TestOutcomes checks every response class of the outcome contract: status and headers.
func TestOutcomes(t *testing.T) {
	// refusedURL is a loopback port nobody listens on any more.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + l.Addr().String()
	l.Close()

	tests := []struct {
		name string
		// setup builds the config around fake A and may occupy resources first; the request
		// under test is GET /a.
		pool    []PoolConfig
		mode    Mode
		hold    bool
		status  int
		url     string // overrides A's URL
		raw     func(net.Conn)
		timeout time.Duration
		maxOut  int
		breaker *BreakerConfig
		occupy  int // /a requests held before the one under test
		queued  int // /a requests waiting in the pool before the one under test
		warmups int // /a requests completed before the one under test
		want    result
	}{
		{name: "ok", status: 200, want: ok},
		{name: "semaphore full", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Size: 1}}, hold: true, occupy: 1,
			want: result{503, outcome.Rejected, "A", outcome.ReasonFull, "A"}},
		{name: "workers full", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Kind: KindWorkers, Size: 1}}, hold: true, occupy: 1,
			want: result{503, outcome.Rejected, "A", outcome.ReasonFull, "A"}},
		{name: "semaphore queue full", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Size: 1, QueueCapacity: 1, MaxWait: time.Hour}}, hold: true, occupy: 1, queued: 1,
			want: result{503, outcome.Rejected, "A", outcome.ReasonQueueFull, "A"}},
		{name: "workers queue full", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Kind: KindWorkers, Size: 1, QueueCapacity: 2}}, hold: true, occupy: 1, queued: 2,
			want: result{503, outcome.Rejected, "A", outcome.ReasonQueueFull, "A"}},
		{name: "semaphore wait timeout", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Size: 1, QueueCapacity: 1, MaxWait: time.Millisecond}}, hold: true, occupy: 1,
			want: result{503, outcome.Rejected, "A", outcome.ReasonWaitTimeout, "A"}},
		{name: "workers wait timeout", mode: ModeSplit, pool: []PoolConfig{{Name: "A", Kind: KindWorkers, Size: 1, QueueCapacity: 1, MaxWait: time.Millisecond}}, hold: true, occupy: 1,
			want: result{503, outcome.Rejected, "A", outcome.ReasonWaitTimeout, "A"}},
		{name: "breaker open", status: 500, breaker: &BreakerConfig{MinCalls: 2, FailureRatio: 1, OpenTimeout: time.Hour}, warmups: 2,
			want: result{503, outcome.Rejected, "breaker:A", outcome.ReasonBreakerOpen, "A"}},
		{name: "dependency timeout", hold: true, timeout: 20 * time.Millisecond,
			want: result{504, outcome.Timeout, "", "", "A"}},
		{name: "status 500", status: 500, want: result{502, outcome.Upstream, "", "status-500", "A"}},
		{name: "status 429", status: 429, want: result{502, outcome.Upstream, "", "status-429", "A"}},
		{name: "refused", url: refusedURL, want: result{502, outcome.Upstream, "", ReasonRefused, "A"}},
		{name: "reset", raw: func(c net.Conn) {
			c.Read(make([]byte, 4096))
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}, want: result{502, outcome.Upstream, "", ReasonReset, "A"}},
		{name: "eof", raw: func(c net.Conn) {
			c.Read(make([]byte, 4096))
			c.Close()
		}, want: result{502, outcome.Upstream, "", ReasonEOF, "A"}},
		{name: "outbound conn limit", mode: ModeNone, hold: true, occupy: 1, maxOut: 1,
			want: result{502, outcome.Upstream, "", ReasonConnLimit, "A"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeDep(t, tt.hold, cmpOr(tt.status, 200))
			depURL := a.srv.URL
			if tt.url != "" {
				depURL = tt.url
			}
			if tt.raw != nil {
				depURL = rawServer(t, tt.raw)
			}
			mode, pools := tt.mode, tt.pool
			if mode == "" {
				mode, pools = ModeShared, []PoolConfig{{Name: "shared", Size: 8}}
			}
			for i := range pools {
				pools[i].Dependencies = []string{"A"}
			}
			if mode == ModeNone {
				pools = nil
			}
			cfg := Config{
				Mode:             mode,
				Pools:            pools,
				Dependencies:     []DependencyConfig{{Name: "A", URL: depURL, Breaker: tt.breaker}},
				Endpoints:        []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
				ClientTimeout:    cmpOr(tt.timeout, time.Minute),
				MaxOutboundConns: tt.maxOut,
			}
			s, url, c := testService(t, cfg, a)
			var held []<-chan result
			for range tt.occupy {
				held = append(held, goGet(t, c, url+"/a"))
			}
			a.waitArrived(tt.occupy)
			for range tt.queued {
				held = append(held, goGet(t, c, url+"/a"))
			}
			eventually(t, "callers queued", func() bool {
				sn := s.Snapshot()
				return len(sn.Pools) == 0 || sn.Pools[0].Waiting == tt.queued
			})
			for range tt.warmups {
				get(t, c, url+"/a")
			}
			if got := get(t, c, url+"/a"); got != tt.want {
				t.Errorf("GET /a = %+v, want %+v", got, tt.want)
			}
			a.Release()
			for _, h := range held {
				<-h
			}
		})
	}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// rawServer serves every TCP connection with handle, for failures net/http cannot produce.
func rawServer(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { handle(c) })
		}
	})
	t.Cleanup(func() { l.Close(); wg.Wait() })
	return "http://" + l.Addr().String()
}

// fakeClock replaces the request budgets' timers: each budget is announced on created and
// fires only when the test calls fire.
type fakeClock struct{ created chan *fakeTimer }

type fakeTimer struct {
	mu      sync.Mutex
	f       func()
	stopped bool
}

func (c *fakeClock) afterFunc(_ time.Duration, f func()) func() bool {
	t := &fakeTimer{f: f}
	c.created <- t
	return func() bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

func (t *fakeTimer) fire() {
	t.mu.Lock()
	stopped := t.stopped
	t.stopped = true
	t.mu.Unlock()
	if !stopped {
		t.f()
	}
}

// TestDeadlines is the budget arithmetic of a fan-out with both calls of /ab stalled. Per-call: the
// wait for A gets one budget; when A answers, the wait for B gets a fresh one, so the worst case
// is two budgets back to back. Shared: one budget for the whole request; when it runs out both
// calls are cut and the request ends with one timeout, naming A (the first wait in order).
func TestDeadlines(t *testing.T) {
	setup := func(t *testing.T, d Deadline) (*fakeDep, *fakeDep, *fakeClock, <-chan result) {
		a, b := newFakeDep(t, true, 200), newFakeDep(t, true, 200)
		cfg := twoDeps(ModeNone, 0, a, b, time.Minute)
		cfg.Endpoints = []EndpointConfig{{Path: "/ab", Calls: []string{"A", "B"}, Deadline: d}}
		s, url, c := testService(t, cfg, a, b)
		clock := &fakeClock{created: make(chan *fakeTimer, 4)}
		s.afterFunc = clock.afterFunc
		res := goGet(t, c, url+"/ab")
		a.waitArrived(1)
		b.waitArrived(1)
		return a, b, clock, res
	}

	t.Run("per-call", func(t *testing.T) {
		a, b, clock, res := setup(t, DeadlinePerCall)
		budgetA := <-clock.created
		a.Release() // A answers inside its budget
		budgetB := <-clock.created
		if budgetA.stop() {
			t.Error("A's budget still running after A answered")
		}
		select {
		case <-b.cancelled:
			t.Fatal("B was cut before its own budget ran out")
		default:
		}
		budgetB.fire()
		<-b.cancelled
		if got, want := <-res, (result{504, outcome.Timeout, "", "", "B"}); got != want {
			t.Errorf("/ab = %+v, want %+v", got, want)
		}
	})
	t.Run("shared", func(t *testing.T) {
		a, b, clock, res := setup(t, DeadlineShared)
		budget := <-clock.created
		budget.fire()
		<-a.cancelled
		<-b.cancelled
		if got, want := <-res, (result{504, outcome.Timeout, "", "", "A"}); got != want {
			t.Errorf("/ab = %+v, want %+v", got, want)
		}
		if n := len(clock.created); n != 0 {
			t.Errorf("%d more budgets started, want one budget for the request", n)
		}
	})
}

// stop reports whether the timer was still running, and stops it.
func (t *fakeTimer) stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	was := !t.stopped
	t.stopped = true
	return was
}

// TestBreakerTripsOnSlowCalls: a dependency that answers 200, slowly. With a slow-call
// threshold every call counts as a failure and the breaker opens after MinCalls; without one the
// breaker never sees a failure.
func TestBreakerTripsOnSlowCalls(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration
		want      []int // status of each of 5 calls
		state     string
	}{
		// 1ns: every real call is slower, so every call is "slow" but succeeds.
		{"slow calls count as failures", time.Nanosecond, []int{200, 200, 200, 503, 503}, "open"},
		{"no threshold, successes only", 0, []int{200, 200, 200, 200, 200}, "closed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newFakeDep(t, false, 200)
			cfg := Config{
				Mode: ModeNone,
				Dependencies: []DependencyConfig{{Name: "A", URL: a.srv.URL, Breaker: &BreakerConfig{
					SlowCallThreshold: tt.threshold, MinCalls: 3, FailureRatio: 1, OpenTimeout: time.Hour,
				}}},
				Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
				ClientTimeout: time.Minute,
			}
			s, url, c := testService(t, cfg, a)
			var got []int
			for range 5 {
				got = append(got, get(t, c, url+"/a").status)
			}
			if !equal(got, tt.want) {
				t.Errorf("statuses = %v, want %v", got, tt.want)
			}
			if st := s.Snapshot().Dependencies[0]; st.BreakerState != tt.state || st.Calls != 3+uint64(countOf(tt.want, 200)-3) {
				t.Errorf("breaker %q with %d calls, want %q", st.BreakerState, st.Calls, tt.state)
			}
		})
	}
}

func equal(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func countOf(xs []int, v int) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}

// TestDebugEndpoints checks that /debug/resources and /metrics report the account while A holds
// its only permit and one call to A has been rejected.
func TestDebugEndpoints(t *testing.T) {
	a, b := newFakeDep(t, true, 200), newFakeDep(t, false, 200)
	cfg := twoDeps(ModeSplit, 2, a, b, time.Minute)
	cfg.MaxInboundConns = 16
	_, url, c := testService(t, cfg, a, b)
	held := goGet(t, c, url+"/a")
	a.waitArrived(1)
	get(t, c, url+"/a") // rejected: full
	get(t, c, url+"/b")

	resp, err := c.Get(url + DebugResourcesPath)
	if err != nil {
		t.Fatal(err)
	}
	var snap Snapshot
	err = json.NewDecoder(resp.Body).Decode(&snap)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("decode %s: %v", DebugResourcesPath, err)
	}
	if len(snap.Pools) != 2 || snap.Pools[0].Name != "A" || snap.Pools[0].InUse != 1 || snap.Pools[0].Rejected[outcome.ReasonFull] != 1 ||
		snap.Pools[1].Admitted != 1 || snap.Pools[1].InUse != 0 {
		t.Errorf("pools = %+v", snap.Pools)
	}
	if d := snap.Dependencies[0]; d.Name != "A" || d.InFlight != 1 || d.ConnsOpen != 1 || d.ConnsInUse != 1 || d.Calls != 1 {
		t.Errorf("dependency A = %+v, want 1 call in flight on 1 open connection", d)
	}
	if p := snap.Process; p.InFlight != 1 || p.InboundConns < 2 || p.InboundConnsCap != 16 || p.OutboundConns != 2 || p.Goroutines == 0 {
		t.Errorf("process = %+v, want 1 in flight (the held /a; debug paths are not counted), >= 2 inbound conns, 2 outbound", p)
	}

	resp, err = c.Get(url + MetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, line := range []string{
		// Resilience4j's names and labels, exactly.
		`resilience4j_bulkhead_available_concurrent_calls{name="A"} 0`,
		`resilience4j_bulkhead_available_concurrent_calls{name="B"} 1`,
		`resilience4j_bulkhead_max_allowed_concurrent_calls{name="A"} 1`,
		// This project's own.
		`bulkhead_pool_info{kind="semaphore",name="A"} 1`,
		`bulkhead_semaphore_waiting_calls{name="A"} 0`,
		`bulkhead_semaphore_waiting_capacity{name="A"} 0`,
		`bulkhead_rejected_calls_total{name="A",reason="full"} 1`,
		`bulkhead_rejected_calls_total{name="A",reason="queue-full"} 0`,
		`bulkhead_dependency_calls_in_flight{dependency="A"} 1`,
		`bulkhead_dependency_calls_in_flight_max{dependency="A"} 1`, // A alone in its pool of 1
		`bulkhead_dependency_calls_total{dependency="B"} 1`,
		// Per-endpoint requests: the rejected /a and the /b answered (the held /a is not done).
		`http_server_requests_total{code="503",endpoint="/a"} 1`,
		`http_server_requests_total{code="200",endpoint="/b"} 1`,
		`http_server_requests_total{code="200",endpoint="/a"} 0`,
		`http_server_request_duration_seconds_count{endpoint="/a"} 1`,
		`http_server_request_duration_seconds_count{endpoint="/b"} 1`,
		`bulkhead_process_inbound_connections_max 16`,
	} {
		if !strings.Contains(string(body), line+"\n") {
			t.Errorf("%s lacks %q", MetricsPath, line)
		}
	}
	// The standard Go and process collectors; no thread-pool series for semaphore pools.
	for _, prefix := range []string{"go_goroutines ", "go_memstats_heap_alloc_bytes ", "process_open_fds ", "process_resident_memory_bytes "} {
		if !strings.Contains(string(body), "\n"+prefix) {
			t.Errorf("%s lacks %q", MetricsPath, prefix)
		}
	}
	if strings.Contains(string(body), "resilience4j_bulkhead_active_thread_count{") {
		t.Errorf("%s has thread-pool series for semaphore pools", MetricsPath)
	}
	a.Release()
	<-held
}

func TestResources(t *testing.T) {
	snap := Snapshot{
		Pools: []PoolStats{
			{Name: "shared", Capacity: 4, InUse: 4, Waiting: 3, QueueCapacity: 8,
				Rejected: map[string]uint64{outcome.ReasonFull: 1, outcome.ReasonQueueFull: 5, outcome.ReasonWaitTimeout: 2}},
			{Name: "B", Capacity: 2, InUse: 1, Rejected: map[string]uint64{outcome.ReasonFull: 7}},
		},
		Dependencies: []DependencyStats{{Name: "A", ConnsOpen: 9}},
		Process: ProcessStats{Goroutines: 30, InboundConns: 5, InboundConnsCap: 10, OutboundConns: 9, OutboundConnsCap: 9, OutboundConnsRejected: 4,
			HeapBytes: 1 << 20, StackBytes: 64 << 10},
	}
	want := []outcome.Resource{
		{Name: "pool:shared", Capacity: 4, InUse: 4, Rejected: 3},
		{Name: "queue:shared", Capacity: 8, InUse: 3, Rejected: 5},
		{Name: "pool:B", Capacity: 2, InUse: 1, Rejected: 7},
		{Name: "conns:A", InUse: 9},
		{Name: "calls:A"},
		{Name: "inbound-conns", Capacity: 10, InUse: 5},
		{Name: "outbound-conns", Capacity: 9, InUse: 9, Rejected: 4},
		{Name: "goroutines", InUse: 30},
		{Name: "heap-bytes", InUse: 1 << 20},
		{Name: "stack-bytes", InUse: 64 << 10},
	}
	got := snap.Resources()
	if len(got) != len(want) {
		t.Fatalf("Resources = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Resources[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestHandlerWithoutServe runs the routes on a server the caller owns, as cmd or a test would,
// and checks that Shutdown still stops the worker goroutines.
func TestHandlerWithoutServe(t *testing.T) {
	base := runtime.NumGoroutine()
	a, b := newFakeDep(t, false, 200), newFakeDep(t, false, 200)
	s, err := New(twoDeps(ModeShared, 4, a, b, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	if got := get(t, srv.Client(), srv.URL+"/a"); got != ok {
		t.Errorf("/a = %+v, want ok", got)
	}
	if got := get(t, srv.Client(), srv.URL+"/nope"); got.status != 404 {
		t.Errorf("/nope status = %d, want 404", got.status)
	}
	srv.Close()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	a.srv.Close()
	b.srv.Close()
	checkNoLeak(t, base)
}
