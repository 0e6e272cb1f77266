package model

import "fmt"

// Verdicts of a claim.
const (
	VerdictHolds         = "holds"
	VerdictDoesNotHold   = "does not hold"
	VerdictInconclusive  = "inconclusive"
	VerdictNotMeasurable = "not measurable"
)

// Interval is a figure with its 95% interval. Lo or Hi is null when the interval has no end on
// that side (too few requests for a quantile, or too many resamples without a value).
type Interval struct {
	Value float64  `json:"value"`
	Lo    *float64 `json:"lo"`
	Hi    *float64 `json:"hi"`
	// Basis says what the interval rests on (Basis*): "" in folders judged before it existed.
	Basis string `json:"basis,omitempty"`
}

// What an interval rests on.
const (
	// BasisRepetitions: the spread between repetitions (it contains run-to-run variation).
	BasisRepetitions = "repetitions"
	// BasisBinomial: a rate's binomial floor, wider than the spread the run showed.
	BasisBinomial = "binomial"
	// BasisOneRun: one repetition's own noise only, not the variation between runs.
	BasisOneRun = "one run"
	// BasisPoint: a figure read once from a time line, decided no finer than its resolution.
	BasisPoint = "point"
	// BasisNone: nothing bounds it (too few blocks, a maximum of one run).
	BasisNone = "none"
	// BasisExact: a declared number.
	BasisExact = "exact"
)

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
	// Source is where the claim is written: "file:line" of its scenario file ("" when unknown).
	Source string `json:"source,omitempty"`
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
	// SchemaVersion is SchemaVersion (docs/verdict.schema.json).
	SchemaVersion int `json:"schema_version"`
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
	// NoiseFloor holds the scenario's declared noise floors by metric, as 95% half-widths
	// ("abs" in the metric's unit, "rel" a share of the figure): what a lone repetition's
	// comparison between configurations, and a comparison of two runs, are widened by.
	NoiseFloor map[string]Floor `json:"noise_floor,omitempty"`
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

// RepetitionVerdict is a claim judged on one repetition alone.
type RepetitionVerdict struct {
	Repetition int       `json:"repetition"`
	Verdict    string    `json:"verdict"`
	Difference *Interval `json:"difference,omitempty"`
	// Precondition is, when the claim is not measurable in this repetition because one of its
	// preconditions did not hold there, that precondition's verdict alone ("inconclusive": the
	// repetition could not decide it; "does not hold": it contradicts the run).
	Precondition string `json:"precondition,omitempty"`
	// PreconditionReason is that precondition's own reason, with its figures ("p99_ms of /b in
	// shared/baseline = 38.2 [21.5, 54.9]; needs <= 50"): which one it was, and by how much.
	PreconditionReason string `json:"precondition_reason,omitempty"`
}

// Says writes the verdict as a reader needs it: "not measurable (precondition inconclusive)"
// when a precondition decided it.
func (r RepetitionVerdict) Says() string {
	if r.Precondition != "" {
		return fmt.Sprintf("%s (precondition %s)", r.Verdict, r.Precondition)
	}
	return r.Verdict
}

// RepetitionInfo says what a repetition ran with: each endpoint's arrival offset (constant
// arrivals) as recorded in its manifests.
type RepetitionInfo struct {
	Repetition int    `json:"repetition"`
	Offsets    string `json:"offsets,omitempty"`
}

// Floor is a declared noise floor (claim.Floor, as summary.json writes it).
type Floor struct {
	Abs float64 `json:"abs,omitempty"`
	Rel float64 `json:"rel,omitempty"`
}
