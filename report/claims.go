package report

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// readClaims returns the claims the runner recorded in the run folder (claims.json), or a note
// saying why they cannot be judged. A folder without claims.json (an older run, a synthetic one,
// a scenario without claims) has no claims and no note.
func readClaims(runDir string) ([]claim.Claim, string) {
	var cs []claim.Claim
	err := rundir.ReadJSON(filepath.Join(runDir, rundir.ClaimsFile), &cs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ""
	}
	if err != nil {
		return nil, fmt.Sprintf("claims not judged: read %s: %v", rundir.ClaimsFile, err)
	}
	return cs, ""
}

// readRoles returns the roles the scenario declared (roles.json), empty when it declared none,
// or a note saying why they cannot be read.
func readRoles(runDir string) (Roles, string) {
	var r claim.Roles
	err := rundir.ReadJSON(filepath.Join(runDir, rundir.RolesFile), &r)
	if errors.Is(err, fs.ErrNotExist) {
		return Roles{}, ""
	}
	if err != nil {
		return Roles{}, fmt.Sprintf("roles not read: read %s: %v", rundir.RolesFile, err)
	}
	out := Roles{Shared: r.Shared, Split: r.Split, FaultDependency: r.FaultDependency, Baseline: r.Baseline,
		LatencyPhase: r.LatencyPhase, ErrorPhase: r.ErrorPhase, NormalLoad: r.NormalLoad}
	if r.Affected != "" {
		out.Affected = []string{r.Affected}
	}
	if r.Unaffected != "" {
		out.Unaffected = []string{r.Unaffected}
	}
	return out, ""
}

// claimEndpoints returns the endpoints whose requests the claims measure (endpoint and
// level_of of every measure, its minus:/over:, than: and preconditions).
func claimEndpoints(claims []claim.Claim) map[string]bool {
	keep := map[string]bool{}
	add := func(m *claim.Measure) {
		for _, x := range []*claim.Measure{m, m.Other()} {
			if x != nil {
				if x.Endpoint != "" {
					keep[x.Endpoint] = true
				}
				if x.LevelOf != "" {
					keep[x.LevelOf] = true
				}
			}
		}
	}
	for _, c := range claims {
		for _, q := range append([]claim.Condition{c.Condition}, c.Require...) {
			add(&q.Measure)
			if q.Than != nil {
				add(q.Than)
			}
		}
	}
	return keep
}

// describeMeasure writes a measure in words: "success_rate of /a in shared/slow-b",
// "max_in_use of calls:B in breaker/slow-b until breaker:B reached capacity".
func describeMeasure(m claim.Measure) string {
	what := m.Endpoint
	if m.Resource != "" {
		what = m.Resource
	}
	s := fmt.Sprintf("%s of %s in %s/%s", m.Metric, what, m.Configuration, m.Phase)
	if m.LevelOf != "" {
		s = fmt.Sprintf("%s of %s to %s's level in %s/%s", m.Metric, what, m.LevelOf, m.Configuration, m.Phase)
	}
	if m.Until != "" {
		s += " until " + m.Until + " reached capacity"
	}
	if o := m.Other(); o != nil {
		op := "minus"
		if m.Over != nil {
			op = "over"
		}
		return fmt.Sprintf("(%s %s %s)", s, op, describeMeasure(*o))
	}
	return s
}

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
		right = num(*c.Value)
	case c.Value != nil:
		right = num(*c.Value*factorOf(c) + c.Plus)
	case c.Than != nil:
		right = describeMeasure(*c.Than)
		if c.Factor != 0 {
			right = num(c.Factor) + " x " + right
		}
		if c.Plus != 0 {
			right += fmt.Sprintf(" + %s", num(c.Plus))
		}
	}
	if c.Op == claim.OpWithin {
		return fmt.Sprintf("%s within ±%s of %s", describeMeasure(c.Measure), num(c.Tolerance), right)
	}
	return fmt.Sprintf("%s %s %s", describeMeasure(c.Measure), c.Op, right)
}

// num writes a figure with at most 3 decimals and no trailing zeros.
func num(v float64) string {
	return strconv.FormatFloat(round3(v), 'f', -1, 64)
}

func phaseOf(c *Configuration, name string) *Phase {
	for i := range c.Phases {
		if c.Phases[i].Name == name {
			return &c.Phases[i]
		}
	}
	return nil
}

