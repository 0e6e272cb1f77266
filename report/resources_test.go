package report

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

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
	byName := map[string]model.Exhausted{}
	for _, e := range fault.Exhausted {
		byName[e.Resource] = e
	}
	if a := byName["pool:A"]; !a.Exact || !a.Saturated || !near(a.SaturatedShare, 0.85) || !near(a.AtCapacityS, 1.7) || a.FirstSaturatedS == nil || !near(*a.FirstSaturatedS, 0.003) {
		t.Errorf("pool:A = %+v; want exact, 85%% (1.7 s) at capacity from 0.003 s", a)
	}
	if b := byName["pool:B"]; !b.Saturated || attribution.RanOut(b) || b.Failures != 0 {
		t.Errorf("pool:B = %+v; want saturated for 20 ms, not run out, no failure attributed", b)
	}
	if want := "the A pool saturated 0.0 s after the fault began and was at 5/5 for 85% of the fault; 100% of /a failures were rejections by that pool"; fault.Sentence != want {
		t.Errorf("sentence = %q, want %q", fault.Sentence, want)
	}
	if strings.Contains(fault.Sentence, "the B pool") {
		t.Errorf("sentence names the B pool, full for 20 ms: %q", fault.Sentence)
	}
}

// intervals returns exact rows of one resource, one per 100 ms ending at 0.1, 0.2, ... s up to
// to, each from row(i) (i counts from 0); the first row of a run (a point sample at 0) leads.
func intervals(name string, capacity float64, to time.Duration, row func(i int) rundir.ResourceSample) []rundir.ResourceSample {
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
