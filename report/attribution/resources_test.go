package attribution

import (
	"math"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

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
		max        float64
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
			u := ResourceUsage(tc.rs, "pool:A", tc.start, tc.end)
			if !u.OK() {
				t.Fatal("no samples in the window")
			}
			if u.exact != tc.exact || math.Abs(u.Share()-tc.share) > 1e-9 || math.Abs(u.Mean()-tc.mean) > 1e-9 ||
				u.maxInUse != tc.max || u.first != tc.first || u.Saturated() != (tc.first >= 0) {
				t.Errorf("exact %v share %v mean %v max %v first %v; want %v %v %v %v %v",
					u.exact, u.Share(), u.Mean(), u.maxInUse, u.first, tc.exact, tc.share, tc.mean, tc.max, tc.first)
			}
		})
	}
}

// samples returns one sample per 100 ms in [from, to) of one resource, at inUse(t).
func samples(name string, capacity int, from, to time.Duration, inUse func(time.Duration) int, rejected func(time.Duration) uint64) []rundir.ResourceSample {
	var out []rundir.ResourceSample
	for t := from; t < to; t += 100 * ms_ {
		out = append(out, rundir.ResourceSample{T: t, Resource: name, Capacity: float64(capacity), InUse: float64(inUse(t)), Rejected: rejected(t)})
	}
	return out
}
