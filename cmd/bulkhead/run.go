package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// runOptions are the flags of `bulkhead run`.
type runOptions struct {
	Scenario    string
	Out         string
	Rate        string
	Scale       float64
	Only        []string
	Repetitions int
	Toxiproxy   string
	NoReport    bool
	Plain       bool
	LagLimit    time.Duration
}

func newRunCmd(runF func(*cobra.Command, *runOptions) error) *cobra.Command {
	o := &runOptions{}
	cmd := &cobra.Command{
		Use:   "run <scenario.yaml | name>",
		Short: "Run a scenario: every configuration on one time line, raw results and a report",
		Long: `Run a scenario file, or a built-in scenario by name (see 'bulkhead list').

For each configuration it starts fresh fake dependencies, an embedded Toxiproxy proxy in front of
each, the service, and one open-model attack per endpoint; faults switch at the phase offsets.
Results go to a new folder results/<timestamp>-<scenario>/ that is never reused. The first Ctrl-C
stops the load, removes the faults, closes every file and leaves a run marked partial; the
second exits at once.`,
		Example: `  bulkhead run hypothesis
  bulkhead run scenarios/hypothesis.yaml --rate 40/s --scale 0.5
  bulkhead run hypothesis --only shared --out /tmp/results
  bulkhead run hypothesis --toxiproxy http://127.0.0.1:8474`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Scenario = args[0]
			if runF != nil {
				return runF(cmd, o)
			}
			return runRun(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Out, "out", "o", experiment.DefaultResultsRoot, "folder to create the run folder in")
	f.StringVar(&o.Rate, "rate", "", "override every endpoint's rate, e.g. 50/s")
	f.Float64Var(&o.Scale, "scale", 1, "multiply every phase duration by this factor")
	f.StringSliceVar(&o.Only, "only", nil, "run only these configurations (comma-separated names)")
	f.IntVar(&o.Repetitions, "repetitions", 0, "override the scenario's repetitions")
	f.StringVar(&o.Toxiproxy, "toxiproxy", "", "use an external toxiproxy-server at this API URL instead of the embedded one")
	f.BoolVar(&o.NoReport, "no-report", false, "write raw results only; run 'bulkhead report' later")
	f.BoolVar(&o.Plain, "plain", false, "print plain progress lines even on a terminal")
	f.DurationVar(&o.LagLimit, "lag-limit", 0, "send-lag p99 above which a configuration's run is marked invalid (default: the scenario's load.lag_limit, else 1ms; recorded in the manifest)")
	return cmd
}

func runRun(cmd *cobra.Command, o *runOptions) error {
	sc, err := scenarios.Open(o.Scenario)
	if err != nil {
		return err
	}
	if err := applyOverrides(cmd, sc, o); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	live := !o.Plain && isTerminal(out)
	fmt.Fprintf(out, "scenario %s (%s): %d configuration(s) x %d repetition(s), time line %s each\n",
		sc.Name, sc.Path, len(sc.Configurations), max(sc.Repetitions, 1), sc.Duration())
	res, err := experiment.Run(cmd.Context(), sc, experiment.Options{
		ResultsRoot: o.Out,
		Toxiproxy:   o.Toxiproxy,
		Progress:    out,
		Live:        live,
		LagLimit:    o.LagLimit,
		Command:     "bulkhead " + strings.Join(os.Args[1:], " "),
		Version:     version,
	})
	if res == nil {
		return err
	}
	interrupted := errors.Is(err, experiment.ErrInterrupted)
	if err != nil && !interrupted {
		return fmt.Errorf("%w (what was written is in %s)", err, res.Dir)
	}
	if interrupted {
		fmt.Fprintf(out, "interrupted: partial results in %s\n", res.Dir)
	}
	if !res.Valid {
		fmt.Fprintf(out, "run is NOT valid:\n  %s\n", strings.Join(res.Invalid, "\n  "))
	}
	if o.NoReport {
		fmt.Fprintf(out, "raw results in %s (report with: bulkhead report %s)\n", res.Dir, res.Dir)
		return err
	}
	sum, rerr := report.Generate(res.Dir)
	if rerr != nil {
		return errors.Join(err, fmt.Errorf("report %s: %w", res.Dir, rerr))
	}
	fmt.Fprint(out, sum.Verdicts())
	fmt.Fprintf(out, "report: %s\n", filepath.Join(res.Dir, rundir.ReportFile))
	return err
}

// applyOverrides applies the flags that were set to the scenario and validates it again.
func applyOverrides(cmd *cobra.Command, sc *scenarios.Scenario, o *runOptions) error {
	f := cmd.Flags()
	if f.Changed("rate") {
		r, err := loadgen.ParseRate(o.Rate)
		if err != nil {
			return fmt.Errorf("--rate: %w", err)
		}
		sc.Load.Rate = r
		for i := range sc.Endpoints {
			sc.Endpoints[i].Rate = r
		}
	}
	if f.Changed("scale") {
		if o.Scale <= 0 {
			return fmt.Errorf("--scale: must be > 0, got %g", o.Scale)
		}
		for i := range sc.Phases {
			sc.Phases[i].Duration = time.Duration(float64(sc.Phases[i].Duration) * o.Scale)
		}
	}
	if f.Changed("repetitions") {
		if o.Repetitions <= 0 {
			return fmt.Errorf("--repetitions: must be > 0, got %d", o.Repetitions)
		}
		sc.Repetitions = o.Repetitions
	}
	if f.Changed("lag-limit") && o.LagLimit <= 0 {
		return fmt.Errorf("--lag-limit: must be > 0, got %s", o.LagLimit)
	}
	if len(o.Only) > 0 {
		var keep []scenarios.Configuration
		for _, name := range o.Only {
			found := false
			for _, c := range sc.Configurations {
				if c.Name == name {
					keep = append(keep, c)
					found = true
				}
			}
			if !found {
				var names []string
				for _, c := range sc.Configurations {
					names = append(names, c.Name)
				}
				return fmt.Errorf("--only: no configuration %q in %s (have: %s)", name, sc.Path, strings.Join(names, ", "))
			}
		}
		sc.Configurations = keep
		// Claims about configurations that will not run cannot be judged; leave them out
		// rather than fail validation.
		kept := map[string]bool{}
		for _, c := range keep {
			kept[c.Name] = true
		}
		var claims []claim.Claim
		for _, c := range sc.Claims {
			if kept[c.Measure.Configuration] && (c.Than == nil || kept[c.Than.Configuration]) {
				claims = append(claims, c)
			}
		}
		if n := len(sc.Claims) - len(claims); n > 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "--only: leaving out %d claim(s) about configurations that will not run\n", n)
		}
		sc.Claims = claims
	}
	if err := sc.Validate(); err != nil {
		return fmt.Errorf("after overrides: %w", err)
	}
	return nil
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
