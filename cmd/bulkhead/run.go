package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/output"
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
	Parallel    int
	Load        string
	Shards      int
	Engine      string
	EngineSet   experiment.EngineSettings
	JSON        bool
	Force       bool
	CI          ciFlags
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
second exits at once.

Exit codes: 0 the run is valid and every claim holds; 99 a claim does not hold, is inconclusive or
not measurable; 3 the run is invalid; 2 bad scenario or usage; 130 interrupted; 1 any other error.
With --json, stdout carries only summary.json's verdict block (progress goes to stderr).`,
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
	addOverrideFlags(cmd, o)
	f.StringVar(&o.Toxiproxy, "toxiproxy", "", "use an external toxiproxy-server at this API URL instead of the embedded one")
	f.BoolVar(&o.NoReport, "no-report", false, "write raw results only; run 'bulkhead report' later")
	f.BoolVar(&o.Plain, "plain", false, "print plain progress lines even on a terminal")
	f.StringVar(&o.Load, "load", defaultLoad, loadFlagUsage)
	f.StringVar(&o.Engine, "engine", experiment.LocalEngine, "where each configuration run's dependencies, Toxiproxy, service and load run: local (this machine) or kubernetes (a namespace; see docs/kubernetes.md)")
	f.StringVar(&o.EngineSet.Namespace, "namespace", "", "with --engine kubernetes: the namespace (default: the kubeconfig context's, else default)")
	f.StringVar(&o.EngineSet.Kubeconfig, "kubeconfig", "", "with --engine kubernetes: the kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or the pod's service account)")
	f.StringVar(&o.EngineSet.Image, "image", "", "with --engine kubernetes: the bulkhead image the pods run")
	f.IntVar(&o.Shards, "shards", 1, "send each configuration's load from this many 'bulkhead attack --segment k/N' processes started together (with --load process); their raw files are merged")
	f.IntVar(&o.Parallel, "parallel", 0, "how many configuration runs (configurations x repetitions) run at once, each with its own service, Toxiproxy and load (default: as many as the cores hold at the scenario's rate; 1: one after another)")
	f.BoolVar(&o.JSON, "json", false, "print summary.json's verdict block (or, with --no-report, the run folder) as JSON on stdout; progress goes to stderr")
	f.BoolVar(&o.Force, "force", false, "start even when the estimate (requests, disk, file descriptors, memory) exceeds what this machine has")
	o.CI.add(cmd)
	return cmd
}

// addOverrideFlags adds the flags that change the scenario as loaded (scenarios.Overrides):
// bulkhead run runs what bulkhead plan, given the same flags, shows.
func addOverrideFlags(cmd *cobra.Command, o *runOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Rate, "rate", "", "override every endpoint's rate, e.g. 50/s")
	f.Float64Var(&o.Scale, "scale", 1, "multiply every phase duration by this factor")
	f.StringSliceVar(&o.Only, "only", nil, "run only these configurations (comma-separated names)")
	f.IntVar(&o.Repetitions, "repetitions", 0, "override the scenario's repetitions")
	f.DurationVar(&o.LagLimit, "lag-limit", 0, "send-lag p99 above which a configuration's run is marked invalid (default: the scenario's load.lag_limit, else 1ms; recorded in the manifest)")
}

// openScenario loads o.Scenario (a file or a built-in name) and applies the override flags that
// were set: the scenario bulkhead run runs and bulkhead plan shows. It returns the overrides
// applied and the claims --only left out; every error is a usage error.
func openScenario(cmd *cobra.Command, o *runOptions) (*scenarios.Scenario, scenarios.Overrides, []claim.Claim, error) {
	sc, err := scenarios.Open(o.Scenario)
	if err != nil {
		return nil, scenarios.Overrides{}, nil, usageError(err)
	}
	ov, err := overridesOf(cmd, o)
	if err != nil {
		return nil, ov, nil, usageError(err)
	}
	dropped, err := sc.Override(ov)
	if err != nil {
		return nil, ov, nil, usageError(flagError(err))
	}
	return sc, ov, dropped, nil
}

