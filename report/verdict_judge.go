package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
)

// Interval is a figure with its 95% interval. Lo or Hi is null when the interval has no end on
// that side (too few requests for a quantile, or too many resamples without a value).
type Interval struct {
	Value float64  `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
}

// ConditionResult is one comparison judged: a claim's own, or one of its preconditions.
type ConditionResult struct {
	// Rule is the comparison in words, e.g. "success_rate of /a in shared/slow-b < 0.5".
	Rule string `json:"rule"`
	// Verdict is VerdictHolds, VerdictDoesNotHold, VerdictInconclusive or VerdictNotMeasurable.
	Verdict string `json:"verdict"`
	// Left is the measured figure, Right what it is compared with (a number, or another figure
	// times the factor plus plus), Difference is Left - Right, whose interval decides; null when
	// not measurable.
	Left       *Interval `json:"left"`
	Right      *Interval `json:"right"`
	Difference *Interval `json:"difference"`
	// Reason says the comparison with its numbers, or why it could not be measured.
	Reason string `json:"reason"`
}

// Claim is one claim of the scenario file (its `claims:` block) judged on the run's numbers.
type Claim struct {
	ID   string `json:"id"`
	Says string `json:"says"`
	// Holds is true (holds), false (does not hold) or null (inconclusive, not measurable).
	Holds *bool  `json:"holds"`
	Op    string `json:"op"`
	ConditionResult
	// Require holds the claim's preconditions, judged the same way; the claim is not
	// measurable unless every one holds.
	Require []ConditionResult `json:"require,omitempty"`
	// ByRepetition is the claim judged on each repetition alone (several repetitions only).
	ByRepetition []RepetitionVerdict `json:"by_repetition,omitempty"`
}

// VerdictBlock is summary.json's verdict: what `--json` prints and what a CI job reads.
type VerdictBlock struct {
	// Outcome is "pass" (valid, every claim holds), "fail" (valid, some claim does not hold, is
	// inconclusive or not measurable) or "invalid" (no verdict: the run is invalid).
	Outcome string   `json:"outcome"`
	RunDir  string   `json:"run_dir"`
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// Counts counts the claims by verdict.
	Counts map[string]int `json:"counts"`
	Method string         `json:"method"`
	Claims []Claim        `json:"claims"`
	// Note says why the claims could not be read.
	Note string `json:"note,omitempty"`
	// Repetitions and SameInEveryRepetition are set with several repetitions: what each ran with
	// (arrival offsets), and whether every claim's verdict on each repetition alone equals its
	// verdict on all of them.
	Repetitions           []RepetitionInfo `json:"repetitions,omitempty"`
	SameInEveryRepetition *bool            `json:"same_in_every_repetition,omitempty"`
}

// Verdict block outcomes.
const (
	OutcomePass    = "pass"
	OutcomeFail    = "fail"
	OutcomeInvalid = "invalid"
)

// judge fills s.Verdict from claims (and note, why they could not be read). With several
// repetitions it also judges every claim on each repetition alone (ByRepetition), so a reader
// sees whether a verdict depends on the arrival offsets a repetition ran with.
func (s *Summary) judge(claims []claim.Claim, note string) {
	v := VerdictBlock{RunDir: s.dir, Valid: s.Valid, Invalid: s.Invalid, Method: MethodText, Note: note,
		Counts: map[string]int{}, Claims: []Claim{}}
	e := newEngine(s)
	for _, c := range claims {
		r := judgeClaim(e, c, s.Valid)
		v.Counts[r.Verdict]++
		v.Claims = append(v.Claims, r)
	}
	reps := s.repetitions()
	if len(reps) > 1 && len(claims) > 0 && s.Valid {
		for _, rep := range reps {
			sub := *s
			sub.Configurations = nil
			for _, c := range s.Configurations {
				if c.Repetition == rep {
					sub.Configurations = append(sub.Configurations, c)
				}
			}
			v.Repetitions = append(v.Repetitions, RepetitionInfo{Repetition: rep, Offsets: sub.offsets()})
			re := newEngine(&sub)
			for i, c := range claims {
				r := judgeClaim(re, c, s.Valid)
				v.Claims[i].ByRepetition = append(v.Claims[i].ByRepetition, RepetitionVerdict{Repetition: rep, Verdict: r.Verdict, Difference: r.Difference})
			}
		}
		same := true
		for _, c := range v.Claims {
			for _, r := range c.ByRepetition {
				same = same && r.Verdict == c.Verdict
			}
		}
		v.SameInEveryRepetition = &same
	}
	switch {
	case !s.Valid:
		v.Outcome = OutcomeInvalid
	case note != "" || v.Counts[VerdictHolds] < len(v.Claims):
		v.Outcome = OutcomeFail
	default:
		v.Outcome = OutcomePass
	}
	s.Verdict = v
}

// judgeClaim judges one claim with engine e: its preconditions first, then its condition.
func judgeClaim(e *engine, c claim.Claim, valid bool) Claim {
	r := Claim{ID: c.ID, Says: c.Says, Op: c.Op, ConditionResult: e.condition(c.Condition)}
	for _, q := range c.Require {
		r.Require = append(r.Require, e.condition(q))
	}
	for _, q := range r.Require {
		if q.Verdict != VerdictHolds {
			r.Verdict = VerdictNotMeasurable
			r.Reason = fmt.Sprintf("precondition not met (%s): %s; measured: %s", q.Verdict, q.Reason, r.Reason)
			break
		}
	}
	if !valid {
		r.Verdict = VerdictNotMeasurable
		r.Reason = "no verdict: the run is invalid; measured: " + r.Reason
	}
	switch r.Verdict {
	case VerdictHolds:
		r.Holds = boolPtr(true)
	case VerdictDoesNotHold:
		r.Holds = boolPtr(false)
	}
	return r
}

// RepetitionVerdict is a claim judged on one repetition alone.
type RepetitionVerdict struct {
	Repetition int       `json:"repetition"`
	Verdict    string    `json:"verdict"`
	Difference *Interval `json:"difference,omitempty"`
}

// RepetitionInfo says what a repetition ran with: each endpoint's arrival offset (constant
// arrivals) as recorded in its manifests.
type RepetitionInfo struct {
	Repetition int    `json:"repetition"`
	Offsets    string `json:"offsets,omitempty"`
}

// repetitions lists the repetition numbers of the run's configurations, in order.
func (s *Summary) repetitions() []int {
	var reps []int
	for _, c := range s.Configurations {
		if !slices.Contains(reps, c.Repetition) {
			reps = append(reps, c.Repetition)
		}
	}
	slices.Sort(reps)
	return reps
}

// offsets writes the arrival offsets of the first configuration's endpoints ("/a +0 ms, /b
// +17.6 ms").
func (s *Summary) offsets() string {
	for _, c := range s.Configurations {
		if c.manifest == nil {
			continue
		}
		var parts []string
		for _, e := range c.manifest.Endpoints {
			parts = append(parts, fmt.Sprintf("%s +%.1f ms", e.Path, float64(e.Offset)/1e6))
		}
		return strings.Join(parts, ", ")
	}
	return ""
}

func boolPtr(b bool) *bool { return &b }

// condition judges one comparison: the interval of left - right against op.
func (e *engine) condition(c claim.Condition) ConditionResult {
	r := ConditionResult{Rule: ruleOf(c), Verdict: VerdictNotMeasurable}
	left, why := e.measure(c.Measure)
	if left == nil {
		r.Reason = why
		return r
	}
	var right *estimate
	if c.Value != nil {
		right = constant(*c.Value*factorOf(c) + c.Plus)
	} else if c.Than != nil {
		t, why := e.measure(*c.Than)
		if t == nil {
			r.Left, r.Reason = intervalOf(left), why
			return r
		}
		right = scaled(t, factorOf(c), c.Plus)
	}
	d := minus(left, right)
	lo, hi := d.interval()
	r.Left, r.Right, r.Difference = intervalOf(left), intervalOf(right), intervalOf(d)
	r.Verdict = decide(c.Op, lo, hi, c.Tolerance)
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s", describeMeasure(c.Measure), showInterval(r.Left))
	if c.Than != nil {
		fmt.Fprintf(&b, "; %s = %s", describeRight(c), showInterval(r.Right))
	}
	if c.Op == claim.OpWithin {
		fmt.Fprintf(&b, "; left - right = %s, needs within ±%s", showInterval(r.Difference), num(c.Tolerance))
	} else {
		fmt.Fprintf(&b, "; left - right = %s, needs %s 0", showInterval(r.Difference), c.Op)
	}
	for _, m := range []*claim.Measure{&c.Measure, c.Than} {
		if m != nil && m.Until != "" {
			if _, reached := e.s.untilReached(*m); !reached {
				fmt.Fprintf(&b, "; %s never reached capacity in %s/%s, so the window is the whole phase", m.Until, m.Configuration, m.Phase)
			}
		}
	}
	r.Reason = b.String()
	return r
}

// decide applies op to the interval [lo, hi] of left - right.
func decide(op string, lo, hi, tol float64) string {
	var all, none bool // every value in the interval satisfies op; none does
	switch op {
	case claim.OpLess:
		all, none = hi < 0, lo >= 0
	case claim.OpLessEq:
		all, none = hi <= 0, lo > 0
	case claim.OpGreater:
		all, none = lo > 0, hi <= 0
	case claim.OpGreaterEq:
		all, none = lo >= 0, hi < 0
	case claim.OpWithin:
		all, none = lo >= -tol && hi <= tol, lo > tol || hi < -tol
	}
	switch {
	case all:
		return VerdictHolds
	case none:
		return VerdictDoesNotHold
	}
	return VerdictInconclusive
}

// describeRight writes the right side of a comparison with another figure.
func describeRight(c claim.Condition) string {
	s := describeMeasure(*c.Than)
	if c.Factor != 0 {
		s = num(c.Factor) + " x " + s
	}
	if c.Plus != 0 {
		s += " + " + num(c.Plus)
	}
	return s
}

func intervalOf(e *estimate) *Interval {
	lo, hi := e.interval()
	iv := &Interval{Value: clean(e.value)}
	if !math.IsInf(lo, 0) {
		iv.Lo = &lo
	}
	if !math.IsInf(hi, 0) {
		iv.Hi = &hi
	}
	return iv
}

// showInterval writes "0.42 [0.38, 0.47]", with ∞ for an open end.
func showInterval(iv *Interval) string {
	if iv == nil {
		return "–"
	}
	lo, hi := "−∞", "∞"
	if iv.Lo != nil {
		lo = num(*iv.Lo)
	}
	if iv.Hi != nil {
		hi = num(*iv.Hi)
	}
	if iv.Lo != nil && iv.Hi != nil && *iv.Lo == *iv.Hi {
		return num(iv.Value) + " [exact]"
	}
	return fmt.Sprintf("%s [%s, %s]", num(iv.Value), lo, hi)
}

// claimsMarkdown renders the Claims section of report.md, or nothing when the scenario makes no
// claims.
func (s *Summary) claimsMarkdown(b *strings.Builder) {
	v := s.Verdict
	if len(v.Claims) == 0 && v.Note == "" {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Claims\n\n")
	if v.Note != "" {
		w("%s\n\n", v.Note)
	}
	if len(v.Claims) == 0 {
		return
	}
	w("The scenario's claims (its `claims:` block), judged on this run's numbers. Each figure is shown as value [95%% interval]; times in s from the phase start, latencies in ms, rates as shares.\n\n")
	w("**Method.** %s\n\n", MethodText)
	w("Outcome: **%s** (%s).\n\n", v.Outcome, countsText(v.Counts))
	w("| claim | says | verdict | left | right | left - right | reason |\n|---|---|---|---|---|---|---|\n")
	for _, c := range v.Claims {
		w("| %s | %s | %s | %s | %s | %s | %s |\n", c.ID, mdCell(c.Says), verdictMark(c.Verdict),
			showInterval(c.Left), showInterval(c.Right), showInterval(c.Difference), mdCell(c.Reason))
	}
	if len(v.Repetitions) > 1 {
		w("\n**Each repetition alone.** The same claims judged on one repetition at a time (each ran with its own arrival offsets), to show whether a verdict depends on the offset picked:\n\n")
		w("| claim | all |")
		for _, r := range v.Repetitions {
			w(" r%d (%s) |", r.Repetition, mdCell(r.Offsets))
		}
		w("\n|---|---|%s\n", strings.Repeat("---|", len(v.Repetitions)))
		for _, c := range v.Claims {
			w("| %s | %s |", c.ID, c.Verdict)
			for _, r := range c.ByRepetition {
				w(" %s %s |", r.Verdict, showInterval(r.Difference))
			}
			w("\n")
		}
		if v.SameInEveryRepetition != nil && *v.SameInEveryRepetition {
			w("\nEvery claim has the same verdict in each repetition as in all of them.\n")
		} else {
			w("\nSome verdicts differ between repetitions: they depend on the arrival offsets (or on too little data in one repetition).\n")
		}
	}
	w("\nRules:\n\n")
	for _, c := range v.Claims {
		w("- **%s**: %s", c.ID, mdCell(c.Rule))
		for _, q := range c.Require {
			w("; requires %s (%s)", mdCell(q.Rule), q.Verdict)
		}
		w(".\n")
	}
	w("\n")
}

func verdictMark(v string) string {
	if v == VerdictNotMeasurable {
		return v
	}
	return "**" + v + "**"
}

// countsText writes "3 holds, 1 inconclusive".
func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range []string{VerdictHolds, VerdictDoesNotHold, VerdictInconclusive, VerdictNotMeasurable} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		return "no claims"
	}
	return strings.Join(parts, ", ")
}

// mdCell keeps a table cell on one line and its pipes literal.
func mdCell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

// claimVerdicts writes one terminal line per claim, then the outcome.
func (s *Summary) claimVerdicts(b *strings.Builder) {
	v := s.Verdict
	if v.Note != "" {
		fmt.Fprintf(b, "%s\n", v.Note)
	}
	for _, c := range v.Claims {
		fmt.Fprintf(b, "claim %s %s: %s\n", c.ID, c.Verdict, c.Reason)
	}
	if len(v.Claims) > 0 || v.Note != "" {
		fmt.Fprintf(b, "verdict: %s (%s)\n", v.Outcome, countsText(v.Counts))
	}
	if v.SameInEveryRepetition != nil {
		if *v.SameInEveryRepetition {
			fmt.Fprintf(b, "each of the %d repetitions (arrival offsets) alone gives every claim the same verdict\n", len(v.Repetitions))
		} else {
			var diff []string
			for _, c := range v.Claims {
				for _, r := range c.ByRepetition {
					if r.Verdict != c.Verdict {
						diff = append(diff, fmt.Sprintf("%s r%d %s", c.ID, r.Repetition, r.Verdict))
					}
				}
			}
			fmt.Fprintf(b, "verdicts differ between repetitions (arrival offsets): %s\n", strings.Join(diff, "; "))
		}
	}
}
