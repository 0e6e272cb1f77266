package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/sweep"
)

// sweepOptions are the flags of `bulkhead sweep`.
type sweepOptions struct {
	Scenario      string
	Sizes         string
	Fractions     string
	Rates         string
	PhaseDuration time.Duration
	Out           string
	Toxiproxy     string
	LagLimit      time.Duration
	Parallel      int
	Load          string
	// Report is a sweep folder to re-report instead of running a sweep.
	Report string
}

func newSweepCmd(runF func(*cobra.Command, *sweepOptions) error) *cobra.Command {
	o := &sweepOptions{}
	cmd := &cobra.Command{
		Use:   "sweep <scenario.yaml | name> | sweep --report <sweep-dir>",
		Short: "Run a sizing sweep: pool size x fault delay x rate, drawn as heatmaps of shared vs split",
		Long: `Run a sizing sweep over a base scenario that has a shared and a split configuration, a latency
fault on one dependency, and endpoints on both sides of it (the built-in "hypothesis" has them).

For every cell of pool size P x fault delay (a fraction of the client timeout) x rate, it derives
a scenario (shared pool of P slots, split pools scaled by the same factor, a baseline phase and a
fault phase of --phase-duration each), runs it into its own run folder inside a new sweep folder
results/<timestamp>-sweep-<scenario>/, and analyses it. It then writes sweep.json, heatmaps of the
unaffected endpoint's success rate and p99 and of the affected endpoint's success throughput
(shared | split | comparison, one figure per rate), and sweep.md saying per rate where isolation
starts to matter and where it costs more than it saves. Cells run side by side as far as the
cores' request budget allows (--parallel); one line is printed per cell as it ends. Ctrl-C stops
the running cells and reports the cells that ran.

A scenario file may carry the default grid in a sweep: block (sizes, fractions, rates,
phase_duration); each flag given overrides its part.

With --report <sweep-dir>, nothing runs: sweep.md and the heatmaps are written again from the
folder's sweep.json, with the verdicts recomputed.`,
		Example: `  bulkhead sweep hypothesis
  bulkhead sweep hypothesis --sizes 4,10,20 --fractions 0.5,0.7,0.9,1.0 --rates 20/s,50/s
  bulkhead sweep scenarios/hypothesis.yaml --rates 20/s --phase-duration 4s --out /tmp/results
  bulkhead sweep --report results/20261130T090000Z-sweep-hypothesis`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Report != "" && len(args) > 0 {
				return fmt.Errorf("--report re-reports an existing sweep folder and takes no scenario, got %q", args[0])
			}
			if o.Report != "" {
				return nil
			}
			return cobra.ExactArgs(1)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Report != "" {
				return reportSweep(cmd.OutOrStdout(), o.Report)
			}
			o.Scenario = args[0]
			if runF != nil {
				return runF(cmd, o)
			}
			return runSweep(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Sizes, "sizes", joinInts(sweep.DefaultGrid.Sizes), "pool sizes P (comma-separated)")
	f.StringVar(&o.Fractions, "fractions", joinNums(sweep.DefaultGrid.Fractions, ""), "fault delays as fractions of the client timeout (comma-separated)")
	f.StringVar(&o.Rates, "rates", joinNums(sweep.DefaultGrid.Rates, "/s"), "rates per endpoint (comma-separated, e.g. 20/s,50/s)")
	f.DurationVar(&o.PhaseDuration, "phase-duration", sweep.DefaultPhaseDuration, "length of each cell's baseline and fault phases")
	f.StringVarP(&o.Out, "out", "o", experiment.DefaultResultsRoot, "folder to create the sweep folder in")
	f.StringVar(&o.Toxiproxy, "toxiproxy", "", "use an external toxiproxy-server at this API URL instead of the embedded one")
	f.DurationVar(&o.LagLimit, "lag-limit", sweep.DefaultLagLimit, "send lag p99 above which a cell's run is invalid")
	f.StringVar(&o.Load, "load", defaultLoad, loadFlagUsage)
	f.IntVar(&o.Parallel, "parallel", 0, "configuration runs at once across cells (default: as many as the cores hold at the grid's highest rate; 1: one after another)")
	f.StringVar(&o.Report, "report", "", "regenerate sweep.md and the heatmaps of this sweep folder instead of running a sweep")
	return cmd
}

// sweepGrid parses the grid flags.
func sweepGrid(o *sweepOptions) (sweep.Grid, error) {
	var g sweep.Grid
	var err error
	if g.Sizes, err = sweep.ParseSizes(o.Sizes); err != nil {
		return g, fmt.Errorf("--sizes: %w", err)
	}
	if g.Fractions, err = sweep.ParseFractions(o.Fractions); err != nil {
		return g, fmt.Errorf("--fractions: %w", err)
	}
	if g.Rates, err = sweep.ParseRates(o.Rates); err != nil {
		return g, fmt.Errorf("--rates: %w", err)
	}
	return g, g.Validate()
}

func runSweep(cmd *cobra.Command, o *sweepOptions) error {
	sc, err := scenarios.Open(o.Scenario)
	if err != nil {
		return err
	}
	applySweepBlock(cmd, o, sc.Sweep)
	g, err := sweepGrid(o)
	if err != nil {
		return err
	}
	if o.PhaseDuration <= 0 {
		return fmt.Errorf("--phase-duration: must be > 0, got %v", o.PhaseDuration)
	}
	if cmd.Flags().Changed("parallel") && o.Parallel <= 0 {
		return fmt.Errorf("--parallel: must be > 0, got %d", o.Parallel)
	}
	if o.LagLimit <= 0 {
		return fmt.Errorf("--lag-limit: must be > 0, got %v", o.LagLimit)
	}
	out := cmd.OutOrStdout()
	res, err := sweep.Run(cmd.Context(), sc, g, sweep.Options{
		ResultsRoot:   o.Out,
		PhaseDuration: o.PhaseDuration,
		Progress:      out,
		Toxiproxy:     o.Toxiproxy,
		Command:       "bulkhead " + strings.Join(os.Args[1:], " "),
		Version:       version,
		LagLimit:      o.LagLimit,
		Parallel:      o.Parallel,
		Load:          o.Load,
	})
	if res == nil {
		return err
	}
	if errors.Is(err, experiment.ErrInterrupted) {
		fmt.Fprintf(out, "interrupted: partial sweep in %s\n", res.Dir)
	}
	for _, f := range sweep.Findings(res.Sweep) {
		for _, s := range f.Sentences {
			fmt.Fprintln(out, s)
		}
	}
	fmt.Fprintf(out, "sweep took %s; report: %s\n", res.Sweep.Ended.Sub(res.Sweep.Started).Round(time.Second), filepath.Join(res.Dir, sweep.ReportFile))
	return err
}

// applySweepBlock fills the grid options from the scenario's sweep: block (nil: none), part by
// part, wherever the flag was not given: a flag overrides the file, the file the defaults.
func applySweepBlock(cmd *cobra.Command, o *sweepOptions, sp *scenarios.SweepSpec) {
	if sp == nil {
		return
	}
	f := cmd.Flags()
	if len(sp.Sizes) > 0 && !f.Changed("sizes") {
		o.Sizes = joinInts(sp.Sizes)
	}
	if len(sp.Fractions) > 0 && !f.Changed("fractions") {
		o.Fractions = joinNums(sp.Fractions, "")
	}
	if len(sp.Rates) > 0 && !f.Changed("rates") {
		o.Rates = joinNums(sp.Rates, "/s")
	}
	if sp.PhaseDuration > 0 && !f.Changed("phase-duration") {
		o.PhaseDuration = sp.PhaseDuration
	}
}

func joinInts(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ",")
}

func joinNums(xs []float64, suffix string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x) + suffix
	}
	return strings.Join(parts, ",")
}
