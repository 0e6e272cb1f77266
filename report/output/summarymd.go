package output

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// SummaryMD writes a short markdown summary to Path (--summary-md FILE), fit for a CI step
// summary ($GITHUB_STEP_SUMMARY, a merge request note): the verdict, the headline table, one row
// per claim and where the full report is. It appends when the file exists, as a step summary is
// shared by the steps of a job.
type SummaryMD struct {
	// Path is the file to append to (created when missing).
	Path string
}

// Name is "summary-md".
func (SummaryMD) Name() string { return "summary-md" }

// Write appends the summary of s to o.Path.
func (o SummaryMD) Write(s *model.Summary, dir string) error {
	f, err := os.OpenFile(o.Path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("write summary-md: %w", err)
	}
	if _, err := f.WriteString(summaryMarkdown(s, dir)); err != nil {
		f.Close()
		return fmt.Errorf("write summary-md %s: %w", o.Path, err)
	}
	return f.Close()
}

// verdictIcon marks a verdict for a glance.
func verdictIcon(v string) string {
	switch v {
	case model.VerdictHolds, model.OutcomePass:
		return "✅"
	case model.VerdictDoesNotHold, model.OutcomeFail:
		return "❌"
	case model.OutcomeInvalid:
		return "⛔"
	}
	return "⚠️"
}

// summaryMarkdown renders the step summary of s, read from dir.
func summaryMarkdown(s *model.Summary, dir string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	v := s.Verdict
	outcome := v.Outcome
	if outcome == "" {
		outcome = model.OutcomePass
	}
	w("### %s bulkhead %s: %s", verdictIcon(outcome), s.Scenario, outcome)
	if len(v.Claims) > 0 {
		w(" (%s)", countsText(v.Counts))
	}
	w("\n\n")
	if !s.Valid {
		w("The run is **invalid**, so no claim is judged:\n\n")
		for _, r := range s.Invalid {
			w("- %s\n", mdCell(r))
		}
		w("\n")
	}
	if len(s.Headline) > 0 {
		w("| phase (fault) | endpoint | layout | success rate | p99 of successes |\n|---|---|---|---|---|\n")
		for _, h := range s.Headline {
			label := fmt.Sprintf("%s (%s)", h.Phase, h.Fault)
			for i, l := range h.Layouts {
				if i > 0 {
					label = ""
				}
				w("| %s | %s | %s | %s | %s |\n", label, h.Endpoint, l.Configuration, rateIv(l.SuccessRate), msIv(l.SuccessP99MS))
			}
		}
		w("\n95%% intervals, the claims' method.\n\n")
	}
	if len(v.Claims) > 0 {
		w("| | claim | says | rule and figures |\n|---|---|---|---|\n")
		for _, c := range v.Claims {
			w("| %s | %s | %s | %s |\n", verdictIcon(c.Verdict), c.ID, mdCell(c.Says), mdCell(strings.TrimPrefix(evidence(c), "rule: ")))
		}
		w("\n")
	}
	w("Full report: `%s`\n\n", filepath.Join(dir, rundir.ReportFile))
	return b.String()
}
