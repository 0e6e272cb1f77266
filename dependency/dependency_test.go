package dependency

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// recordWaits replaces the server's wait with one that records each delay and returns at once.
func recordWaits(s *Server) *[]time.Duration {
	var mu sync.Mutex
	var got []time.Duration
	s.wait = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, d)
		return ctx.Err()
	}
	return &got
}

// signalWait makes the server's wait announce on entered before blocking as usual.
func signalWait(s *Server) <-chan struct{} {
	entered := make(chan struct{}, 16)
	real := s.wait
	s.wait = func(ctx context.Context, d time.Duration) error {
		entered <- struct{}{}
		return real(ctx, d)
	}
	return entered
}

func TestHandlerAnswers(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		failing    int
		wantStatus int
		wantBody   string
		wantWaits  int // how many times the delay was waited out
	}{
		{name: "healthy GET", method: http.MethodGet, wantStatus: 200, wantBody: `{"dependency":"A"}` + "\n", wantWaits: 1},
		{name: "healthy HEAD has no body", method: http.MethodHead, wantStatus: 200, wantBody: "", wantWaits: 1},
		{name: "POST is not allowed", method: http.MethodPost, wantStatus: 405, wantBody: "", wantWaits: 0},
		{name: "failing 500 answers at once", method: http.MethodGet, failing: 500, wantStatus: 500,
			wantBody: `{"dependency":"A","error":"injected status 500"}` + "\n", wantWaits: 0},
		{name: "failing 503 answers at once", method: http.MethodGet, failing: 503, wantStatus: 503,
			wantBody: `{"dependency":"A","error":"injected status 503"}` + "\n", wantWaits: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New(Config{Name: "A", Latency: time.Hour})
			waits := recordWaits(s)
			s.SetFailing(tt.failing)
			rec := httptest.NewRecorder()
			s.Handler().ServeHTTP(rec, httptest.NewRequest(tt.method, "/any/path", nil))
			if rec.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", rec.Code, tt.wantStatus)
			}
			if got := rec.Body.String(); got != tt.wantBody {
				t.Errorf("body = %q, want %q", got, tt.wantBody)
			}
			if got := rec.Header().Get(HeaderName); got != "A" {
				t.Errorf("%s = %q, want A", HeaderName, got)
			}
			if len(*waits) != tt.wantWaits {
				t.Errorf("waited %d times, want %d", len(*waits), tt.wantWaits)
			}
		})
	}
}

func TestSetFailingThenHealthyAgain(t *testing.T) {
	s := New(Config{Name: "B"})
	recordWaits(s)
	var got []int
	for _, status := range []int{0, 500, 0} {
		s.SetFailing(status)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		got = append(got, rec.Code)
	}
	want := []int{200, 500, 200}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("statuses = %v, want %v", got, want)
		}
	}
	if st := s.Stats(); st.Served != 2 || st.Failed != 1 || st.InFlight != 0 {
		t.Errorf("stats = %+v, want Served 2, Failed 1, InFlight 0", st)
	}
}

func TestSetFailingPanicsOnNonStatus(t *testing.T) {
	for _, status := range []int{-1, 42, 600} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("SetFailing(%d) did not panic", status)
				}
			}()
			New(Config{}).SetFailing(status)
		})
	}
}

func TestDelayIsLatencyPlusSeededJitter(t *testing.T) {
	const n = 50
	delays := func(cfg Config) []time.Duration {
		s := New(cfg)
		waits := recordWaits(s)
		for range n {
			s.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
		}
		return *waits
	}
	base := Config{Name: "A", Latency: 20 * time.Millisecond, Jitter: 10 * time.Millisecond, Seed: 7}
	first := delays(base)

	t.Run("every delay is in [latency, latency+jitter)", func(t *testing.T) {
		for i, d := range first {
			if d < base.Latency || d >= base.Latency+base.Jitter {
				t.Fatalf("delay[%d] = %v, outside [%v, %v)", i, d, base.Latency, base.Latency+base.Jitter)
			}
		}
	})
	t.Run("same seed gives the same sequence", func(t *testing.T) {
		again := delays(base)
		for i := range first {
			if first[i] != again[i] {
				t.Fatalf("delay[%d]: %v then %v with the same seed", i, first[i], again[i])
			}
		}
	})
	t.Run("another seed gives another sequence", func(t *testing.T) {
		other := base
		other.Seed = 8
		diff := delays(other)
		same := 0
		for i := range first {
			if first[i] == diff[i] {
				same++
			}
		}
		if same == n {
			t.Fatalf("seeds 7 and 8 gave identical delays")
		}
	})
	t.Run("zero jitter gives exactly the latency", func(t *testing.T) {
		cfg := base
		cfg.Jitter = 0
		for i, d := range delays(cfg) {
			if d != cfg.Latency {
				t.Fatalf("delay[%d] = %v, want %v", i, d, cfg.Latency)
			}
		}
	})
}

