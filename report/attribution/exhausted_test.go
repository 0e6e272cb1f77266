package attribution

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// rows returns exact rows of resource name every 100 ms over [0, 10 s): capacity cap, at
// capacity for the whole row when full(t) (level cap, or 3 for a queue without a count; else 1,
// or 0 for a queue), its rejection counter growing by one per row where refusing(t).
func rows(name string, capacity int, full, refusing func(t time.Duration) bool) []rundir.ResourceSample {
	var out []rundir.ResourceSample
	var rej uint64
	for t := 100 * ms_; t <= 10*time.Second; t += 100 * ms_ {
		base := 1
		if kind, _ := outcome.SplitResource(name); kind == outcome.ResourceQueue {
			base = 0
		}
		r := rundir.ResourceSample{T: t, Resource: name, Capacity: float64(capacity), InUse: float64(base), Interval: 100 * ms_, MeanInUse: float64(base), MaxInUse: float64(base), FirstAtCapacity: -1}
		from := t - 100*ms_
		if full(from) {
			top := float64(max(capacity, 3))
			r.InUse, r.MeanInUse, r.MaxInUse, r.AtCapacity, r.FirstAtCapacity = top, top, top, 100*ms_, 0
			if capacity == 0 {
				r.AtCapacity, r.FirstAtCapacity = 0, -1
			}
		}
		if refusing != nil && refusing(from) {
			rej++
		}
		r.Rejected = rej
		out = append(out, r)
	}
	return out
}

// answers returns rows of dependencies.csv for dep every 100 ms over [0, 10 s): 5 calls each,
// answered in answer(t).
func answers(dep string, answer func(t time.Duration) time.Duration) []rundir.DependencySample {
	var out []rundir.DependencySample
	for t := 100 * ms_; t <= 10*time.Second; t += 100 * ms_ {
		r := rundir.DependencySample{T: t}
		r.Dependency, r.Interval, r.Arrived, r.Answered = dep, 100*ms_, 5, 5
		d := answer(t - 100*ms_)
		for range 5 {
			r.Times.Add(d)
		}
		r.Max = d
		out = append(out, r)
	}
	return out
}

func within(from, to time.Duration) func(time.Duration) bool {
	return func(t time.Duration) bool { return t >= from && t < to }
}

func never(time.Duration) bool { return false }

// world is one configuration whose evidence the table below reads: A's pool runs out (full,
// refusing) in [2 s, 4 s); B's pool is full in [5 s, 6 s) with nobody waiting or refused; the
// connections to B are full with callers waiting for them in [6 s, 7 s); the inbound
// connections are full in [8 s, 9 s) with nobody seen waiting; the sockets pool serving C has
// a queue without a count limit holding callers in [7 s, 8 s). A answers in 5 ms except in
// [1 s, 1.5 s), where it takes 600 ms (over the 500 ms timeout); B always answers in 5 ms; C is
// not metered.
func world(mapping *outcome.Mapping) *Attribution {
	c := &model.Configuration{ClientTimeoutMS: 500, Phases: []model.Phase{{Name: "all", Start: 0, End: 10 * time.Second}},
		Manifest: &rundir.Manifest{Target: &rundir.Target{Outcomes: mapping}}}
	for _, rs := range [][]rundir.ResourceSample{
		rows("pool:A", 5, within(2*time.Second, 4*time.Second), within(2*time.Second, 4*time.Second)),
		rows("pool:B", 5, within(5*time.Second, 6*time.Second), nil),
		rows("conns:B", 10, within(6*time.Second, 7*time.Second), nil),
		rows("queue:B", 0, within(6*time.Second, 7*time.Second), nil),
		rows("inbound-conns", 100, within(8*time.Second, 9*time.Second), nil),
		rows("queue:sockets", 0, within(7*time.Second, 8*time.Second), nil),
	} {
		c.Resources = append(c.Resources, rs...)
	}
	c.Dependencies = append(answers("A", func(t time.Duration) time.Duration {
		if t >= time.Second && t < 1500*ms_ {
			return 600 * ms_
		}
		return 5 * ms_
	}), answers("B", func(time.Duration) time.Duration { return 5 * ms_ })...)
	svc := outcome.Topology{Mode: "split", ClientTimeout: 500 * ms_,
		Pools:     []outcome.TopologyPool{{Name: "A", Dependencies: []string{"A"}}, {Name: "B", Dependencies: []string{"B"}}, {Name: "sockets", Dependencies: []string{"C"}}},
		Endpoints: []outcome.TopologyCall{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}, {Path: "/c", Calls: []string{"C"}}}}
	return New(c, svc)
}

