package sweep

import (
	"fmt"
	"slices"
	"strings"
)

// Verdicts of a cell.
const (
	// VerdictMatters: split keeps the unaffected endpoint's success at or above
	// Thresholds.SplitKeeps while shared lets it drop below Thresholds.SharedDrops.
	VerdictMatters = "isolation matters"
	// VerdictCosts: seed 000's awkward case. Split's success throughput of the affected endpoint
	// is lower than shared's by more than Thresholds.CostDrop of the offered rate while the
	// unaffected endpoint's success gains at most Thresholds.NoGain under split.
	VerdictCosts = "costs more than it saves"
	// VerdictNeither: neither of the above.
	VerdictNeither = "neither"
)

// Thresholds are the numbers the verdicts compare against, written into sweep.json and sweep.md.
type Thresholds struct {
	// SplitKeeps: the unaffected endpoint's success rate under split must be at least this.
	SplitKeeps float64 `json:"split_keeps_success_at_least"`
	// SharedDrops: ... while under shared it is below this.
	SharedDrops float64 `json:"shared_drops_success_below"`
	// CostDrop: split's affected success throughput lower than shared's by more than this share
	// of the offered rate (capacity given away, not noise on a few successes when both fail).
	CostDrop float64 `json:"cost_min_throughput_drop"`
	// NoGain: the unaffected endpoint's success rate under split exceeds shared's by at most this
	// (absolute, 0.01 = 1 point): isolation bought nothing.
	NoGain float64 `json:"cost_max_unaffected_gain"`
}

// DefaultThresholds are used when Options.Thresholds is the zero value.
var DefaultThresholds = Thresholds{SplitKeeps: 0.99, SharedDrops: 0.90, CostDrop: 0.10, NoGain: 0.01}

// Judge returns the verdict on a cell's figures, or "" when a configuration's figures are missing.
// It does not look at validity: the caller judges valid cells only.
func (th Thresholds) Judge(cr *CellResult) string {
	sh, sp := cr.Shared, cr.Split
	if sh == nil || sp == nil {
		return ""
	}
	if sp.UnaffectedSuccessRate >= th.SplitKeeps && sh.UnaffectedSuccessRate < th.SharedDrops {
		return VerdictMatters
	}
	drop := 0.0
	if cr.Rate > 0 {
		drop = (sh.AffectedThroughputRPS - sp.AffectedThroughputRPS) / cr.Rate
	}
	if drop > th.CostDrop && sp.UnaffectedSuccessRate-sh.UnaffectedSuccessRate <= th.NoGain {
		return VerdictCosts
	}
	return VerdictNeither
}

// Rules returns the thresholds in words, as sweep.md states them.
func (th Thresholds) Rules(r Roles) []string {
	return []string{
		fmt.Sprintf("**%s**: in the fault phase, split keeps %s's success rate >= %s while shared lets it drop below %s.",
			VerdictMatters, r.Unaffected, pctS(th.SplitKeeps), pctS(th.SharedDrops)),
		fmt.Sprintf("**%s** (seed 000's awkward case): in the fault phase, %s's success throughput under split is lower than under shared by more than %s of the offered rate, while %s's success rate under split is at most %.0f point(s) above shared's.",
			VerdictCosts, r.Affected, pctS(th.CostDrop), r.Unaffected, 100*th.NoGain),
		"Only valid cells are judged; invalid ones are hatched in the heatmaps and listed.",
	}
}

// Finding is what one rate's cells say.
type Finding struct {
	Rate float64 `json:"rate"`
	// Sentences, in order: where isolation starts to matter, where it costs more than it saves,
	// and which cells could not be judged.
	Sentences []string `json:"sentences"`
}

// Rejudge recomputes the verdict of every valid cell with figures from sw.Thresholds, so a
// sweep.json can be re-reported under other thresholds.
func Rejudge(sw *Sweep) {
	for i := range sw.Cells {
		cr := &sw.Cells[i]
		cr.Verdict = ""
		if cr.Valid {
			cr.Verdict = sw.Thresholds.Judge(cr)
		}
	}
}

