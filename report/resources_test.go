package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// intervals returns exact rows of one resource, one per 100 ms ending at 0.1, 0.2, ... s up to
// to, each from row(i) (i counts from 0); the first row of a run (a point sample at 0) leads.
func intervals(name string, capacity int, to time.Duration, row func(i int) rundir.ResourceSample) []rundir.ResourceSample {
	out := []rundir.ResourceSample{{T: 0, Resource: name, Capacity: capacity}}
	for i := 0; time.Duration(i+1)*100*ms_ <= to; i++ {
		r := row(i)
		r.T, r.Resource, r.Capacity, r.Interval = time.Duration(i+1)*100*ms_, name, capacity, 100*ms_
		out = append(out, r)
	}
	return out
}

// aliased is the pool of issue 11: at capacity for 17 of every 20 ms, free for the 3 ms in which
// every point sample falls. Samples say "never at capacity"; the intervals say 85%.
func aliased(i int) rundir.ResourceSample {
	return rundir.ResourceSample{InUse: 4, MeanInUse: 4.85, MaxInUse: 5, AtCapacity: 85 * ms_, FirstAtCapacity: 3 * ms_}
}

func TestResourceUsage(t *testing.T) {
	idle := func(int) rundir.ResourceSample {
		return rundir.ResourceSample{MaxInUse: 1, MeanInUse: 0.5, FirstAtCapacity: -1}
	}
	for _, tc := range []struct {
		name       string
		rs         []rundir.ResourceSample
		start, end time.Duration
		exact      bool
		share      float64
		mean       float64
		max        int
		first      time.Duration // -1: never saturated
	}{
		{
			name: "aliased pool: exact share where samples saw nothing", rs: intervals("pool:A", 5, 10*time.Second, aliased),
			start: 2 * time.Second, end: 4 * time.Second, exact: true, share: 0.85, mean: 4.85, max: 5, first: 2*time.Second + 3*ms_,
		},
		{
			name: "aliased pool, point samples only (an old run)", rs: samples("pool:A", 5, 0, 10*time.Second,
				func(time.Duration) int { return 4 }, func(time.Duration) uint64 { return 0 }),
			start: 2 * time.Second, end: 4 * time.Second, exact: false, share: 0, mean: 4, max: 4, first: -1,
		},
		{
			name: "never at capacity", rs: intervals("pool:A", 5, 10*time.Second, idle),
			start: 0, end: 10 * time.Second, exact: true, share: 0, mean: 0.5, max: 1, first: -1,
		},
		{
			name: "window ends inside an interval: that interval pro-rated",
			rs: intervals("pool:A", 2, time.Second, func(i int) rundir.ResourceSample {
				if i < 5 {
					return rundir.ResourceSample{MeanInUse: 1, MaxInUse: 1, FirstAtCapacity: -1}
				}
				// full for the last 40 ms of each interval from 0.5 s
				return rundir.ResourceSample{MeanInUse: 1.4, MaxInUse: 2, AtCapacity: 40 * ms_, FirstAtCapacity: 60 * ms_}
			}),
			// 0.5-0.55: the first half of an interval whose 40 ms at capacity lie in its last 40 ms
			start: 0, end: 550 * ms_, exact: true, share: 0, mean: (0.5*1 + 0.05*1.4) / 0.55, max: 2, first: -1,
		},
		{
			name: "window starts inside an interval at capacity",
			rs: intervals("pool:A", 1, time.Second, func(int) rundir.ResourceSample {
				return rundir.ResourceSample{InUse: 1, MeanInUse: 1, MaxInUse: 1, AtCapacity: 100 * ms_, FirstAtCapacity: 0}
			}),
			start: 250 * ms_, end: time.Second, exact: true, share: 1, mean: 1, max: 1, first: 250 * ms_,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := resourceUsage(tc.rs, "pool:A", tc.start, tc.end)
			if !u.ok() {
				t.Fatal("no samples in the window")
			}
			if u.exact != tc.exact || math.Abs(u.share()-tc.share) > 1e-9 || math.Abs(u.mean()-tc.mean) > 1e-9 ||
				u.maxInUse != tc.max || u.first != tc.first || u.saturated() != (tc.first >= 0) {
				t.Errorf("exact %v share %v mean %v max %d first %v; want %v %v %v %d %v",
					u.exact, u.share(), u.mean(), u.maxInUse, u.first, tc.exact, tc.share, tc.mean, tc.max, tc.first)
			}
		})
	}
}

