package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// scripted is a LimitAlgorithm that returns the estimates it is given, in order, and keeps the
// samples it saw: a fake that isolates the pool from any real algorithm.
type scripted struct {
	next []float64
	got  []LimitSample
}

func (s *scripted) Update(x LimitSample) float64 {
	s.got = append(s.got, x)
	v := s.next[0]
	s.next = s.next[1:]
	return v
}

func (s *scripted) BaseRTT() time.Duration { return 0 }

// held is one call running in an adaptive pool until the test ends it.
type held struct {
	end  chan error
	done chan error
}

// start runs a call in p that returns what end is sent, once the pool admitted it; it returns
// after the call has been admitted or rejected.
func start(t *testing.T, p *Adaptive) *held {
	t.Helper()
	h := &held{end: make(chan error), done: make(chan error, 1)}
	in := make(chan struct{})
	go func() {
		h.done <- p.Do(context.Background(), func(context.Context) error {
			close(in)
			return <-h.end
		})
	}()
	select {
	case <-in:
	case err := <-h.done:
		h.done <- err
	}
	return h
}

// finish makes h's call return err at time at and waits for Do to return.
func (h *held) finish(clk *manualClock, at time.Duration, err error) error {
	clk.set(at)
	h.end <- err
	return <-h.done
}

// The pool admits calls while fewer than the limit are in flight and turns the next away at
// once; each call's outcome is a sample with its round-trip time and the calls in flight at its
// admission; the limit is the estimate's integer part within [min, size]; and the calls in
// flight are accounted exactly against the limit of each moment. Times in ns of a fake clock.
func TestAdaptiveAdmitsLearnsAndAccounts(t *testing.T) {
	clk := &manualClock{}
	alg := &scripted{next: []float64{1.9, 3.2, 99, 0.2}}
	p := NewAdaptive(PoolConfig{Name: "A", Kind: KindGradient2, Size: 5}, alg, 2, 1, clk.now)

	clk.set(10)
	a := start(t, p)
	clk.set(20)
	b := start(t, p) // 2 in flight = the limit: full from 20
	clk.set(25)
	err := p.Do(context.Background(), func(context.Context) error { t.Error("ran a call over the limit"); return nil })
	var re *RejectedError
	if !errors.As(err, &re) || !errors.Is(err, ErrFull) || re.Reason != outcome.ReasonFull || re.Pool != "A" {
		t.Fatalf("third call: %v, want a *RejectedError (full) from pool A", err)
	}
	// a returns at 30: estimate 1.9, limit 1, under the 2 in flight; then a leaves: still full.
	if err := a.finish(clk, 30, nil); err != nil {
		t.Fatal(err)
	}
	// b returns at 50 with a drop: estimate 3.2, limit 3.
	if err := b.finish(clk, 50, fmt.Errorf("call A: %w", ErrTimeout)); !errors.Is(err, ErrTimeout) {
		t.Fatalf("b: %v, want fn's error", err)
	}
	want := []LimitSample{{RTT: 20, InFlight: 1}, {RTT: 30, InFlight: 2, Dropped: true}}
	if fmt.Sprint(alg.got) != fmt.Sprint(want) {
		t.Errorf("samples %+v, want %+v", alg.got, want)
	}
	st := p.Account(100, true)
	wantSlots := Usage{At: 100,
		InUseNS:    1*10 + 2*10 + 1*20, // 1 in flight 10-20, 2 over 20-30, 1 over 30-50
		CapacityNS: 2*30 + 1*20 + 3*50, // limit 2 until 30, 1 until 50, 3 after
		AtCapacity: 30,                 // 20-50: 2 of 2, then 2 and 1 of 1
		Peak:       2, FirstFull: 20}
	if st.Slots != wantSlots || st.Capacity != 3 || st.InUse != 0 || st.Admitted != 2 || st.Rejected[outcome.ReasonFull] != 1 {
		t.Errorf("account %+v\nslots %+v\nwant  %+v, capacity 3, admitted 2, 1 rejected", st, st.Slots, wantSlots)
	}
	if l := st.Limit; l == nil || l.Min != 1 || l.Max != 5 || l.Estimate != 3.2 || l.Changes != 2 || l.Samples != 2 || l.Drops != 1 || l.RTT != 30 {
		t.Errorf("limit state %+v", st.Limit)
	}
	// Estimates beyond the bounds are clamped: 99 -> 5, 0.2 -> 1.
	for _, want := range []int{5, 1} {
		if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
			t.Fatal(err)
		}
		if got := p.Stats().Capacity; got != want {
			t.Errorf("limit %d, want %d", got, want)
		}
	}
	p.Close()
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Do after Close: %v, want ErrClosed", err)
	}
}

