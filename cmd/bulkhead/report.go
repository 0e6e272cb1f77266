package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/sweep"
)

func newReportCmd() *cobra.Command {
	var memberStats, asJSON, plots bool
	var ci ciFlags
	cmd := &cobra.Command{
		Use:   "report <run-dir | sweep-dir>",
		Short: "Regenerate summary.json, report.md and plots of a run (or sweep.md of a sweep) from its files",
		Long: `Read a run folder's raw results, resource series and manifests, and write summary.json,
report.md and report.html into it (with --plots, also every figure as PNG and SVG under plots/:
most of a report's time). Raw files are never modified, so a report can be regenerated at any
time, on another machine.

Given a sweep folder (one holding sweep.json), regenerate sweep.md and the heatmaps from sweep.json
instead, with the verdicts recomputed (the same as bulkhead sweep --report).

Exit codes, as bulkhead run: 0 the run is valid and every claim holds; 99 a claim does not hold,
is inconclusive or not measurable; 3 the run is invalid; 2 not a run folder or bad usage; 1 any
other error. With --json, stdout carries only summary.json's verdict block.`,
		Example: `  bulkhead report results/20261130T090000Z-hypothesis
  bulkhead report results/20261130T090000Z-hypothesis --member-stats
  bulkhead report results/20261130T090000Z-hypothesis --junit junit.xml --summary-md "$GITHUB_STEP_SUMMARY"
  bulkhead report results/20261130T090000Z-sweep-hypothesis`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(filepath.Join(args[0], sweep.SweepFile)); err == nil {
				return reportSweep(cmd.OutOrStdout(), args[0])
			}
			outs := []output.Output{output.Markdown{NoPlotFiles: !plots}, output.HTML{}, output.JSON{MemberStats: memberStats}}
			if plots {
				outs = append([]output.Output{output.Plots{}}, outs...)
			}
			outs = append(outs, tail(cmd, ci, asJSON)...)
			sum, err := report.GenerateWith(args[0], report.Options{Outputs: outs})
			if err != nil {
				return reportError(err)
			}
			return verdictError(sum)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print summary.json's verdict block as JSON on stdout; the verdict lines go to stderr")
	ci.add(cmd)
	cmd.Flags().BoolVar(&plots, "plots", false, "also draw every figure as PNG and SVG files under plots/ (report.html has them inline; bulkhead run always draws them)")
	cmd.Flags().BoolVar(&memberStats, "member-stats", false,
		"keep every grouped endpoint's own statistics in summary.json (runs of more than 8 endpoints; large)")
	return cmd
}

// ciFlags are the outputs for CI that bulkhead run and bulkhead report both take.
type ciFlags struct {
	junit, summaryMD string
}

func (f *ciFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.junit, "junit", "", "also write a JUnit XML report to this file: the run's validity and one testcase per claim (see docs/ci.md)")
	cmd.Flags().StringVar(&f.summaryMD, "summary-md", "", "also append a short markdown summary to this file, e.g. $GITHUB_STEP_SUMMARY (see docs/ci.md)")
}

// tail is what bulkhead run and bulkhead report write and print once the run folder's files are
// written: the JUnit report and the step summary when asked; the verdict lines and where
// report.md is; GitHub Actions annotations for the claims that did not hold when running there
// (GITHUB_ACTIONS=true); then, with --json, the verdict block alone on stdout (the lines then go
// to stderr).
func tail(cmd *cobra.Command, f ciFlags, asJSON bool) []output.Output {
	var outs []output.Output
	if f.junit != "" {
		outs = append(outs, output.JUnit{Path: f.junit})
	}
	if f.summaryMD != "" {
		outs = append(outs, output.SummaryMD{Path: f.summaryMD})
	}
	lines := cmd.OutOrStdout()
	if asJSON {
		lines = cmd.ErrOrStderr()
	}
	outs = append(outs, output.Text{W: lines})
	if os.Getenv("GITHUB_ACTIONS") == "true" {
		outs = append(outs, output.Annotations{W: lines, GitHub: true})
	}
	if asJSON {
		outs = append(outs, output.VerdictJSON{W: cmd.OutOrStdout()})
	}
	return outs
}

// reportSweep regenerates a sweep folder's sweep.md and heatmaps from its sweep.json and prints
// the findings.
func reportSweep(out io.Writer, dir string) error {
	sw, err := sweep.Report(dir)
	if err != nil {
		return err
	}
	for _, f := range sweep.Findings(sw) {
		for _, s := range f.Sentences {
			fmt.Fprintln(out, s)
		}
	}
	fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, sweep.ReportFile))
	return nil
}

func newCompareCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "compare <run-dir>...",
		Short: "Lay several runs side by side",
		Long: `Write compare.md and comparison plots for several run folders into --out, the first run the one
the others are compared with: each run's verdicts; claim by claim and for the headline, each run's
figure and its change from the first run with a 95% interval from the verdict engine (the runs
resampled independently); and per fault phase, the unaffected endpoint over the phase's time, one
line per run drawn from every repetition (median, dotted its range).`,
		Example: `  bulkhead compare results/run1 results/run2 --out results/compare-1-2`,
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				out = filepath.Join(experiment.DefaultResultsRoot, time.Now().UTC().Format("20060102T150405Z")+"-compare")
			}
			if err := report.Compare(out, args...); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "comparison: %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "folder to write the comparison into; must not exist (default results/<timestamp>-compare)")
	return cmd
}
