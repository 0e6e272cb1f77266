package service

import (
	"math"
	"testing"
	"time"
)

// Vegas follows concurrency-limits' VegasLimit sample by sample. With a limit between 10 and 99,
// log10 is 1: alpha 3, beta 6, threshold 1.
func TestVegasFollowsThePublishedAlgorithm(t *testing.T) {
	v, _, _ := (&VegasParams{InitialLimit: 10}).algorithm(PoolConfig{Name: "A", Size: 20})
	ms := time.Millisecond
	for i, s := range []struct {
		sample LimitSample
		want   float64
		noLoad time.Duration
	}{
		{LimitSample{RTT: 10 * ms, InFlight: 10}, 10, 10 * ms},                // first sample: the no-load RTT
		{LimitSample{RTT: 10 * ms, InFlight: 10}, 16, 10 * ms},                // queue ⌈10 × 0⌉ = 0 <= 1: + beta
		{LimitSample{RTT: 20 * ms, InFlight: 16}, 15, 10 * ms},                // queue ⌈16 × 0.5⌉ = 8 > 6: − 1
		{LimitSample{RTT: 12 * ms, InFlight: 15}, 15, 10 * ms},                // queue ⌈2.5⌉ = 3 in [3, 6]: stays
		{LimitSample{RTT: 11 * ms, InFlight: 15}, 16, 10 * ms},                // queue ⌈1.36⌉ = 2 < 3: + 1
		{LimitSample{RTT: 12 * ms, InFlight: 16, Dropped: true}, 15, 10 * ms}, // a drop: − 1
		{LimitSample{RTT: 20 * ms, InFlight: 7}, 15, 10 * ms},                 // 14 < 15: app-limited, stays
		{LimitSample{RTT: 5 * ms, InFlight: 15}, 15, 5 * ms},                  // faster: a new no-load RTT
		{LimitSample{RTT: 5 * ms, InFlight: 15}, 20, 5 * ms},                  // queue 0: + 6, kept at the size
	} {
		got := v.Update(s.sample)
		if got != s.want || v.NoLoad != s.noLoad {
			t.Fatalf("sample %d %+v: limit %v no-load %v, want %v and %v", i+1, s.sample, got, v.NoLoad, s.want, s.noLoad)
		}
	}
}

// Smoothing weighs each new estimate: half of a step of +6 is +3.
func TestVegasSmoothing(t *testing.T) {
	v, _, _ := (&VegasParams{InitialLimit: 10, Smoothing: 0.5}).algorithm(PoolConfig{Name: "A", Size: 20})
	v.Update(LimitSample{RTT: time.Millisecond, InFlight: 10})
	if got := v.Update(LimitSample{RTT: time.Millisecond, InFlight: 10}); math.Abs(got-13) > 1e-12 {
		t.Errorf("smoothed estimate = %v, want 13", got)
	}
}

// The probe resets the no-load RTT to the current sample's after ProbeMultiplier × limit × j
// samples, j in [0.5, 1): with multiplier 1 and a limit of 10, after 5 to 10 samples. The draws
// are seeded, so two pools of the same name probe at the same samples, and a given seed does.
func TestVegasProbesTheNoLoadRTT(t *testing.T) {
	probeAt := func(p VegasParams, name string) int {
		v, _, _ := p.algorithm(PoolConfig{Name: name, Size: 10})
		v.Update(LimitSample{RTT: time.Millisecond, InFlight: 1}) // the no-load RTT: 1 ms
		for i := 2; i <= 20; i++ {
			v.Update(LimitSample{RTT: 50 * time.Millisecond, InFlight: 1}) // app-limited: no step
			if v.NoLoad == 50*time.Millisecond {
				return i
			}
		}
		return -1
	}
	p := VegasParams{InitialLimit: 10, ProbeMultiplier: 1}
	at := probeAt(p, "A")
	if at < 5 || at > 10 {
		t.Fatalf("probe at sample %d, want within samples 5 to 10", at)
	}
	if again := probeAt(p, "A"); again != at {
		t.Errorf("a second pool A probed at sample %d, the first at %d: the draws are not reproducible", again, at)
	}
	p.Seed = 42
	if s1, s2 := probeAt(p, "A"), probeAt(p, "B"); s1 != s2 {
		t.Errorf("with seed 42, pools A and B probed at samples %d and %d: the seed, not the name, decides", s1, s2)
	}
}

func TestVegasDefaults(t *testing.T) {
	v, initial, minLimit := (&VegasParams{}).algorithm(PoolConfig{Name: "A", Size: 1000})
	if initial != 20 || minLimit != 1 || v.Smoothing != 1 || v.ProbeMultiplier != 30 || v.Alpha != 0 || v.Beta != 0 || v.Max != 1000 {
		t.Errorf("zero parameters resolve to %+v (initial %d, min %d), want concurrency-limits' defaults", v, initial, minLimit)
	}
	for _, c := range []struct{ limit, want int }{{0, 1}, {9, 1}, {10, 1}, {99, 1}, {100, 2}, {999, 2}, {1000, 3}} {
		if got := log10(c.limit); got != c.want {
			t.Errorf("log10(%d) = %d, want %d", c.limit, got, c.want)
		}
	}
}

func TestVegasCheck(t *testing.T) {
	checkKindTable(t, KindVegas, []kindCheck{
		{"defaults", nil, nil},
		{"all set", &VegasParams{InitialLimit: 5, MinLimit: 1, Smoothing: 0.5, Alpha: 2, Beta: 4, ProbeMultiplier: 10, Seed: 9}, nil},
		{"beta under alpha", &VegasParams{Alpha: 4, Beta: 2}, []string{"beta"}},
		{"negative alpha", &VegasParams{Alpha: -1}, []string{"alpha"}},
		{"smoothing negative", &VegasParams{Smoothing: -0.1}, []string{"smoothing"}},
		{"negative probe multiplier", &VegasParams{ProbeMultiplier: -1}, []string{"probe_multiplier"}},
	})
}