// The order of evidence, case by case: the target's own word (headers, or its mapping's
// blame), a resource that ran out while the call was in flight, the dependency's side, the
// target's own class naming nothing, and "unexplained" when nothing measured explains it.
func TestBlameFollowsTheEvidence(t *testing.T) {
	mapped := &outcome.Mapping{Blame: map[string]string{"timeout:late-socket": "conns:{dependency}", "rejected:wait-timeout": "queue:B"}}
	tests := []struct {
		name    string
		path    string
		at, lat time.Duration
		o       model.Kind
		mapping *outcome.Mapping
		want    string
	}{
		{"a rejection the built-in pool names, at capacity", "/a", 2500 * ms_, ms_, model.NewKind("rejected:full", "A", "full", "A"), nil, "pool:A"},
		{"queue-full goes to the named queue (not sampled: the target's word is all there is)", "/a", 2500 * ms_, ms_, model.NewKind("rejected:queue-full", "A", "queue-full", "A"), nil, "queue:A"},
		{"a rejection the built-in pool names while it was not at capacity: no pool is charged", "/b", 500 * ms_, ms_, model.NewKind("rejected:full", "B", "full", "B"), nil, "unexplained"},
		{"a mapped 503 while the endpoint's pool ran out", "/a", 3 * time.Second, ms_, model.NewKind("rejected:status-503", "", "", ""), nil, "pool:A"},
		{"a mapped 503 while the pool was at capacity is refused demand: the pool", "/b", 5500 * ms_, ms_, model.NewKind("rejected:status-503", "", "", ""), nil, "pool:B"},
		{"a mapped 503 while no resource was at capacity", "/b", 500 * ms_, ms_, model.NewKind("rejected:status-503", "", "", ""), nil, "unexplained"},
		{"a timeout while the dependency answered late", "/a", 1100 * ms_, 500 * ms_, model.NewKind("timeout:dependency", "", "", "A"), nil, "dependency:A"},
		{"a timeout while the dependency answered in 5 ms is not the dependency's", "/b", 200 * ms_, 500 * ms_, model.NewKind("timeout:dependency", "", "", "B"), nil, "unexplained"},
		{"a timeout while the connections to B ran out, callers waiting", "/b", 6200 * ms_, 500 * ms_, model.NewKind("timeout:dependency", "", "", "B"), nil, "conns:B"},
		{"the target's own class naming no resource", "/b", 200 * ms_, 500 * ms_, model.NewKind("timeout:late-socket", "", "", ""), nil, "target:late-socket"},
		{"the target's own class its mapping charges to a resource", "/b", 200 * ms_, 500 * ms_, model.NewKind("timeout:late-socket", "", "", ""), mapped, "conns:B"},
		{"a mapped rejection after waiting charged to a queue without a count", "/b", 6200 * ms_, 500 * ms_, model.NewKind("rejected:wait-timeout", "", "", ""), mapped, "queue:B"},
		{"... but not while that queue held nobody", "/b", 200 * ms_, 500 * ms_, model.NewKind("rejected:wait-timeout", "", "", ""), mapped, "unexplained"},
		{"the built-in's upstream reset names the dependency", "/a", 200 * ms_, ms_, model.NewKind("upstream:reset", "", "reset", "A"), nil, "dependency:A"},
		{"a mapped 502 while the dependency answered every call in time", "/b", 200 * ms_, ms_, model.NewKind("upstream:status-502", "", "", ""), nil, "unexplained"},
		{"a timeout on a dependency not measured", "/c", 200 * ms_, 500 * ms_, model.NewKind("timeout:dependency", "", "", "C"), nil, "unexplained:unmetered"},
		{"a call that waited its bound in a queue without a count", "/c", 7200 * ms_, 500 * ms_, model.NewKind("timeout:client", "", "", ""), nil, "queue:sockets"},
		{"a short call while that queue held callers did not wait for it", "/c", 7200 * ms_, 100 * ms_, model.NewKind("timeout:client", "", "", ""), nil, "unexplained:unmetered"},
		{"refused connections while the inbound cap was full with nobody seen waiting", "/a", 8500 * ms_, ms_, model.NewKind("connection:refused", "", "", ""), nil, "unexplained"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := world(tt.mapping)
			if got := a.blame(0, tt.path, tt.at, tt.lat, tt.o); got != tt.want {
				t.Errorf("blame = %q, want %q", got, tt.want)
			}
		})
	}
}

// "Ran out" needs demand: A's pool (full and refusing) ran out; B's pool and the inbound
// connections were full with nobody waiting or refused: full but sufficient.
func TestRanOutNeedsDemand(t *testing.T) {
	a := world(nil)
	got := map[string]model.Exhausted{}
	for _, e := range a.c.Phases[0].Exhausted {
		got[e.Resource] = e
	}
	for name, want := range map[string][2]bool{"pool:A": {true, false}, "conns:B": {true, false}, "pool:B": {false, true}, "inbound-conns": {false, true}} {
		if e := got[name]; e.RanOut != want[0] || e.FullButSufficient != want[1] {
			t.Errorf("%s: ran out %v, full but sufficient %v; want %v, %v (%+v)", name, e.RanOut, e.FullButSufficient, want[0], want[1], e)
		}
	}
	if e := got["pool:A"]; e.DemandS < 1.99 || e.DemandS > 2.01 {
		t.Errorf("pool:A demand %v s, want its 2 s at capacity refusing", e.DemandS)
	}
}

