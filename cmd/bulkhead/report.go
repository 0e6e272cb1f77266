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
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/sweep"
)

func newReportCmd() *cobra.Command {
	var opts report.GenerateOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "report <run-dir | sweep-dir>",
		Short: "Regenerate summary.json, report.md and plots of a run (or sweep.md of a sweep) from its files",
		Long: `Read a run folder's raw results, resource series and manifests, and write summary.json,
report.md and plots/ into it. Raw files are never modified, so a report can be regenerated at any
time, on another machine.

Given a sweep folder (one holding sweep.json), regenerate sweep.md and the heatmaps from sweep.json
instead, with the verdicts recomputed (the same as bulkhead sweep --report).

Exit codes, as bulkhead run: 0 the run is valid and every claim holds; 99 a claim does not hold,
is inconclusive or not measurable; 3 the run is invalid; 2 not a run folder or bad usage; 1 any
other error. With --json, stdout carries only summary.json's verdict block.`,
		Example: `  bulkhead report results/20261130T090000Z-hypothesis
  bulkhead report results/20261130T090000Z-hypothesis --member-stats
  bulkhead report results/20261130T090000Z-sweep-hypothesis`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := os.Stat(filepath.Join(args[0], sweep.SweepFile)); err == nil {
				return reportSweep(cmd.OutOrStdout(), args[0])
			}
			sum, err := report.GenerateWith(args[0], opts)
			if err != nil {
				return reportError(err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				out = cmd.ErrOrStderr()
			}
			fmt.Fprint(out, sum.Verdicts())
			fmt.Fprintf(out, "report: %s\n", filepath.Join(args[0], rundir.ReportFile))
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), sum.Verdict); err != nil {
					return err
				}
			}
			return verdictError(sum)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print summary.json's verdict block as JSON on stdout; the verdict lines go to stderr")
	cmd.Flags().BoolVar(&opts.MemberStats, "member-stats", false,
		"keep every grouped endpoint's own statistics in summary.json (runs of more than 8 endpoints; large)")
	return cmd
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
		Use:     "compare <run-dir>...",
		Short:   "Lay several runs side by side",
		Long:    `Write compare.md and comparison plots for several run folders into --out.`,
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