// endpointMetric reads one metric (claim.EndpointMetrics) of st.
func endpointMetric(st *Stats, metric string) (float64, bool, string) {
	if st == nil || st.Requests == 0 {
		return 0, false, "no requests were sent"
	}
	switch metric {
	case "success_rate":
		return st.SuccessRate, true, ""
	case "error_rate":
		return st.ErrorRate, true, ""
	case "requests":
		return float64(st.Requests), true, ""
	case "successes":
		return float64(st.Successes), true, ""
	case "failures":
		return float64(st.Errors.Total()), true, ""
	case "p50_ms":
		return st.P50MS, true, ""
	case "p90_ms":
		return st.P90MS, true, ""
	case "p99_ms":
		return st.P99MS, true, ""
	case "p999_ms":
		return st.P999MS, true, ""
	case "max_ms":
		return st.MaxMS, true, ""
	case "mean_ms":
		return st.MeanMS, true, ""
	case "rejected_p99_ms":
		if st.Rejected.Count == 0 {
			return 0, false, "no request was rejected"
		}
		return st.Rejected.P99MS, true, ""
	case "throughput":
		return st.ThroughputRPS, true, ""
	case "timeouts":
		return float64(st.Errors.Timeout), true, ""
	case "rejected":
		return float64(st.Errors.Rejected), true, ""
	case "upstream":
		return float64(st.Errors.Upstream), true, ""
	case "connection":
		return float64(st.Errors.Connection), true, ""
	case "first_failure_s":
		if st.FirstFailureS == nil {
			return 0, false, "no request failed"
		}
		return *st.FirstFailureS, true, ""
	case "first_rejection_s":
		if st.FirstRejectionS == nil {
			return 0, false, "no request was rejected"
		}
		return *st.FirstRejectionS, true, ""
	}
	return 0, false, fmt.Sprintf("unknown endpoint metric %q", metric)
}

// firstTimes records on st the send offsets, from the phase start, of the first failed and the
// first rejected request among recs (sorted by send time).
func firstTimes(st *Stats, recs []record, outs []kind, start time.Duration) {
	for _, r := range recs {
		o := outs[r.key]
		if o.success {
			continue
		}
		v := float64(r.t-int64(start)) / 1e9
		if st.FirstFailureS == nil {
			st.FirstFailureS = &v
		}
		if o.typ == "rejected" {
			st.FirstRejectionS = &v
			return
		}
	}
}

// untilReached returns the offset of the first sample in m's phase at which m.Until is at
// capacity, and whether there is one.
func (s *Summary) untilReached(m claim.Measure) (time.Duration, bool) {
	for _, c := range group(s.Configurations, m.Configuration) {
		if ph := phaseOf(c, m.Phase); ph != nil {
			if t, ok := firstSaturated(c, ph, m.Until); ok {
				return t, true
			}
		}
	}
	return 0, false
}

// resourceMetric computes one metric (claim.ResourceMetrics) of m.Resource over the samples
// of phase ph, ending the window at m.Until's first saturation when given.
func resourceMetric(c *Configuration, ph *Phase, m claim.Measure) (float64, bool, string) {
	if len(c.resources) == 0 {
		return 0, false, "no resource samples were recorded"
	}
	switch m.Metric {
	case "given_up":
		return givenUp(c, m.Resource)
	case "drained_s":
		return drainedS(c, ph, m.Resource)
	}
	end := ph.end
	if m.Until != "" {
		if t, ok := firstSaturated(c, ph, m.Until); ok {
			end = t
		}
	}
	u := resourceUsage(c.resources, m.Resource, ph.start, end) // resources.go: exact when the run has intervals
	if !u.ok() {
		if end <= ph.start {
			return 0, false, fmt.Sprintf("%s was already at capacity when the phase began, so the window is empty", m.Until)
		}
		return 0, false, fmt.Sprintf("no samples of %s", m.Resource)
	}
	needCap := func() (float64, bool, string) {
		return 0, false, fmt.Sprintf("%s has no capacity (it cannot saturate)", m.Resource)
	}
	switch m.Metric {
	case "max_in_use":
		return float64(u.maxInUse), true, ""
	case "mean_in_use":
		return u.mean(), true, ""
	case "capacity":
		return float64(u.capacity), true, ""
	case "rejected":
		return float64(u.rejected()), true, ""
	case "saturated_share":
		if u.capacity == 0 {
			return needCap()
		}
		return u.share(), true, ""
	case "saturated_s":
		if u.capacity == 0 {
			return needCap()
		}
		return u.saturatedS(end - ph.start), true, ""
	case "first_saturated_s", "first_open_s":
		if u.capacity == 0 {
			return needCap()
		}
		if !u.saturated() {
			return 0, false, fmt.Sprintf("%s never reached capacity (max %d of %d)", m.Resource, u.maxInUse, u.capacity)
		}
		return (u.first - ph.start).Seconds(), true, ""
	case "first_rejected_s":
		if u.firstRej < 0 {
			return 0, false, fmt.Sprintf("%s rejected nothing", m.Resource)
		}
		return u.firstRej.Seconds(), true, ""
	}
	return 0, false, fmt.Sprintf("unknown resource metric %q", m.Metric)
}

// givenUp returns the rejection counter of an inbound endpoint's backlog (inbound:<path>: the
// items given up after their last attempt) at the last sample of the run: an item accepted in a
// phase may be given up after it, so the whole run counts.
func givenUp(c *Configuration, name string) (float64, bool, string) {
	n, last := 0, uint64(0)
	for _, r := range c.resources {
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
func drainedS(c *Configuration, ph *Phase, name string) (float64, bool, string) {
	peak, peakAt, n := -1, time.Duration(0), 0
	for _, r := range c.resources {
		if r.Resource == name && r.T >= ph.start && r.T < ph.end {
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
	for _, r := range c.resources {
		if r.Resource != name || r.T < peakAt {
			continue
		}
		if r.InUse == 0 {
			return (r.T - ph.start).Seconds(), true, ""
		}
		lastUse = r.InUse
	}
	return 0, false, fmt.Sprintf("%s never drained (peak %d in the phase, %d at the last sample)", name, peak, lastUse)
}
