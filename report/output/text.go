package output

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/bulkheadlab/bulkhead/rundir"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// Text prints the verdict lines for a terminal (see Lines), then where report.md is.
type Text struct {
	// W receives the lines; nil prints nothing.
	W io.Writer
}

// Name is "text".
func (Text) Name() string { return "text" }

// Write prints s's verdict lines and the path of dir's report.md to t.W.
func (t Text) Write(s *model.Summary, dir string) error {
	if t.W == nil {
		return nil
	}
	_, err := fmt.Fprintf(t.W, "%sreport: %s\n", Lines(s), filepath.Join(dir, rundir.ReportFile))
	return err
}

// Lines returns the lines for a terminal, the answer last, where the eye lands after a run: each
// claim with its verdict and what it says (one that did not hold prefixed with its "file:line"), then its rule with the constants and the measured
// figures; the exhausted-resource sentence of every phase that had a fault or failures, or that
// an interrupted run never reached (of each configuration's first repetition); then the headline
// (see Headline) and the verdict line.
func Lines(s *model.Summary) string {
	var b strings.Builder
	v := s.Verdict
	if v.Note != "" {
		fmt.Fprintf(&b, "%s\n", v.Note)
	}
	for _, c := range v.Claims {
		at := "" // a claim that did not hold is located at its line, as a compiler's error is
		if c.Verdict != model.VerdictHolds && c.Source != "" {
			at = c.Source + ": "
		}
		fmt.Fprintf(&b, "%sclaim %s %s: %s\n  %s\n", at, c.ID, c.Verdict, oneLine(c.Says), evidence(c))
	}
	repetitionLine(&b, v)
	// What ran out: the first repetition of each configuration (report.md has every one).
	for _, name := range model.GroupNames(s.Configurations) {
		reps := s.Repetitions(name)
		c := reps[0]
		label := c.Name
		if len(reps) > 1 {
			label = fmt.Sprintf("%s (repetition %d of %d)", c.Name, c.Repetition, len(reps))
		}
		for _, ph := range c.Phases {
			if len(ph.Faults) > 0 || ph.Cause != nil || !ph.Reached {
				fmt.Fprintf(&b, "%s, %s: %s\n", label, ph.Name, ph.Sentence)
			}
		}
	}
	if h := Headline(s); h != "" {
		b.WriteString("\n" + h)
	}
	if s.Partial {
		b.WriteString("partial: the run was interrupted; judged as far as it got")
		if len(s.NotReached) > 0 {
			fmt.Fprintf(&b, " (not reached: %s)", strings.Join(s.NotReached, "; "))
		}
		b.WriteString("\n")
	}
	if !s.Valid {
		fmt.Fprintf(&b, "no verdicts: the run is invalid: %s\n", strings.Join(s.Invalid, "; "))
	}
	if len(v.Claims) > 0 || v.Note != "" {
		fmt.Fprintf(&b, "verdict: %s (%s)\n", v.Outcome, countsText(v.Counts))
	}
	return b.String()
}

// evidence writes a claim's rule with its constants and what was measured: "rule: p99_ms of /b
// in split/latency < 50 · measured 7.5 [6.9, 8.1]"; the difference that decided when the claim
// did not hold; the reason when nothing could be measured.
func evidence(c model.Claim) string {
	e := "rule: " + c.Rule
	switch {
	case c.Verdict == model.VerdictNotMeasurable || c.Difference == nil:
		return e + " · " + oneLine(c.Reason)
	case c.Right != nil && (c.Right.Lo == nil || c.Right.Hi == nil || *c.Right.Lo != *c.Right.Hi):
		e += fmt.Sprintf(" · measured %s vs %s", c.Left, c.Right)
	default:
		e += fmt.Sprintf(" · measured %s", c.Left)
	}
	if c.Verdict != model.VerdictHolds {
		e += fmt.Sprintf(" · left - right %s", c.Difference)
	}
	return e
}

// oneLine keeps a text on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Headline writes the run's answer for a terminal: per fault phase and layout, the unaffected
// endpoint's success rate and p99 of successes with their 95% intervals, aligned. Empty when
// the run has no headline.
func Headline(s *model.Summary) string {
	if len(s.Headline) == 0 {
		return ""
	}
	var eps []string
	for _, h := range s.Headline {
		if !slices.Contains(eps, h.Endpoint) {
			eps = append(eps, h.Endpoint)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "answer: %s's success rate and p99 of successes per fault phase and layout (95%% intervals)\n", strings.Join(eps, ", "))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, h := range s.Headline {
		label := fmt.Sprintf("%s (%s)", h.Phase, h.Fault)
		if len(eps) > 1 {
			label = h.Endpoint + " in " + label
		}
		for i, l := range h.Layouts {
			if i > 0 {
				label = ""
			}
			if l.SuccessRate == nil && l.SuccessP99MS == nil {
				fmt.Fprintf(tw, "  %s\t%s\t–\t%s\n", label, l.Configuration, l.Why)
				continue
			}
			p99 := "p99 " + msIv(l.SuccessP99MS)
			if l.SuccessP99MS == nil {
				p99 = "no success"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", label, l.Configuration, rateIv(l.SuccessRate), p99)
		}
	}
	tw.Flush()
	return b.String()
}

// repetitionLine says whether every repetition alone gives each claim the same verdict.
func repetitionLine(b *strings.Builder, v model.VerdictBlock) {
	if v.SameInEveryRepetition == nil {
		return
	}
	if *v.SameInEveryRepetition {
		fmt.Fprintf(b, "each of the %d repetitions alone gives every claim the same verdict\n", len(v.Repetitions))
		return
	}
	var diff []string
	for _, c := range v.Claims {
		for _, r := range c.ByRepetition {
			if r.Verdict != c.Verdict {
				d := fmt.Sprintf("%s r%d %s", c.ID, r.Repetition, r.Says())
				if r.PreconditionReason != "" {
					d += " (" + r.PreconditionReason + ")"
				}
				diff = append(diff, d)
			}
		}
	}
	fmt.Fprintf(b, "verdicts differ between repetitions (their arrival offsets, too little data in one, or a busier machine in one: see each one's send lag): %s\n", strings.Join(diff, "; "))
}
