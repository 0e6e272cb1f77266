package verdict

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The claim metrics read the exact figures: saturated_s is the exact time at capacity, not the
// share of samples times the window.
func TestResourceMetricExact(t *testing.T) {
	c := &model.Configuration{Resources: intervals("pool:A", 5, 10*time.Second, aliased)}
	ph := &model.Phase{Name: "fault", Start: 2 * time.Second, End: 4 * time.Second}
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
	c = &model.Configuration{Resources: intervals("pool:A", 5, 10*time.Second, func(int) rundir.ResourceSample {
		return rundir.ResourceSample{MeanInUse: 1, MaxInUse: 2, FirstAtCapacity: -1}
	})}
	if _, ok, why := resourceMetric(c, ph, claim.Measure{Metric: "first_saturated_s", Resource: "pool:A"}); ok {
		t.Error("first_saturated_s of a pool never full: measurable, want not")
	} else if why != "pool:A never reached capacity (max 2 of 5)" {
		t.Errorf("why = %q", why)
	}
}

// A claim on a scraped resource reads its fractions (issue 20 item 7): an event loop's delay in
// seconds against a bound of 0.05 s, sampled by a scrape (point samples).
func TestResourceMetricKeepsFractions(t *testing.T) {
	var rs []rundir.ResourceSample
	for i := range 20 {
		rs = append(rs, rundir.ResourceSample{T: time.Duration(i) * 100 * ms_, Resource: "eventloop:main", Capacity: 0.05, InUse: 0.0125 * float64(1+i%4), RejectedUnknown: true})
	}
	c := &model.Configuration{Resources: rs}
	ph := &model.Phase{Name: "stall", Start: 0, End: 2 * time.Second}
	for metric, want := range map[string]float64{"max_in_use": 0.05, "capacity": 0.05, "mean_in_use": 0.03125, "saturated_share": 0.25} {
		got, ok, why := resourceMetric(c, ph, claim.Measure{Metric: metric, Resource: "eventloop:main"})
		if !ok || math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v (%v %s), want %v", metric, got, ok, why, want)
		}
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

// limit_settle_s is the seconds from the phase's switch until an adaptive pool's limit stays
// within a slot of where it settles; a limit still moving at the phase's end, or a pool of fixed
// size, is not measurable (so a claim that a limit settles does not hold on either).
func TestLimitSettleS(t *testing.T) {
	ph := &model.Phase{Name: "latency", Start: 0, End: 2 * time.Second}
	limit := func(values func(i int) float64) *model.Configuration {
		return &model.Configuration{Resources: intervals("pool:A", 10, 2*time.Second, func(i int) rundir.ResourceSample {
			return rundir.ResourceSample{MeanCapacity: values(i), FirstAtCapacity: -1}
		})}
	}
	// 10 for 0.3 s, 8 from then on: it left the band around 8 for the last time at 0.3 s.
	steps := limit(func(i int) float64 {
		if i < 3 {
			return 10
		}
		return 8
	})
	if got, ok, why := resourceMetric(steps, ph, claim.Measure{Metric: "limit_settle_s", Resource: "pool:A"}); !ok || math.Abs(got-0.3) > 1e-9 {
		t.Errorf("settle of a step = %v (%v %s), want 0.3", got, ok, why)
	}
	swings := limit(func(i int) float64 { return float64(4 + 4*(i%2)) })
	if _, ok, why := resourceMetric(swings, ph, claim.Measure{Metric: "limit_settle_s", Resource: "pool:A"}); ok || !strings.Contains(why, "still moving") {
		t.Errorf("a limit swinging 4-8: measurable %v (%s), want not: still moving", ok, why)
	}
	fixed := &model.Configuration{Resources: intervals("pool:A", 5, 2*time.Second, aliased)}
	if _, ok, why := resourceMetric(fixed, ph, claim.Measure{Metric: "limit_settle_s", Resource: "pool:A"}); ok || !strings.Contains(why, "no moving limit") {
		t.Errorf("a pool of fixed size: measurable %v (%s), want not", ok, why)
	}
}
