package report

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Claim is one claim of the scenario file (its `claims:` block) judged on the run's numbers.
// Left is the measured figure, Right what it is compared with (a number, or another measured
// figure times the claim's factor plus its plus); either is null when it could not be measured,
// and Holds is then null too, with the reason in Evidence.
type Claim struct {
	ID   string `json:"id"`
	Says string `json:"says"`
	// Holds is true, false, or null (not measurable, or no verdicts for an invalid run).
	Holds    *bool  `json:"holds"`
	Verdict  string `json:"verdict"` // "holds", "does not hold", "not measurable"
	Evidence string `json:"evidence"`
	// Rule is the comparison in words, e.g. "success_rate of /a in shared/slow-b < 0.5".
	Rule  string   `json:"rule"`
	Op    string   `json:"op"`
	Left  *float64 `json:"left"`
	Right *float64 `json:"right"`
}

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

// noVerdictInvalid starts the evidence of every claim of an invalid run.
const noVerdictInvalid = "no verdict: the run is invalid"

// judgeClaims evaluates claims on the summary's configurations. With an invalid run every claim
// is listed without a verdict (Holds null), its figures still measured and shown.
func (s *Summary) judgeClaims(claims []claim.Claim) []Claim {
	out := make([]Claim, 0, len(claims))
	for _, c := range claims {
		r := Claim{ID: c.ID, Says: c.Says, Op: c.Op, Rule: ruleOf(c)}
		left, lwhy := s.measure(c.Measure)
		var right *float64
		rwhy := ""
		if c.Value != nil {
			v := *c.Value*factorOf(c) + c.Plus
			right = &v
		} else if c.Than != nil {
			var t *float64
			t, rwhy = s.measure(*c.Than)
			if t != nil {
				v := *t*factorOf(c) + c.Plus
				right = &v
			}
		}
		r.Left, r.Right = round3p(left), round3p(right)
		switch {
		case left == nil:
			r.Verdict, r.Evidence = VerdictNotMeasurable, lwhy
		case right == nil:
			r.Verdict, r.Evidence = VerdictNotMeasurable, rwhy
		case !s.Valid:
			// Same rule as P1-P4: no verdict on an invalid run, but the numbers are shown.
			r.Verdict, r.Evidence = VerdictNotMeasurable, noVerdictInvalid+"; measured: "+evidenceOf(c, *left, *right, s)
		default:
			h := compare(*left, c.Op, *right, c.Tolerance)
			r.Holds = &h
			r.Verdict = VerdictDoesNotHold
			if h {
				r.Verdict = VerdictHolds
			}
			r.Evidence = evidenceOf(c, *left, *right, s)
		}
		if !s.Valid && !strings.HasPrefix(r.Evidence, noVerdictInvalid) {
			r.Evidence = noVerdictInvalid + "; " + r.Evidence
		}
		out = append(out, r)
	}
	return out
}

func factorOf(c claim.Claim) float64 {
	if c.Factor == 0 {
		return 1
	}
	return c.Factor
}

func round3p(v *float64) *float64 {
	if v == nil {
		return nil
	}
	r := round3(*v)
	return &r
}

// compare applies op; within holds when |left - right| <= tol.
func compare(left float64, op string, right, tol float64) bool {
	// Figures are rounded to 3 decimals as reported, so that the verdict agrees with the numbers
	// a reader sees ("0.98 >= 0.98" holds even when the unrounded left is 0.97999).
	l, r := round3(left), round3(right)
	switch op {
	case claim.OpLess:
		return l < r
	case claim.OpLessEq:
		return l <= r
	case claim.OpGreater:
		return l > r
	case claim.OpGreaterEq:
		return l >= r
	case claim.OpWithin:
		return round3(math.Abs(l-r)) <= tol
	}
	return false
}

// describeMeasure writes a measure in words: "success_rate of /a in shared/slow-b",
// "max_in_use of calls:B in breaker/slow-b until breaker:B reached capacity".
func describeMeasure(m claim.Measure) string {
	what := m.Endpoint
	if m.Resource != "" {
		what = m.Resource
	}
	s := fmt.Sprintf("%s of %s in %s/%s", m.Metric, what, m.Configuration, m.Phase)
	if m.Until != "" {
		s += " until " + m.Until + " reached capacity"
	}
	return s
}