// The claim metrics read the exact figures: saturated_s is the exact time at capacity, not the
// share of samples times the window.
func TestResourceMetricExact(t *testing.T) {
	c := &Configuration{resources: intervals("pool:A", 5, 10*time.Second, aliased)}
	ph := &Phase{Name: "fault", start: 2 * time.Second, end: 4 * time.Second}
	for metric, want := range map[string]float64{
		"saturated_share":   0.85,
		"saturated_s":       1.7,
		"first_saturated_s": 0.003,
		"mean_in_use":       4.85,
		"max_in_use":        5,
	} {
		got, ok, why := resourceMetric(c, ph, claim.Measure{Metric: metric, Resource: "pool:A"})
		if !ok || math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v (%v %s), want %v", metric, got, ok, why, want)
		}
	}
	c = &Configuration{resources: intervals("pool:A", 5, 10*time.Second, func(int) rundir.ResourceSample {
		return rundir.ResourceSample{MeanInUse: 1, MaxInUse: 2, FirstAtCapacity: -1}
	})}
	if _, ok, why := resourceMetric(c, ph, claim.Measure{Metric: "first_saturated_s", Resource: "pool:A"}); ok {
		t.Error("first_saturated_s of a pool never full: measurable, want not")
	} else if why != "pool:A never reached capacity (max 2 of 5)" {
		t.Errorf("why = %q", why)
	}
}

// End to end through Analyze with exact rows: the aliased split A pool reads "at 5/5 for 85% of
// the fault", where its point samples (always at 4) saw nothing; a pool that touched capacity for
// 20 ms is listed as saturated but explains no failure and is not named in the sentence.
func TestExhaustedExact(t *testing.T) {
	phases := []rundir.Phase{
		{Name: "baseline", Start: 0, End: 2 * time.Second},
		{Name: "fault", Start: 2 * time.Second, End: 4 * time.Second, Faults: []faults.Fault{
			{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * ms_}, AppliedAt: 2 * time.Second, RemovedAt: 4 * time.Second}}},
	}
	res := intervals("pool:A", 5, 4*time.Second, func(i int) rundir.ResourceSample {
		if i < 20 {
			return rundir.ResourceSample{MeanInUse: 0.2, MaxInUse: 1, FirstAtCapacity: -1}
		}
		return aliased(i)
	})
	res = append(res, intervals("pool:B", 5, 4*time.Second, func(i int) rundir.ResourceSample {
		if i == 25 { // full for 20 ms, once
			return rundir.ResourceSample{MeanInUse: 1, MaxInUse: 5, AtCapacity: 20 * ms_, FirstAtCapacity: 40 * ms_}
		}
		return rundir.ResourceSample{MeanInUse: 0.2, MaxInUse: 1, FirstAtCapacity: -1}
	})...)
	w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "split", mode: "split",
		pools: splitPools(5), valid: true, resources: res, extra: map[string][]req{
			"/a": repeat(4, req{t: 3 * time.Second, lat: ms_, class: "rejected:full", pool: "A", reason: "full", dep: "A"}),
			"/b": {{t: 3 * time.Second, lat: 500 * ms_, class: "timeout:dependency", dep: "B"}},
		}}}}
	s, err := Analyze(w.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	fault := s.Configurations[0].Phases[1]
	byName := map[string]Exhausted{}
	for _, e := range fault.Exhausted {
		byName[e.Resource] = e
	}
	if a := byName["pool:A"]; !a.Exact || !a.Saturated || !near(a.SaturatedShare, 0.85) || !near(a.AtCapacityS, 1.7) || a.FirstSaturatedS == nil || !near(*a.FirstSaturatedS, 0.003) {
		t.Errorf("pool:A = %+v; want exact, 85%% (1.7 s) at capacity from 0.003 s", a)
	}
	if b := byName["pool:B"]; !b.Saturated || b.ranOut() || b.Failures != 0 {
		t.Errorf("pool:B = %+v; want saturated for 20 ms, not run out, no failure attributed", b)
	}
	if want := "the A pool saturated 0.0 s after the fault began and was at 5/5 for 85% of the fault; 100% of /a failures were rejections by that pool"; fault.Sentence != want {
		t.Errorf("sentence = %q, want %q", fault.Sentence, want)
	}
	if strings.Contains(fault.Sentence, "the B pool") {
		t.Errorf("sentence names the B pool, full for 20 ms: %q", fault.Sentence)
	}
}