// Findings summarises sw's cells per rate.
func Findings(sw *Sweep) []Finding {
	var out []Finding
	for _, rate := range sw.Grid.Rates {
		out = append(out, findingFor(sw, rate))
	}
	return out
}

func findingFor(sw *Sweep, rate float64) Finding {
	f := Finding{Rate: rate}
	r := sw.Roles
	var starts, never, costs, unjudged []string
	for _, p := range sw.Grid.Sizes {
		from := -1.0
		all, judged := true, 0
		for _, fr := range sw.Grid.Fractions {
			cr := sw.find(Cell{Size: p, Fraction: fr, Rate: rate})
			switch {
			case cr == nil || cr.RunDir == "":
				all = false
				unjudged = append(unjudged, fmt.Sprintf("P=%d %sx (not run)", p, fracLabel(fr)))
				continue
			case !cr.Valid || cr.Verdict == "":
				all = false
				unjudged = append(unjudged, fmt.Sprintf("P=%d %sx (invalid)", p, fracLabel(fr)))
				continue
			}
			judged++
			if cr.Verdict == VerdictMatters && from < 0 {
				from = fr
			}
			if cr.Verdict == VerdictCosts {
				costs = append(costs, fmt.Sprintf("P=%d at %sx (%s %.1f/s split vs %.1f/s shared, %s %s vs %s)",
					p, fracLabel(fr), r.Affected, cr.Split.AffectedThroughputRPS, cr.Shared.AffectedThroughputRPS,
					r.Unaffected, pctS(cr.Split.UnaffectedSuccessRate), pctS(cr.Shared.UnaffectedSuccessRate)))
			}
		}
		switch {
		case from >= 0:
			starts = append(starts, fmt.Sprintf("P=%d from %sx", p, fracLabel(from)))
		case all:
			never = append(never, fmt.Sprintf("P=%d", p))
		case judged > 0:
			never = append(never, fmt.Sprintf("P=%d (in its judged cells)", p))
		}
	}
	max := fracLabel(slices.Max(sw.Grid.Fractions))
	s := fmt.Sprintf("At %s/s per endpoint, isolation ", rateLabel(rate))
	switch {
	case len(starts) > 0:
		s += fmt.Sprintf("starts to matter (split keeps %s >= %s successful, shared drops it below %s) at %s the timeout",
			r.Unaffected, pctS(sw.Thresholds.SplitKeeps), pctS(sw.Thresholds.SharedDrops), joinAnd(starts))
		if len(never) > 0 {
			s += fmt.Sprintf("; at %s it does not, up to %sx", joinAnd(never), max)
		}
	case len(never) > 0:
		s += fmt.Sprintf("does not matter by this rule at %s, up to %sx the timeout", joinAnd(never), max)
	default:
		s += "cannot be judged: no cell is valid"
	}
	f.Sentences = append(f.Sentences, s+".")
	if len(costs) > 0 {
		f.Sentences = append(f.Sentences, fmt.Sprintf("It costs more than it saves at %s.", joinAnd(costs)))
	} else {
		f.Sentences = append(f.Sentences, fmt.Sprintf("No judged cell shows the awkward case (split costing %s more than %s while %s gains nothing).",
			r.Affected, pctS(sw.Thresholds.CostDrop), r.Unaffected))
	}
	if len(unjudged) > 0 {
		f.Sentences = append(f.Sentences, fmt.Sprintf("Not judged (reasons in the table of cells): %s.", strings.Join(unjudged, ", ")))
	}
	return f
}

func (sw *Sweep) find(c Cell) *CellResult {
	for i := range sw.Cells {
		if sw.Cells[i].Cell == c {
			return &sw.Cells[i]
		}
	}
	return nil
}

func shortReason(rs []string) string {
	if len(rs) == 0 {
		return "no figures"
	}
	s := rs[0]
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	if len(rs) > 1 {
		s += fmt.Sprintf(" and %d more", len(rs)-1)
	}
	return s
}

func joinAnd(xs []string) string {
	switch len(xs) {
	case 0:
		return ""
	case 1:
		return xs[0]
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}