func runRun(cmd *cobra.Command, o *runOptions) error {
	sc, ov, dropped, err := openScenario(cmd, o)
	if err != nil {
		return err
	}
	if o.NoReport && (o.CI.junit != "" || o.CI.summaryMD != "") {
		return usageError(errors.New("--junit and --summary-md come from the report: drop --no-report (or run bulkhead report later with them)"))
	}
	out := cmd.OutOrStdout()
	if o.JSON {
		out = cmd.ErrOrStderr() // stdout carries the JSON alone
	}
	if len(dropped) > 0 {
		fmt.Fprintf(out, "--only: leaving out %s about configurations that will not run\n", count(len(dropped), "claim"))
	}
	if cmd.Flags().Changed("parallel") && o.Parallel <= 0 {
		return usageError(fmt.Errorf("--parallel: must be > 0, got %d", o.Parallel))
	}
	if _, err := experiment.ParseLoad(o.Load); err != nil {
		return usageError(fmt.Errorf("--load: %w", err))
	}
	engine, err := experiment.OpenEngine(o.Engine, o.EngineSet)
	if err != nil {
		return usageError(fmt.Errorf("--engine: %w", err))
	}
	local := engine.Name() == experiment.LocalEngine
	if o.Shards < 1 || o.Shards > 1 && local && o.Load != experiment.LoadProcess {
		return usageError(fmt.Errorf("--shards %d: want 1, or more with --load %s or --engine kubernetes", o.Shards, experiment.LoadProcess))
	}
	if err := checkEstimate(out, sc, o.Out, o.Parallel, o.Load, o.Force, o.NoReport); err != nil {
		return usageError(err)
	}
	live := !o.Plain && !o.JSON && isTerminal(out)
	fmt.Fprintf(out, "scenario %s (%s): %s x %s, time line %s each\n",
		sc.Name, sc.Path, count(len(sc.Configurations), "configuration"), count(max(sc.Repetitions, 1), "repetition"), sc.Duration())
	printInfeasible(out, sc)
	var recorded any
	if !ov.IsZero() {
		recorded = ov
	}
	res, err := experiment.Run(cmd.Context(), sc, experiment.Options{
		ResultsRoot: o.Out,
		Toxiproxy:   o.Toxiproxy,
		Parallel:    o.Parallel,
		Load:        o.Load,
		Shards:      o.Shards,
		Engine:      engine,
		Progress:    out,
		Live:        live,
		Command:     "bulkhead " + strings.Join(os.Args[1:], " "),
		Overrides:   recorded,
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
		if hint := behindHint(res); hint != "" {
			fmt.Fprintf(out, "  (%s)\n", hint)
		}
	}
	if o.NoReport {
		fmt.Fprintf(out, "raw results in %s (report with: bulkhead report %s)\n", res.Dir, res.Dir)
		if o.JSON {
			if jerr := printJSON(cmd.OutOrStdout(), map[string]any{"run_dir": res.Dir, "valid": res.Valid, "invalid": res.Invalid}); jerr != nil {
				return jerr
			}
		}
		if err == nil && !res.Valid {
			return withCode(ExitInvalid, fmt.Errorf("the run is invalid (exit %d)", ExitInvalid))
		}
		return err
	}
	sum, rerr := report.GenerateWith(res.Dir, report.Options{Outputs: append(output.Defaults(), tail(cmd, o.CI, o.JSON)...)})
	if rerr != nil {
		return errors.Join(err, fmt.Errorf("report %s: %w", res.Dir, rerr))
	}
	if err != nil {
		return err // interrupted: exit 130 whatever the claims say
	}
	return verdictError(sum)
}

// overridesOf collects the override flags that were set; scenarios.Scenario.Override applies
// and checks them.
func overridesOf(cmd *cobra.Command, o *runOptions) (scenarios.Overrides, error) {
	f := cmd.Flags()
	ov := scenarios.Overrides{Only: o.Only}
	if f.Changed("rate") {
		r, err := loadgen.ParseRate(o.Rate)
		if err != nil {
			return ov, fmt.Errorf("--rate: %w", err)
		}
		ov.Rate = r
	}
	if f.Changed("scale") {
		if !(o.Scale > 0) || math.IsInf(o.Scale, 1) { // NaN fails every comparison
			return ov, fmt.Errorf("--scale: must be a finite number > 0, got %g", o.Scale)
		}
		ov.Scale = o.Scale
	}
	if f.Changed("repetitions") {
		if o.Repetitions <= 0 {
			return ov, fmt.Errorf("--repetitions: must be > 0, got %d", o.Repetitions)
		}
		ov.Repetitions = o.Repetitions
	}
	if f.Changed("lag-limit") {
		if o.LagLimit <= 0 {
			return ov, fmt.Errorf("--lag-limit: must be > 0, got %s", o.LagLimit)
		}
		ov.LagLimit = o.LagLimit
	}
	return ov, nil
}

// flagError names the flag of an Override error ("only: ..." -> "--only: ..."); other errors
// (the scenario no longer validates) pass unchanged.
func flagError(err error) error {
	msg := err.Error()
	for _, f := range []string{"rate", "scale", "only", "repetitions", "lag_limit"} {
		if strings.HasPrefix(msg, f+": ") {
			return errors.New("--" + strings.ReplaceAll(f, "_", "-") + strings.TrimPrefix(msg, f))
		}
	}
	return err
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// behindHint names the cause the manifests show for a load generator that fell behind its
// schedule: the hypervisor's steal time when it was notable, the configuration runs sharing the
// CPU when several ran at once, else the machine itself. It says nothing when no load generator
// fell behind (an interrupted run is invalid for being cut short, not for the CPU).
func behindHint(res *experiment.Result) string {
	if len(res.Behind) == 0 {
		return ""
	}
	which := fmt.Sprintf("the load generator of %s fell behind its schedule", strings.Join(res.Behind, ", "))
	switch {
	case res.Steal >= loadgen.NotableSteal:
		return fmt.Sprintf("%s while the hypervisor took up to %.1f%% of a CPU: the machine was starved; run again on a quieter one", which, 100*res.Steal)
	case res.Parallel > 1:
		where := "this process's CPU"
		if res.Load == experiment.LoadProcess {
			where = "this machine's CPU"
		}
		return fmt.Sprintf("%s while %d configuration runs shared %s; --parallel 1 runs them one at a time", which, res.Parallel, where)
	}
	return which + " with one configuration run at a time: the machine was too busy or too slow for this rate; try a lower --rate"
}
