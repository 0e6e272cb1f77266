package service

import (
	"math"
	"testing"
	"time"
)

// Gradient2 follows concurrency-limits' Gradient2Limit sample by sample. The expected values were
// worked out from the published formulas (see KindGradient2) by a separate implementation.
func TestGradient2FollowsThePublishedAlgorithm(t *testing.T) {
	g, _, _ := (&Gradient2Params{InitialLimit: 10}).algorithm(PoolConfig{Name: "A", Size: 20})
	ms := time.Millisecond
	for i, s := range []struct {
		rtt           time.Duration
		inFlight      int
		estimate      float64
		long, longMax time.Duration // the long average after the sample (ms, within 1 µs)
	}{
		// No queueing (gradient 1): the limit grows by smoothing x queue size = 0.8.
		{10 * ms, 10, 10.8, 10 * ms, 0},
		// Ten times slower: long = 55 ms, gradient 1.5 x 55/100 = 0.825.
		{100 * ms, 10, 10.8*0.8 + (10.8*0.825+4)*0.2, 55 * ms, 0},
		// App-limited (3 in flight < 11.2/2): the limit stays, the average still learns.
		{100 * ms, 3, 11.222, 70 * ms, 0},
		// Back to fast: long/short = 5.5 > 2, so the average decays by 5% (55 -> 52.25 ms); the
		// gradient uses the average before the decay and is 1.
		{10 * ms, 10, 12.022, 52250 * time.Microsecond, 0},
		// Still warming up (5 of 10 samples): the average is the plain mean 44.2 ms, decayed.
		{1 * ms, 12, 12.822, 41990 * time.Microsecond, 0},
	} {
		got := g.Update(LimitSample{RTT: s.rtt, InFlight: s.inFlight})
		if math.Abs(got-s.estimate) > 1e-9 {
			t.Errorf("sample %d (%v, %d in flight): estimate %v, want %v", i+1, s.rtt, s.inFlight, got, s.estimate)
		}
		if d := g.BaseRTT() - s.long; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("sample %d: long average %v, want %v", i+1, g.BaseRTT(), s.long)
		}
	}
}

// Under a gradient held at its floor of 0.5 the limit settles at QueueSize / (1 - 0.5) = 8,
// whatever its start, and it never leaves [MinLimit, size].
func TestGradient2FixedPointAndBounds(t *testing.T) {
	g, _, _ := (&Gradient2Params{InitialLimit: 20}).algorithm(PoolConfig{Name: "A", Size: 20})
	for range 10 { // warm the long average up at 1 ms
		g.Update(LimitSample{RTT: time.Millisecond, InFlight: 20})
	}
	if g.Estimate != 20 {
		t.Fatalf("after fast samples the estimate is %v, want the size 20", g.Estimate)
	}
	for range 100 { // 1 s calls: 1.5 x long/short stays under 0.5 for these 100 samples
		g.Update(LimitSample{RTT: time.Second, InFlight: 20})
	}
	if math.Abs(g.Estimate-8) > 0.01 {
		t.Errorf("estimate under a floored gradient = %v, want 8 (queue_size / (1 - 0.5))", g.Estimate)
	}
	low, _, _ := (&Gradient2Params{InitialLimit: 10, MinLimit: 9}).algorithm(PoolConfig{Name: "A", Size: 20})
	for range 10 {
		low.Update(LimitSample{RTT: time.Millisecond, InFlight: 10})
	}
	for range 50 {
		low.Update(LimitSample{RTT: time.Second, InFlight: 10})
	}
	if low.Estimate != 9 {
		t.Errorf("estimate with min_limit 9 = %v, want 9", low.Estimate)
	}
}

func TestGradient2Defaults(t *testing.T) {
	g, initial, minLimit := (&Gradient2Params{}).algorithm(PoolConfig{Name: "A", Size: 50})
	if initial != 20 || minLimit != 1 || g.Smoothing != 0.2 || g.QueueSize != 4 || g.RTTTolerance != 1.5 ||
		g.Long.Window != 600 || g.Long.Warmup != 10 || g.Max != 50 {
		t.Errorf("zero parameters resolve to %+v (initial %d, min %d), want concurrency-limits' defaults", g, initial, minLimit)
	}
	if _, initial, _ := (&Gradient2Params{}).algorithm(PoolConfig{Name: "A", Size: 10}); initial != 10 {
		t.Errorf("initial limit of a pool of 10 = %d, want 10 (20, at most size)", initial)
	}
}

func TestGradient2Check(t *testing.T) {
	checkKindTable(t, KindGradient2, []kindCheck{
		{"defaults", nil, nil},
		{"all set", &Gradient2Params{InitialLimit: 5, MinLimit: 2, Smoothing: 0.5, QueueSize: 0, LongWindow: 100, RTTTolerance: 2}, nil},
		{"smoothing above 1", &Gradient2Params{Smoothing: 1.5}, []string{"smoothing"}},
		{"negative queue size", &Gradient2Params{QueueSize: -1}, []string{"queue_size"}},
		{"negative window", &Gradient2Params{LongWindow: -1}, []string{"long_window"}},
		{"tolerance under 1", &Gradient2Params{RTTTolerance: 0.5}, []string{"rtt_tolerance"}},
		{"initial above size", &Gradient2Params{InitialLimit: 11}, []string{"initial_limit"}},
		{"initial under min", &Gradient2Params{InitialLimit: 2, MinLimit: 3}, []string{"initial_limit"}},
		{"min above size", &Gradient2Params{MinLimit: 11}, []string{"min_limit"}},
	})
}
