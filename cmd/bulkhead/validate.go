package main

import (
	"errors"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

func newValidateCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "validate <scenario.yaml | name>...",
		Short: "Check scenario files without running them",
		Long: `Load and validate each scenario file (or built-in name). Every problem is reported with the
file, line and field; the exit status is non-zero (2) if any file has one.

With --json, stdout carries one JSON object instead: {"valid": ..., "scenarios": [...]}, one entry
per argument with its problems as {"file", "line", "field", "message"} objects (see docs/ci.md).`,
		Example: `  bulkhead validate scenarios/*.yaml
  bulkhead validate hypothesis
  bulkhead validate --json scenarios/*.yaml`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var errs []error
			out := validation{Valid: true, Scenarios: []validated{}}
			for _, a := range args {
				sc, err := scenarios.Open(a)
				if err != nil {
					errs = append(errs, err)
					out.Valid = false
					out.Scenarios = append(out.Scenarios, validated{Argument: a, Problems: problemsOf(err)})
					continue
				}
				out.Scenarios = append(out.Scenarios, validated{Argument: a, Valid: true, Name: sc.Name,
					Configurations: len(sc.Configurations), Phases: len(sc.Phases), DurationS: sc.Duration().Seconds()})
				out.Scenarios[len(out.Scenarios)-1].Infeasible = sc.Infeasible()
				if !asJSON {
					fmt.Fprintf(cmd.OutOrStdout(), "ok  %s: %s, %s, %s, %s\n",
						a, sc.Name, count(len(sc.Configurations), "configuration"), count(len(sc.Phases), "phase"), sc.Duration())
					printInfeasible(cmd.OutOrStdout(), sc)
				}
			}
			if asJSON {
				if err := printJSON(cmd.OutOrStdout(), out); err != nil {
					return err
				}
			}
			if len(errs) > 0 {
				return usageError(fmt.Errorf("%d of %s invalid:\n%w", len(errs), count(len(args), "scenario"), errors.Join(errs...)))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as one JSON object on stdout, problems included (the error lines still go to stderr)")
	return cmd
}

// printInfeasible writes, before anything runs, each figure of a claim the planned run cannot
// bound (scenarios.Feasibility): such a claim can only come out inconclusive. It writes nothing
// when every figure can be bounded.
func printInfeasible(w io.Writer, sc *scenarios.Scenario) {
	bad := sc.Infeasible()
	if len(bad) == 0 {
		return
	}
	fmt.Fprintf(w, "    %s of the claims cannot be bounded by the planned requests (those claims can only be inconclusive):\n", count(len(bad), "figure"))
	for _, f := range bad {
		fmt.Fprintf(w, "      %s\n", f)
	}
}

// validation is what validate --json prints.
type validation struct {
	Valid     bool        `json:"valid"`
	Scenarios []validated `json:"scenarios"`
}

// validated is one argument of validate: what it holds when valid, its problems when not.
type validated struct {
	Argument       string    `json:"argument"`
	Valid          bool      `json:"valid"`
	Name           string    `json:"name,omitempty"`
	Configurations int       `json:"configurations,omitempty"`
	Phases         int       `json:"phases,omitempty"`
	DurationS      float64   `json:"duration_s,omitempty"`
	Problems       []problem `json:"problems,omitempty"`
	// Infeasible lists the figures of the claims the planned requests cannot bound.
	Infeasible []scenarios.Feasibility `json:"infeasible,omitempty"`
}

// problem is one problem of a scenario: a scenarios.FieldError's parts, or, for an error that
// is not one (a file not found), its message alone.
type problem struct {
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// problemsOf lists the problems err joins.
func problemsOf(err error) []problem {
	var out []problem
	var walk func(error)
	walk = func(e error) {
		var fe *scenarios.FieldError
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, c := range j.Unwrap() {
				walk(c)
			}
			return
		}
		if errors.As(e, &fe) {
			out = append(out, problem{File: fe.File, Line: fe.Line, Field: fe.Field, Message: fe.Msg})
			return
		}
		out = append(out, problem{Message: e.Error()})
	}
	walk(err)
	return out
}

// listWidth is the width list refills descriptions to (after their indent).
const listWidth = 96

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the built-in scenarios",
		Long: `List the built-in scenarios: each one's name (what 'bulkhead run NAME' and 'bulkhead new --from
NAME' take), its time line, configurations, phases and repetitions, and its whole description.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, n := range scenarios.Names() {
				sc, err := scenarios.Open(n)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s  %s x %s, %s, time line %s\n", n, count(len(sc.Configurations), "configuration"),
					count(max(sc.Repetitions, 1), "repetition"), count(len(sc.Phases), "phase"), sc.Duration())
				if d := wrap(sc.Description, "    ", listWidth); d != "" {
					fmt.Fprintln(cmd.OutOrStdout(), d)
				}
			}
			return nil
		},
	}
}
