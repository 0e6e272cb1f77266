package service

import (
	"context"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// find returns the resource named name, and false when Resources has none of that name.
func find(rs []outcome.Resource, name string) (outcome.Resource, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return outcome.Resource{}, false
}

// TestResourcesCalls specifies calls:<dep>: its in-use count is the dependency's calls in flight,
// and it has a capacity only when the dependency's pool is its own.
func TestResourcesCalls(t *testing.T) {
	tests := []struct {
		name string
		snap Snapshot
		want outcome.Resource
	}{
		{
			// The fix for a slow B: B capped at two slots in a pool of its own.
			name: "dedicated pool: capacity is the pool size",
			snap: Snapshot{
				Pools:        []PoolStats{{Name: "B", Capacity: 2}, {Name: "AC", Capacity: 3}},
				Dependencies: []DependencyStats{{Name: "A", Pool: "AC"}, {Name: "B", Pool: "B", InFlight: 2}, {Name: "C", Pool: "AC"}},
			},
			want: outcome.Resource{Name: "calls:B", Capacity: 2, InUse: 2},
		},
		{
			name: "pool shared with other dependencies: no capacity of its own",
			snap: Snapshot{
				Pools:        []PoolStats{{Name: "AC", Capacity: 3}},
				Dependencies: []DependencyStats{{Name: "A", Pool: "AC", InFlight: 3}, {Name: "C", Pool: "AC"}},
			},
			want: outcome.Resource{Name: "calls:A", InUse: 3},
		},
		{
			name: "one shared pool over everything",
			snap: Snapshot{
				Pools:        []PoolStats{{Name: "shared", Capacity: 5}},
				Dependencies: []DependencyStats{{Name: "A", Pool: "shared"}, {Name: "B", Pool: "shared", InFlight: 5}},
			},
			want: outcome.Resource{Name: "calls:B", InUse: 5},
		},
		{
			name: "a shared pool that holds a single dependency is that dependency's cap",
			snap: Snapshot{
				Pools:        []PoolStats{{Name: "shared", Capacity: 5}},
				Dependencies: []DependencyStats{{Name: "A", Pool: "shared", InFlight: 1}},
			},
			want: outcome.Resource{Name: "calls:A", Capacity: 5, InUse: 1},
		},
		{
			name: "mode none: no pool, no capacity",
			snap: Snapshot{Dependencies: []DependencyStats{{Name: "A", InFlight: 7}}},
			want: outcome.Resource{Name: "calls:A", InUse: 7},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := find(tt.snap.Resources(), tt.want.Name)
			if !ok || got != tt.want {
				t.Errorf("%s = %+v (found %t), want %+v", tt.want.Name, got, ok, tt.want)
			}
		})
	}
}

// TestResourcesBreaker specifies breaker:<dep>: present only with a breaker, saturated (1/1)
// exactly while open, and counting the calls the breaker turned away.
func TestResourcesBreaker(t *testing.T) {
	tests := []struct {
		name    string
		dep     DependencyStats
		want    outcome.Resource
		present bool
	}{
		{"no breaker: no resource", DependencyStats{Name: "B"}, outcome.Resource{}, false},
		{"closed", DependencyStats{Name: "B", BreakerState: "closed"}, outcome.Resource{Name: "breaker:B", Capacity: 1}, true},
		{"half-open is not open", DependencyStats{Name: "B", BreakerState: "half-open", BreakerRejected: 4},
			outcome.Resource{Name: "breaker:B", Capacity: 1, Rejected: 4}, true},
		{"open", DependencyStats{Name: "B", BreakerState: "open", BreakerRejected: 9},
			outcome.Resource{Name: "breaker:B", Capacity: 1, InUse: 1, Rejected: 9}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := find(Snapshot{Dependencies: []DependencyStats{tt.dep}}.Resources(), "breaker:B")
			if ok != tt.present || got != tt.want {
				t.Errorf("breaker:B = %+v (present %t), want %+v (present %t)", got, ok, tt.want, tt.present)
			}
		})
	}
}

