package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The inbound metrics of a claim, on a backlog sampled every 100 ms: empty until the burst at
// 10 s, growing by one a sample to 100 at 19.9 s, then draining by one a sample, empty again at
// 30 s; two items given up at 25 s, after the burst phase.
func TestClaimsInboundMetrics(t *testing.T) {
	backlog := func(t time.Duration) int {
		switch {
		case t < 10*time.Second:
			return 0
		case t < 20*time.Second:
			return int((t-10*time.Second)/(100*ms_)) + 1
		case t < 30*time.Second:
			return max(0, 100-int((t-20*time.Second)/(100*ms_)))
		}
		return 0
	}
	given := func(t time.Duration) uint64 {
		if t >= 25*time.Second {
			return 2
		}
		return 0
	}
	c := &model.Configuration{Resources: samples("inbound:/w", 5000, 0, 40*time.Second, backlog, given)}
	burst := &model.Phase{Name: "burst", Start: 10 * time.Second, End: 20 * time.Second}
	quiet := &model.Phase{Name: "quiet", Start: 0, End: 10 * time.Second}
	tests := []struct {
		name   string
		ph     *model.Phase
		m      claim.Measure
		want   float64
		wantOK bool
		why    string
	}{
		{name: "given up counts the whole run, not the phase", ph: burst, m: claim.Measure{Metric: "given_up", Resource: "inbound:/w"}, want: 2, wantOK: true},
		{name: "drained: from the phase start to empty after the peak", ph: burst, m: claim.Measure{Metric: "drained_s", Resource: "inbound:/w"}, want: 20, wantOK: true},
		{name: "a phase that never held an item is drained at once", ph: quiet, m: claim.Measure{Metric: "drained_s", Resource: "inbound:/w"}, want: 0, wantOK: true},
		{name: "no samples", ph: burst, m: claim.Measure{Metric: "given_up", Resource: "inbound:/x"}, why: "no samples of inbound:/x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok, why := resourceMetric(c, tt.ph, tt.m)
			if ok != tt.wantOK || (ok && got != tt.want) || !strings.Contains(why, tt.why) {
				t.Errorf("= %v, %t, %q; want %v, %t, %q", got, ok, why, tt.want, tt.wantOK, tt.why)
			}
		})
	}
	t.Run("a backlog that never empties is not drained", func(t *testing.T) {
		stuck := &model.Configuration{Resources: samples("inbound:/w", 5000, 0, 25*time.Second, backlog, given)}
		_, ok, why := resourceMetric(stuck, burst, claim.Measure{Metric: "drained_s", Resource: "inbound:/w"})
		if ok || !strings.Contains(why, "never drained (peak 100 in the phase, 51 at the last sample)") {
			t.Errorf("= %t, %q; want not measurable, never drained", ok, why)
		}
	})
}

const ms_ = time.Millisecond

// samples returns one sample per 100 ms in [from, to) of one resource, at inUse(t).
func samples(name string, capacity int, from, to time.Duration, inUse func(time.Duration) int, rejected func(time.Duration) uint64) []rundir.ResourceSample {
	var out []rundir.ResourceSample
	for t := from; t < to; t += 100 * ms_ {
		out = append(out, rundir.ResourceSample{T: t, Resource: name, Capacity: float64(capacity), InUse: float64(inUse(t)), Rejected: rejected(t)})
	}
	return out
}