// ruleOf writes the claim's comparison in words.
func ruleOf(c claim.Claim) string {
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

// evidenceOf says the comparison with the measured numbers.
func evidenceOf(c claim.Claim, left, right float64, s *Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s", describeMeasure(c.Measure), num(left))
	if c.Op == claim.OpWithin {
		fmt.Fprintf(&b, ", %s from ", num(math.Abs(left-right)))
	} else {
		fmt.Fprintf(&b, " %s ", opWord(c.Op, compare(left, c.Op, right, c.Tolerance)))
	}
	if c.Than != nil {
		t, _ := s.measure(*c.Than)
		fmt.Fprintf(&b, "%s", num(right))
		if t != nil && (c.Factor != 0 || c.Plus != 0) {
			fmt.Fprintf(&b, " (%s = %s", describeMeasure(*c.Than), num(*t))
			if c.Factor != 0 {
				fmt.Fprintf(&b, ", x %s", num(c.Factor))
			}
			if c.Plus != 0 {
				fmt.Fprintf(&b, ", + %s", num(c.Plus))
			}
			b.WriteString(")")
		} else {
			fmt.Fprintf(&b, " (%s)", describeMeasure(*c.Than))
		}
	} else {
		b.WriteString(num(right))
	}
	if c.Op == claim.OpWithin {
		fmt.Fprintf(&b, " (tolerance %s)", num(c.Tolerance))
	}
	for _, m := range []*claim.Measure{&c.Measure, c.Than} {
		if m != nil && m.Until != "" {
			if _, reached := s.untilReached(*m); !reached {
				fmt.Fprintf(&b, "; %s never reached capacity in %s/%s, so the window is the whole phase", m.Until, m.Configuration, m.Phase)
			}
		}
	}
	return b.String()
}

// opWord writes op, negated when the comparison failed ("0.8 is not < 0.5").
func opWord(op string, holds bool) string {
	if holds {
		return op
	}
	return "is not " + op
}

// num writes a figure with at most 3 decimals and no trailing zeros.
func num(v float64) string {
	return strconv.FormatFloat(round3(v), 'f', -1, 64)
}

// measure returns the mean of m over the repetitions of its configuration, or nil and the
// reason it cannot be measured.
func (s *Summary) measure(m claim.Measure) (*float64, string) {
	members := group(s.Configurations, m.Configuration)
	if len(members) == 0 {
		return nil, fmt.Sprintf("no configuration %q in the run", m.Configuration)
	}
	var vals []float64
	for _, c := range members {
		ph := phaseOf(c, m.Phase)
		if ph == nil {
			return nil, fmt.Sprintf("no phase %q in %s", m.Phase, c.Name)
		}
		var v float64
		var why string
		var ok bool
		if m.Endpoint != "" {
			v, ok, why = endpointMetric(ph.Endpoints[m.Endpoint], m.Metric)
		} else {
			v, ok, why = resourceMetric(c, ph, m)
		}
		if !ok {
			return nil, fmt.Sprintf("%s: %s in %s", describeMeasure(m), why, c.Name)
		}
		vals = append(vals, v)
	}
	mean := meanCI(vals).Mean
	return &mean, ""
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

// claimsMarkdown renders the Claims section of report.md, or nothing when the scenario makes no
// claims.
func (s *Summary) claimsMarkdown(b *strings.Builder) {
	if len(s.Claims) == 0 && s.ClaimsNote == "" {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Claims\n\n")
	if s.ClaimsNote != "" {
		w("%s\n\n", s.ClaimsNote)
	}
	if len(s.Claims) == 0 {
		return
	}
	w("The scenario's own claims (its `claims:` block), judged on this run's numbers. Figures are means over repetitions; times in s from the phase start, latencies in ms, rates as shares.\n\n")
	w("| claim | says | verdict | measured | op | compared with | evidence |\n|---|---|---|---|---|---|---|\n")
	for _, c := range s.Claims {
		mark := "not measurable"
		switch c.Verdict {
		case VerdictHolds:
			mark = "**holds**"
		case VerdictDoesNotHold:
			mark = "**does not hold**"
		}
		w("| %s | %s | %s | %s | %s | %s | %s |\n", c.ID, mdCell(c.Says), mark, optNum(c.Left), mdCell(c.Op), optNum(c.Right), mdCell(c.Evidence))
	}
	w("\nRules:\n\n")
	for _, c := range s.Claims {
		w("- **%s**: %s.\n", c.ID, mdCell(c.Rule))
	}
	w("\n")
}

func optNum(v *float64) string {
	if v == nil {
		return "–"
	}
	return num(*v)
}

// mdCell keeps a table cell on one line and its pipes literal.
func mdCell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// claimVerdicts writes one terminal line per claim.
func (s *Summary) claimVerdicts(b *strings.Builder) {
	if s.ClaimsNote != "" {
		fmt.Fprintf(b, "%s\n", s.ClaimsNote)
	}
	for _, c := range s.Claims {
		fmt.Fprintf(b, "claim %s %s: %s\n", c.ID, c.Verdict, c.Evidence)
	}
}