// The other endpoints a cause explains are named in one clause, those with the same share
// together, rather than one "it also explains" per endpoint.
func TestSentenceNamesOtherEndpointsOnce(t *testing.T) {
	first := 0.4
	ph := &model.Phase{
		Exhausted: []model.Exhausted{{Resource: "queue:shared", Capacity: 10, Saturated: true, RanOut: true, SaturatedShare: 0.65, FirstSaturatedS: &first}},
		Cause: &model.Cause{Resource: "queue:shared", Endpoint: "/b", EndpointFailures: 10, EndpointByType: map[string]int{"rejected": 10},
			ByEndpoint: map[string]map[string]int{
				"/a": {"queue:shared": 4}, "/b": {"queue:shared": 10}, "/c": {"queue:shared": 2},
				"/d": {"queue:shared": 1, "dependency:D": 1}, "/e": {"dependency:E": 3},
			}},
	}
	want := "the queue of the shared pool saturated 0.4 s into the phase and was at 10/10 for 65% of the phase; " +
		"100% of /b failures were rejections by that queue; it also explains 100% of /a and /c failures and 50% of /d failures"
	if got := sentence("shared", ph, true); got != want {
		t.Errorf("sentence\n got %q\nwant %q", got, want)
	}
}

// When a pool and the calls to its dependency are at capacity for the same share of a phase, the
// pool is named first (the calls only mirror it).
func TestExhaustedPrefersPoolsAtEqualShares(t *testing.T) {
	c := &model.Configuration{}
	for _, at := range []time.Duration{0, time.Second} {
		c.Resources = append(c.Resources,
			rundir.ResourceSample{T: at, Resource: "calls:bookings", Capacity: 2, InUse: 2},
			rundir.ResourceSample{T: at, Resource: "pool:webhooks", Capacity: 2, InUse: 2},
			rundir.ResourceSample{T: at, Resource: "queue:webhooks", Capacity: 4, InUse: 4})
	}
	ph := &model.Phase{Start: 0, End: 2 * time.Second}
	var got []string
	c.Phases = []model.Phase{*ph}
	for _, e := range New(c, outcome.Topology{}).c.Phases[0].Exhausted {
		got = append(got, e.Resource)
	}
	if want := []string{"pool:webhooks", "queue:webhooks", "calls:bookings"}; !reflect.DeepEqual(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

const ms_ = time.Millisecond

// Scraped levels keep their fractions (issue 20 item 7): an event loop whose delay peaked at
// 49.6 ms against a bound of 50 ms never reached it (rounded to whole milliseconds, as scrapes
// once were, it read 50 and "ran out"), and a CPU at 1.5 of its limit of 1.5 cores is full with
// its capacity and level as fractions in the account and in the sentence.
func TestFractionalLevelsAreKept(t *testing.T) {
	c := &model.Configuration{ClientTimeoutMS: 500, Phases: []model.Phase{{Name: "all", Start: 0, End: 10 * time.Second}}}
	for t := 100 * ms_; t < 10*time.Second; t += 100 * ms_ {
		loop, cpu := 12.3, 0.375
		if t >= 2*time.Second && t < 4*time.Second {
			loop = 49.6
		}
		if t >= 5*time.Second && t < 6*time.Second {
			cpu = 1.5
		}
		c.Resources = append(c.Resources,
			rundir.ResourceSample{T: t, Resource: "eventloop:main", Capacity: 50, InUse: loop, RejectedUnknown: true},
			rundir.ResourceSample{T: t, Resource: "cpu:api", Capacity: 1.5, InUse: cpu, RejectedUnknown: true})
	}
	a := New(c, outcome.Topology{Mode: outcome.ModeNone, ClientTimeout: 500 * ms_})
	a.Finish()
	got := map[string]model.Exhausted{}
	for _, e := range c.Phases[0].Exhausted {
		got[e.Resource] = e
	}
	if e := got["eventloop:main"]; e.Saturated || e.RanOut || e.MaxInUse != 49.6 || e.Capacity != 50 {
		t.Errorf("eventloop:main = %+v; want never saturated, max 49.6 of 50", e)
	}
	if e := got["cpu:api"]; !e.Saturated || e.MaxInUse != 1.5 || e.Capacity != 1.5 || math.Abs(e.SaturatedShare-0.1) > 0.011 {
		t.Errorf("cpu:api = %+v; want saturated for a tenth of the phase, 1.5 of 1.5", e)
	}
	if s := c.Phases[0].Sentence; !strings.Contains(s, "the CPU of api at 1.5/1.5") {
		t.Errorf("sentence %q; want the CPU at 1.5/1.5", s)
	}
}