func TestSetLatencyAppliesToLaterRequests(t *testing.T) {
	s := New(Config{Latency: time.Second})
	waits := recordWaits(s)
	h := s.Handler()
	for _, d := range []time.Duration{0, 5 * time.Millisecond, -time.Second} {
		s.SetLatency(d)
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	}
	want := []time.Duration{0, 5 * time.Millisecond, 0}
	for i := range want {
		if (*waits)[i] != want[i] {
			t.Fatalf("delays = %v, want %v", *waits, want)
		}
	}
}

// TestLatencyAppliedOverHTTP checks the real wait end to end. Only a lower bound is asserted.
func TestLatencyAppliedOverHTTP(t *testing.T) {
	const latency = 30 * time.Millisecond
	s := New(Config{Name: "A", Latency: latency})
	url, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })

	start := time.Now()
	resp, err := http.Get(url + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	elapsed := time.Since(start)

	if resp.StatusCode != 200 || string(body) != `{"dependency":"A"}`+"\n" {
		t.Errorf("got %d %q", resp.StatusCode, body)
	}
	if elapsed < latency {
		t.Errorf("answered after %v, want at least %v", elapsed, latency)
	}
	if got := resp.Header.Get(HeaderDelay); got != latency.String() {
		t.Errorf("%s = %q, want %q", HeaderDelay, got, latency)
	}
}

func TestHandlerStopsWhenRequestCanceled(t *testing.T) {
	s := New(Config{Latency: time.Hour})
	entered := signalWait(s)
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	returned := make(chan struct{})
	var recovered any
	go func() {
		defer close(returned)
		defer func() { recovered = recover() }()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx))
	}()
	<-entered
	cancel()
	<-returned // hangs (test timeout) if the wait ignores the request context

	if recovered != http.ErrAbortHandler {
		t.Errorf("handler ended with %v, want panic(http.ErrAbortHandler) so no empty 200 is sent", recovered)
	}
	if rec.Body.Len() != 0 || rec.Flushed {
		t.Errorf("canceled request got an answer: %q", rec.Body.String())
	}
	if st := s.Stats(); st.Canceled != 1 || st.Served != 0 || st.InFlight != 0 {
		t.Errorf("stats = %+v, want Canceled 1, Served 0, InFlight 0", st)
	}
}

func TestClientGoneOverHTTP(t *testing.T) {
	s := New(Config{Latency: time.Hour})
	entered := signalWait(s)
	url, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/", nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client error = %v, want context.Canceled", err)
	}
	// Shutdown waits until the handler has returned and its connection is closed.
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Canceled != 1 || st.InFlight != 0 {
		t.Errorf("stats = %+v, want Canceled 1, InFlight 0", st)
	}
}

func TestCloseEndsWaitingHandlersAndIsFinal(t *testing.T) {
	s := New(Config{Latency: time.Hour})
	entered := signalWait(s)
	url, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		resp, err := http.Get(url + "/")
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-entered
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("request in flight during Close succeeded, want an error")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("Shutdown after Close: %v", err)
	}
	if _, err := s.Start(""); !errors.Is(err, ErrStarted) {
		t.Errorf("Start after Close = %v, want ErrStarted", err)
	}
	if _, err := http.Get(url + "/"); err == nil {
		t.Error("server still answers after Close")
	}
}

func TestStart(t *testing.T) {
	t.Run("second start fails", func(t *testing.T) {
		s := New(Config{})
		if _, err := s.Start(""); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.Start(""); !errors.Is(err, ErrStarted) {
			t.Errorf("second Start = %v, want ErrStarted", err)
		}
	})
	t.Run("listen error leaves it startable", func(t *testing.T) {
		s := New(Config{})
		if _, err := s.Start("256.0.0.1:0"); err == nil {
			t.Fatal("Start on an invalid address succeeded")
		}
		url, err := s.Start("")
		if err != nil {
			t.Fatalf("Start after a failed Start: %v", err)
		}
		defer s.Close()
		if s.URL() != url {
			t.Errorf("URL() = %q, want %q", s.URL(), url)
		}
	})
	t.Run("close before start is a no-op", func(t *testing.T) {
		if err := New(Config{}).Close(); err != nil {
			t.Error(err)
		}
	})
}

func ExampleServer_Handler() {
	dep := New(Config{Name: "A"})
	srv := httptest.NewServer(dep.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
	// Output: 200 {"dependency":"A"}
}
