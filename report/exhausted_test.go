package report

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// samples returns one sample per 100 ms in [from, to) of one resource, at inUse(t).
func samples(name string, capacity int, from, to time.Duration, inUse func(time.Duration) int, rejected func(time.Duration) uint64) []rundir.ResourceSample {
	var out []rundir.ResourceSample
	for t := from; t < to; t += 100 * ms_ {
		out = append(out, rundir.ResourceSample{T: t, Resource: name, Capacity: float64(capacity), InUse: float64(inUse(t)), Rejected: rejected(t)})
	}
	return out
}

func TestExhaustedSharedPool(t *testing.T) {
	phases := []rundir.Phase{
		{Name: "baseline", Start: 0, End: 10 * time.Second},
		{Name: "fault", Start: 10 * time.Second, End: 20 * time.Second, Faults: []faults.Fault{
			{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * ms_}, AppliedAt: 10 * time.Second, RemovedAt: 20 * time.Second}}},
	}
	// pool:shared is at 3/10 until 11.2 s, then at 10/10 to the end (88 of the fault's 100
	// samples); it rejects 5 calls per sample once full.
	sat := 11200 * ms_
	res := samples("pool:shared", 10, 0, 20*time.Second,
		func(t time.Duration) int {
			if t >= sat {
				return 10
			}
			return 3
		},
		func(t time.Duration) uint64 {
			if t < sat {
				return 0
			}
			return uint64((t-sat)/(100*ms_)+1) * 5
		})
	res = append(res, samples("goroutines", 0, 0, 20*time.Second, func(time.Duration) int { return 50 }, func(time.Duration) uint64 { return 0 })...)
	w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "shared", mode: outcome.ModeShared,
		pools: sharedPools(10), valid: true, resources: res, extra: map[string][]req{
			// /b: 8 rejections by the shared pool and 2 timeouts on B, during the fault.
			"/b": append(
				repeat(8, req{t: 12 * time.Second, lat: ms_, class: "rejected:full", pool: "shared", reason: "full", dep: "B"}),
				repeat(2, req{t: 13 * time.Second, lat: 500 * ms_, class: "timeout:dependency", dep: "B"})...),
			// /a: 1 request with a timeout on A during the fault (attributed to the saturated pool).
			"/a": {{t: 14 * time.Second, lat: 500 * ms_, class: "timeout:dependency", dep: "A"}},
		}}}}
	s, err := Analyze(w.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	base, fault := s.Configurations[0].Phases[0], s.Configurations[0].Phases[1]

	t.Run("baseline lists the pool, unsaturated, and nothing failed", func(t *testing.T) {
		if len(base.Exhausted) != 1 || base.Exhausted[0].Resource != "pool:shared" || base.Exhausted[0].Saturated ||
			base.Exhausted[0].FirstSaturatedS != nil || base.Exhausted[0].SaturatedShare != 0 {
			t.Errorf("exhausted = %+v", base.Exhausted)
		}
		if want := "no bounded resource reached capacity; no request failed"; base.Sentence != want {
			t.Errorf("sentence = %q, want %q", base.Sentence, want)
		}
	})
	t.Run("fault phase numbers", func(t *testing.T) {
		if len(fault.Exhausted) != 1 {
			t.Fatalf("exhausted = %+v, want only pool:shared (goroutines is unbounded)", fault.Exhausted)
		}
		e := fault.Exhausted[0]
		if !e.Saturated || e.Capacity != 10 || e.MaxInUse != 10 || e.SaturatedShare != 0.88 || e.Failures != 11 || e.Rejected != 88*5 {
			t.Errorf("exhausted = %+v", e)
		}
		if e.FirstSaturatedS == nil || !near(*e.FirstSaturatedS, 1.2) || e.AfterFaultS == nil || !near(*e.AfterFaultS, 1.2) {
			t.Errorf("first saturated = %v, after fault %v, want 1.2 and 1.2", e.FirstSaturatedS, e.AfterFaultS)
		}
	})
	// Every failure of the fault phase is attributed to the saturated pool: the rejections by
	// reason, the timeouts because the call held one of its slots.
	t.Run("fault phase cause", func(t *testing.T) {
		c := fault.Cause
		if c == nil || c.Resource != "pool:shared" || c.Failures != 11 || !near(c.Share, 1) || c.Endpoint != "/b" ||
			!near(c.EndpointShare, 1) || c.Kind != "rejections" {
			t.Fatalf("cause = %+v", c)
		}
		if got := c.ByEndpoint["/b"]["dependency:B"]; got != 0 {
			t.Errorf("/b timeouts on B attributed to dependency:B = %d, want 0 (the pool was saturated)", got)
		}
		if got := c.ByEndpoint["/b"]["pool:shared"]; got != 10 {
			t.Errorf("/b failures attributed to pool:shared = %d, want 10", got)
		}
	})
	t.Run("fault phase sentence", func(t *testing.T) {
		want := "the shared pool saturated 1.2 s after the fault began and was at 10/10 for 88% of the fault; 80% of /b failures were rejections by that pool and 20% timeouts while it was full; it also explains 100% of /a failures"
		if fault.Sentence != want {
			t.Errorf("sentence\n got %q\nwant %q", fault.Sentence, want)
		}
	})
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

func repeat(n int, r req) []req {
	out := make([]req, n)
	for i := range out {
		out[i] = r
		out[i].t += time.Duration(i) * ms_
	}
	return out
}

// depAnswers returns dependency rows of dep every 100 ms over [0, to): 5 calls answered in
// answer each.
func depAnswers(dep string, to, answer time.Duration) []rundir.DependencySample {
	var out []rundir.DependencySample
	for t := 100 * ms_; t <= to; t += 100 * ms_ {
		r := rundir.DependencySample{T: t}
		r.Dependency, r.Interval, r.Arrived, r.Answered, r.Max = dep, 100*ms_, 5, 5, answer
		for range 5 {
			r.Times.Add(answer)
		}
		out = append(out, r)
	}
	return out
}

// Without a pool, a dependency timeout is the dependency's only when its side shows it
// answering late; when it answered in time, or was not measured, the sentence says nothing
// measured explains it; a connection cap at capacity with nobody seen waiting is full but
// sufficient and decides nothing.
func TestNoneModeSentence(t *testing.T) {
	phases := []rundir.Phase{{Name: "fault", Start: 0, End: 10 * time.Second, Faults: []faults.Fault{
		{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * ms_}, AppliedAt: 0, RemovedAt: 10 * time.Second}}}}
	calm := samples("inbound-conns", 100, 0, 10*time.Second, func(time.Duration) int { return 40 }, func(time.Duration) uint64 { return 0 })
	tests := []struct {
		name    string
		res     []rundir.ResourceSample
		answers []rundir.DependencySample
		want    string
	}{
		{"A not measured", calm, nil,
			"nothing ran out: no connection cap reached capacity; 100% of /a failures were timeouts that nothing measured explains (unexplained: no resource ran out and the dependency's side was not measured)"},
		{"A answered late", calm, depAnswers("A", 10*time.Second, 600*ms_),
			"nothing ran out: no connection cap reached capacity; 100% of /a failures were timeouts of dependency A"},
		{"A answered in time", calm, depAnswers("A", 10*time.Second, 5*ms_),
			"nothing ran out: no connection cap reached capacity; 100% of /a failures were timeouts that nothing measured explains (unexplained: no resource ran out and the dependency answered in time)"},
		{"the inbound connections full with nobody seen waiting",
			samples("inbound-conns", 100, 0, 10*time.Second, func(t time.Duration) int {
				if t >= 5*time.Second {
					return 100
				}
				return 40
			}, func(time.Duration) uint64 { return 0 }), depAnswers("A", 10*time.Second, 600*ms_),
			"no resource ran out (full but sufficient, nobody waiting or refused: the inbound connection cap at 100/100 for 50% of the fault); 100% of /a failures were timeouts of dependency A"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "none", mode: outcome.ModeNone, valid: true,
				resources: tt.res, answers: tt.answers, extra: map[string][]req{"/a": {{t: time.Second, lat: 500 * ms_, class: "timeout:dependency", dep: "A"}}}}}}
			s, err := Analyze(w.write(t, t.TempDir()))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Configurations[0].Phases[0].Sentence; got != tt.want {
				t.Errorf("sentence\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
