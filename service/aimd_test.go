package service

import (
	"testing"
	"time"
)

// AIMD follows concurrency-limits' AIMDLimit sample by sample.
func TestAIMDFollowsThePublishedAlgorithm(t *testing.T) {
	a, _, _ := (&AIMDParams{InitialLimit: 10, MinLimit: 2}).algorithm(PoolConfig{Name: "A", Size: 12})
	ms := time.Millisecond
	for i, s := range []struct {
		sample LimitSample
		want   float64
	}{
		{LimitSample{RTT: 10 * ms, InFlight: 5}, 11},                 // half the limit in flight: +1
		{LimitSample{RTT: 10 * ms, InFlight: 5}, 11},                 // 10 < 11: app-limited, stays
		{LimitSample{RTT: 10 * ms, InFlight: 6, Dropped: true}, 9},   // a drop: ⌊11 × 0.9⌋
		{LimitSample{RTT: 6 * time.Second, InFlight: 9}, 8},          // slower than the 5 s timeout: a drop too
		{LimitSample{RTT: 10 * ms, InFlight: 8}, 9},                  // +1
		{LimitSample{RTT: 10 * ms, InFlight: 9}, 10},                 // +1
		{LimitSample{RTT: 10 * ms, InFlight: 10}, 11},                // +1
		{LimitSample{RTT: 10 * ms, InFlight: 11}, 12},                // +1: the size
		{LimitSample{RTT: 10 * ms, InFlight: 12}, 12},                // kept at the size
		{LimitSample{RTT: 10 * ms, InFlight: 12, Dropped: true}, 10}, // ⌊12 × 0.9⌋
		{LimitSample{Dropped: true}, 9},
		{LimitSample{Dropped: true}, 8},
		{LimitSample{Dropped: true}, 7},
		{LimitSample{Dropped: true}, 6},
		{LimitSample{Dropped: true}, 5},
		{LimitSample{Dropped: true}, 4},
		{LimitSample{Dropped: true}, 3},
		{LimitSample{Dropped: true}, 2},
		{LimitSample{Dropped: true}, 2}, // ⌊2 × 0.9⌋ = 1, kept at min_limit
	} {
		if got := a.Update(s.sample); got != s.want {
			t.Fatalf("sample %d %+v: limit %v, want %v", i+1, s.sample, got, s.want)
		}
	}
}

func TestAIMDDefaults(t *testing.T) {
	a, initial, minLimit := (&AIMDParams{}).algorithm(PoolConfig{Name: "A", Size: 100})
	if initial != 20 || minLimit != 1 || a.BackoffRatio != 0.9 || a.Timeout != 5*time.Second || a.Max != 100 {
		t.Errorf("zero parameters resolve to %+v (initial %d, min %d), want concurrency-limits' defaults", a, initial, minLimit)
	}
}

func TestAIMDCheck(t *testing.T) {
	checkKindTable(t, KindAIMD, []kindCheck{
		{"defaults", nil, nil},
		{"all set", &AIMDParams{InitialLimit: 4, MinLimit: 2, BackoffRatio: 0.5, Timeout: time.Second}, nil},
		{"backoff 1", &AIMDParams{BackoffRatio: 1}, []string{"backoff_ratio"}},
		{"backoff under 0.5", &AIMDParams{BackoffRatio: 0.4}, []string{"backoff_ratio"}},
		{"negative timeout", &AIMDParams{Timeout: -time.Second}, []string{"timeout"}},
		{"negative min", &AIMDParams{MinLimit: -1}, []string{"min_limit"}},
	})
}