// TestResourcesLive checks the two resources on a running service: B's two slots held by calls
// in flight show as calls:B 2/2, and a breaker tripped by slow calls shows as breaker:A 1/1 with
// the call it then turned away.
func TestResourcesLive(t *testing.T) {
	t.Run("calls in flight against a dedicated pool", func(t *testing.T) {
		a, b := newFakeDep(t, false, 200), newFakeDep(t, true, 200)
		cfg := twoDeps(ModeSplit, 4, a, b, time.Minute) // semaphores of 2 per dependency
		s, url, c := testService(t, cfg, a, b)
		held := []<-chan result{goGet(t, c, url+"/b"), goGet(t, c, url+"/b")}
		b.waitArrived(2)
		rs := s.Snapshot().Resources()
		if got, _ := find(rs, "calls:B"); got != (outcome.Resource{Name: "calls:B", Capacity: 2, InUse: 2}) {
			t.Errorf("calls:B = %+v, want 2 of 2 in flight", got)
		}
		if got, _ := find(rs, "calls:A"); got != (outcome.Resource{Name: "calls:A", Capacity: 2}) {
			t.Errorf("calls:A = %+v, want 0 of 2", got)
		}
		b.Release()
		for _, h := range held {
			<-h
		}
	})
	t.Run("breaker opened by slow calls", func(t *testing.T) {
		a := newFakeDep(t, false, 200)
		cfg := Config{
			Mode: ModeNone,
			Dependencies: []DependencyConfig{{Name: "A", URL: a.srv.URL, Breaker: &BreakerConfig{
				SlowCallThreshold: time.Nanosecond, MinCalls: 2, FailureRatio: 1, OpenTimeout: time.Hour,
			}}},
			Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
			ClientTimeout: time.Minute,
		}
		s, url, c := testService(t, cfg, a)
		if got, _ := find(s.Snapshot().Resources(), "breaker:A"); got != (outcome.Resource{Name: "breaker:A", Capacity: 1}) {
			t.Errorf("before any call: breaker:A = %+v, want closed (0 of 1)", got)
		}
		var statuses []int
		for range 3 {
			statuses = append(statuses, get(t, c, url+"/a").status)
		}
		if !equal(statuses, []int{200, 200, 503}) {
			t.Fatalf("statuses = %v, want two slow successes, then one rejection", statuses)
		}
		if got, _ := find(s.Snapshot().Resources(), "breaker:A"); got != (outcome.Resource{Name: "breaker:A", Capacity: 1, InUse: 1, Rejected: 1}) {
			t.Errorf("after tripping: breaker:A = %+v, want open (1 of 1) with 1 rejection", got)
		}
	})
}

// TestSampleGivesExactIntervals runs a real service's pool through Sample: the rows of the
// interval carry exact figures (a pool held full by one call for the whole of the second
// interval is at capacity for all of it), the first row is a point sample.
func TestSampleGivesExactIntervals(t *testing.T) {
	s, err := New(Config{
		Mode:          ModeSplit,
		Pools:         []PoolConfig{{Name: "A", Size: 1, Dependencies: []string{"A"}}},
		Dependencies:  []DependencyConfig{{Name: "A", URL: "http://127.0.0.1:1"}},
		Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
		ClientTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	first := s.Sample()
	if r, _ := find(first.ResourcesSince(nil), "pool:A"); r.Exact() {
		t.Errorf("first row %+v: want a point sample", r)
	}
	hold, held, done := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		done <- s.pools[0].Do(context.Background(), func(context.Context) error { close(held); <-hold; return nil })
	}()
	<-held
	second := s.Sample()
	third := s.Sample() // the whole interval second..third is spent full
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	r, ok := find(third.ResourcesSince(&second), "pool:A")
	if !ok || !r.Exact() || r.AtCapacity != r.Interval || r.FirstAtCapacity != 0 || r.MaxInUse != 1 || r.MeanInUse != 1 {
		t.Errorf("pool:A held for the whole interval: %+v; want at capacity, first at 0, max 1, mean 1", r)
	}
	if r, _ := find(second.ResourcesSince(&first), "outbound-conns"); !r.Exact() || r.AtCapacity != 0 {
		t.Errorf("outbound-conns (no cap): %+v; want exact, never at capacity", r)
	}
}
