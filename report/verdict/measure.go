package verdict

import (
	"fmt"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// describeMeasure writes a measure in words (claim.Measure.String).
func describeMeasure(m claim.Measure) string { return m.String() }

func factorOf(c claim.Condition) float64 {
	if c.Factor == 0 {
		return 1
	}
	return c.Factor
}

// ruleOf writes the claim's comparison in words.
func ruleOf(c claim.Condition) string {
	var right string
	switch {
	case c.Value != nil && c.Factor == 0 && c.Plus == 0:
		right = model.Num(*c.Value)
	case c.Value != nil:
		right = model.Num(*c.Value*factorOf(c) + c.Plus)
	case c.Than != nil:
		right = describeMeasure(*c.Than)
		if c.Factor != 0 {
			right = model.Num(c.Factor) + " x " + right
		}
		if c.Plus != 0 {
			right += fmt.Sprintf(" + %s", model.Num(c.Plus))
		}
	}
	if c.Op == claim.OpWithin {
		return fmt.Sprintf("%s within ±%s of %s", describeMeasure(c.Measure), model.Num(c.Tolerance), right)
	}
	return fmt.Sprintf("%s %s %s", describeMeasure(c.Measure), c.Op, right)
}

// untilReached returns the offset of the first sample in m's phase at which m.Until is at
// capacity, and whether there is one.
func (e *engine) untilReached(m claim.Measure) (time.Duration, bool) {
	for _, c := range e.f.Repetitions(m.Configuration) {
		if ph := c.Phase(m.Phase); ph != nil {
			if t, ok := attribution.FirstSaturated(c, ph, m.Until); ok {
				return t, true
			}
		}
	}
	return 0, false
}

// resourceMetric computes one metric (claim.ResourceMetrics) of m.Resource over the samples
// of phase ph, ending the window at m.Until's first saturation when given.
func resourceMetric(c *model.Configuration, ph *model.Phase, m claim.Measure) (float64, bool, string) {
	if len(c.Resources) == 0 {
		return 0, false, "no resource samples were recorded"
	}
	switch m.Metric {
	case "given_up":
		return givenUp(c, m.Resource)
	case "drained_s":
		return drainedS(c, ph, m.Resource)
	case "limit_settle_s":
		return limitSettleS(c, ph, m.Resource)
	}
	end := ph.End
	if m.Until != "" {
		if t, ok := attribution.FirstSaturated(c, ph, m.Until); ok {
			end = t
		}
	}
	u := attribution.ResourceUsage(c.Resources, m.Resource, ph.Start, end) // exact when the run has intervals
	if !u.OK() {
		if end <= ph.Start {
			return 0, false, fmt.Sprintf("%s was already at capacity when the phase began, so the window is empty", m.Until)
		}
		return 0, false, fmt.Sprintf("no samples of %s", m.Resource)
	}
	needCap := func() (float64, bool, string) {
		return 0, false, fmt.Sprintf("%s has no capacity (it cannot saturate)", m.Resource)
	}
	switch m.Metric {
	case "max_in_use":
		return u.MaxInUse(), true, ""
	case "mean_in_use":
		return u.Mean(), true, ""
	case "capacity":
		return u.Capacity(), true, ""
	case "rejected":
		return float64(u.Rejected()), true, ""
	case "saturated_share":
		if u.Capacity() == 0 {
			return needCap()
		}
		return u.Share(), true, ""
	case "saturated_s":
		if u.Capacity() == 0 {
			return needCap()
		}
		return u.SaturatedS(end - ph.Start), true, ""
	case "first_saturated_s", "first_open_s":
		if u.Capacity() == 0 {
			return needCap()
		}
		if !u.Saturated() {
			return 0, false, fmt.Sprintf("%s never reached capacity (max %s of %s)", m.Resource, model.Num(u.MaxInUse()), model.Num(u.Capacity()))
		}
		return (u.First() - ph.Start).Seconds(), true, ""
	case "first_rejected_s":
		if u.FirstRejected() < 0 {
			return 0, false, fmt.Sprintf("%s rejected nothing", m.Resource)
		}
		return u.FirstRejected().Seconds(), true, ""
	}
	return 0, false, fmt.Sprintf("unknown resource metric %q", m.Metric)
}

// givenUp returns the rejection counter of an inbound endpoint's backlog (inbound:<path>: the
// items given up after their last attempt) at the last sample of the run: an item accepted in a
// phase may be given up after it, so the whole run counts.
func givenUp(c *model.Configuration, name string) (float64, bool, string) {
	n, last := 0, uint64(0)
	for _, r := range c.Resources {
		if r.Resource == name {
			n++
			last = r.Rejected
		}
	}
	if n == 0 {
		return 0, false, fmt.Sprintf("no samples of %s", name)
	}
	return float64(last), true, ""
}

// drainedS returns the seconds from the start of ph to the first sample, after the backlog's
// peak within ph, at which the backlog (in use of inbound:<path>) is empty again, searched to the
// end of the run. A backlog that never held an item in ph is drained at its first sample.
func drainedS(c *model.Configuration, ph *model.Phase, name string) (float64, bool, string) {
	peak, peakAt, n := -1.0, time.Duration(0), 0
	for _, r := range c.Resources {
		if r.Resource == name && r.T >= ph.Start && r.T < ph.End {
			n++
			if r.InUse > peak {
				peak, peakAt = r.InUse, r.T
			}
		}
	}
	if n == 0 {
		return 0, false, fmt.Sprintf("no samples of %s", name)
	}
	lastUse := peak
	for _, r := range c.Resources {
		if r.Resource != name || r.T < peakAt {
			continue
		}
		if r.InUse == 0 {
			return (r.T - ph.Start).Seconds(), true, ""
		}
		lastUse = r.InUse
	}
	return 0, false, fmt.Sprintf("%s never drained (peak %s in the phase, %s at the last sample)", name, model.Num(peak), model.Num(lastUse))
}

// limitSettleS returns the seconds an adaptive pool's limit took to settle after the switch that
// starts ph (stats.LimitSettle over resources.csv's mean_capacity), not measurable for a pool of
// fixed size or a limit still moving in the phase's last quarter.
func limitSettleS(c *model.Configuration, ph *model.Phase, name string) (float64, bool, string) {
	moves := slices.ContainsFunc(c.Resources, func(r rundir.ResourceSample) bool {
		return r.Resource == name && r.MeanCapacity != 0 && r.T > ph.Start && r.T <= ph.End
	})
	if !moves {
		return 0, false, fmt.Sprintf("%s has no moving limit in the phase (a pool of fixed size, or no exact samples)", name)
	}
	st, err := stats.LimitSettle(c.Resources, name, ph.Start, ph.End)
	if err != nil {
		return 0, false, err.Error()
	}
	if !st.Settled {
		return 0, false, fmt.Sprintf("the limit of %s was still moving when the phase ended (an interval of its last quarter was more than %s from its mean there, %s)",
			name, model.Num(st.Band), model.Num(st.Final))
	}
	return st.After.Seconds(), true, ""
}