// What a call's outcome teaches: success and drops are samples, every other failure is ignored.
func TestAdaptiveSampleOf(t *testing.T) {
	for _, c := range []struct {
		name             string
		err              error
		counted, dropped bool
	}{
		{"success", nil, true, false},
		{"timeout", fmt.Errorf("call A: %w: %w", ErrTimeout, context.DeadlineExceeded), true, true},
		{"deadline", context.DeadlineExceeded, true, true},
		{"dependency's 503", fmt.Errorf("call A: %w", &StatusError{Dependency: "A", Code: 503}), true, true},
		{"dependency's 429", &StatusError{Dependency: "A", Code: 429}, true, true},
		{"dependency's 500", &StatusError{Dependency: "A", Code: 500}, false, false},
		{"reset", errors.New("read: connection reset by peer"), false, false},
		{"caller gone", context.Canceled, false, false},
	} {
		if counted, dropped := sampleOf(c.err); counted != c.counted || dropped != c.dropped {
			t.Errorf("%s: counted %v dropped %v, want %v %v", c.name, counted, dropped, c.counted, c.dropped)
		}
	}
}

// An adaptive pool in a running service, in front of a dependency that turns every call away
// with 503: each call is a drop, so AIMD backs the limit off by 0.9 per call (10, 9, 8, 7, 6,
// 5), and the snapshot, the resources and /metrics all carry the limit of the moment. The
// dependency's calls have no capacity of their own (the pool's limit moves).
func TestAdaptivePoolInTheService(t *testing.T) {
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer dep.Close()
	cfg := Config{
		Mode:          ModeSplit,
		Pools:         []PoolConfig{{Name: "A", Kind: KindAIMD, Size: 10, Dependencies: []string{"A"}, Params: &AIMDParams{InitialLimit: 10}}},
		Dependencies:  []DependencyConfig{{Name: "A", URL: dep.URL}},
		Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
		ClientTimeout: 5 * time.Second,
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	first := s.Sample()
	for range 5 {
		resp, err := http.Get(srv.URL + "/a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway {
			t.Fatalf("/a answered %d, want 502 (the dependency's 503)", resp.StatusCode)
		}
	}
	snap := s.Sample()
	p := snap.Pools[0]
	if p.Capacity != 5 || p.Limit == nil || p.Limit.Drops != 5 || p.Limit.Changes != 5 {
		t.Fatalf("pool after 5 drops: capacity %d, limit %+v; want 5 after 5 drops and changes", p.Capacity, p.Limit)
	}
	rs := snap.ResourcesSince(&first)
	pool, calls := findResource(rs, "pool:A"), findResource(rs, "calls:A")
	if pool.Capacity != 5 || pool.MeanCapacity <= 5 || pool.MeanCapacity > 10 {
		t.Errorf("pool:A capacity %v, mean capacity %v: want 5 now and a mean in (5, 10]", pool.Capacity, pool.MeanCapacity)
	}
	if calls.Capacity != 0 {
		t.Errorf("calls:A capacity %v, want 0 (no fixed cap of its own)", calls.Capacity)
	}
	if v, ok := gatherGauge(t, s.registry, "bulkhead_pool_limit", "A"); !ok || v != 5 {
		t.Errorf("bulkhead_pool_limit{name=A} = %v (present %v), want 5", v, ok)
	}
}

func findResource(rs []outcome.Resource, name string) outcome.Resource {
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	return outcome.Resource{}
}

// An adaptive pool has no waiting room, and its limit's bounds must fit its size.
func TestAdaptiveCheck(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*PoolConfig)
		want string
	}{
		{"queue", func(p *PoolConfig) { p.QueueCapacity = 3 }, "pools[0].queue: an adaptive pool rejects at once"},
		{"max wait", func(p *PoolConfig) { p.MaxWait = time.Second }, "pools[0].max_wait: an adaptive pool does not wait"},
		{"initial above size", func(p *PoolConfig) { p.Params = &VegasParams{InitialLimit: 20} }, "pools[0].initial_limit: must be at most size (10), got 20"},
	} {
		cfg := validConfig()
		cfg.Pools[0] = PoolConfig{Name: "A", Kind: KindVegas, Size: 10, Dependencies: []string{"A"}}
		c.edit(&cfg.Pools[0])
		err := cfg.Validate()
		if err == nil || !containsProblem(err.(*ValidationError), c.want) {
			t.Errorf("%s: Validate = %v, want a problem starting %q", c.name, err, c.want)
		}
	}
}

func containsProblem(ve *ValidationError, prefix string) bool {
	for _, p := range ve.Problems {
		if len(p.Error()) >= len(prefix) && p.Error()[:len(prefix)] == prefix {
			return true
		}
	}
	return false
}
