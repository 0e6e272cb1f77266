package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/experiment"
)

func newPlanCmd() *cobra.Command {
	o := &runOptions{}
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan <scenario.yaml | name>",
		Short: "Print what a run would do, resolved, without starting anything",
		Long: `Load a scenario, apply the same overrides bulkhead run takes (--rate, --scale, --only,
--repetitions, --lag-limit), plan every configuration run as bulkhead run does, and print the plan:
per configuration its pools and their slots in all, the system under test with its placeholders
filled as far as they are known before the start, the endpoints' rates, every phase with its
faults resolved and the requests each endpoint is sent in it, what the loader resolved (relative
amounts, pool shorthands), how many runs go at once with the machine estimate, and for each claim
whether the planned requests can bound its figures (a claim that cannot can only come out
inconclusive). Nothing is started and nothing is written.

With --json, stdout carries the plan as one JSON object instead.`,
		Example: `  bulkhead plan hypothesis
  bulkhead plan scenario.yaml --scale 0.2 --repetitions 1
  bulkhead plan hypothesis --only shared,split --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Scenario = args[0]
			sc, _, dropped, err := openScenario(cmd, o)
			if err != nil {
				return err
			}
			if _, err := experiment.ParseLoad(o.Load); err != nil {
				return usageError(fmt.Errorf("--load: %w", err))
			}
			plans, err := experiment.Plans(sc, 0)
			if err != nil {
				return usageError(err)
			}
			n, err := experiment.Parallel(sc, plans, o.Parallel, runtime.NumCPU(), o.Load)
			if err != nil {
				return usageError(err)
			}
			pv := experiment.NewPreview(sc, plans, n)
			if asJSON {
				return printJSON(cmd.OutOrStdout(), pv)
			}
			w := cmd.OutOrStdout()
			if len(dropped) > 0 {
				fmt.Fprintf(w, "--only: leaving out %s about configurations that will not run\n", count(len(dropped), "claim"))
			}
			printPlan(w, pv)
			est := sc.Estimate(n)
			fmt.Fprintf(w, "\nestimate: %s\n", est)
			if over := est.Exceeds(machine(experiment.DefaultResultsRoot)); len(over) > 0 {
				fmt.Fprintf(w, "  more than this machine has (bulkhead run refuses without --force): %s\n", strings.Join(over, "; "))
			}
			return nil
		},
	}
	addOverrideFlags(cmd, o)
	f := cmd.Flags()
	f.IntVar(&o.Parallel, "parallel", 0, "as bulkhead run --parallel: how many configuration runs go at once")
	f.StringVar(&o.Load, "load", defaultLoad, loadFlagUsage)
	f.BoolVar(&asJSON, "json", false, "print the plan as one JSON object on stdout")
	return cmd
}

// printPlan writes pv for a reader: the run, each configuration, the endpoints, the time line
// with the requests per endpoint, what was resolved, and the claims' feasibility.
func printPlan(out io.Writer, pv experiment.Preview) {
	fmt.Fprintf(out, "plan of %s (%s): %s x %s = %s, %d at once, time line %s each\n",
		pv.Scenario, pv.Path, count(len(pv.Configurations), "configuration"), count(pv.Repetitions, "repetition"),
		count(pv.Runs, "configuration run"), pv.Parallel, seconds(pv.TimelineS))

	fmt.Fprintf(out, "\nconfigurations (pools and their slots in all):\n")
	for _, c := range pv.Configurations {
		slots := "slots unknown (a pool without a size)"
		if c.Slots > 0 || len(c.Pools) == 0 {
			slots = count(c.Slots, "slot") + " in all"
		}
		fmt.Fprintf(out, "  %s: mode %s, %s, system under test: %s\n", c.Name, c.Mode, slots, describeTarget(c))
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		for _, p := range c.Pools {
			line := fmt.Sprintf("    pool %s\t%s\tsize %d\t", p.Name, p.Kind, p.Size)
			if p.Queue > 0 {
				line += fmt.Sprintf("queue %d", p.Queue)
			}
			line += "\t"
			if p.MaxWait > 0 {
				line += "max wait " + p.MaxWait.String()
			}
			line += "\tdependencies " + list(p.Dependencies)
			if len(p.Inbound) > 0 {
				line += ", inbound " + strings.Join(p.Inbound, " ")
			}
			fmt.Fprintln(tw, line)
		}
		tw.Flush()
		for _, k := range slices.SortedFunc(maps.Keys(c.Strings), naturalCompare) {
			fmt.Fprintf(out, "    %s: %s\n", k, c.Strings[k])
		}
		if len(c.Version) > 0 {
			fmt.Fprintf(out, "    version: the output of %q, recorded in the manifest\n", strings.Join(c.Version, " "))
		}
	}

	if len(pv.Phases) > 0 {
		paths := slices.Sorted(maps.Keys(pv.Phases[0].Requests))
		fmt.Fprintf(out, "\ntime line (every configuration; requests each endpoint is sent in the phase, at its rate):\n")
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  phase\tfrom\tto\t%s\tfaults (resolved)\n", strings.Join(paths, "\t"))
		total := map[string]uint64{}
		for _, ph := range pv.Phases {
			var cells []string
			for _, p := range paths {
				cells = append(cells, fmt.Sprintf("%d (%g/s)", ph.Requests[p], ph.Rates[p]))
				total[p] += ph.Requests[p]
			}
			faults := "none"
			if len(ph.Faults) > 0 {
				faults = strings.Join(ph.Faults, "; ")
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", ph.Name, seconds(ph.StartS), seconds(ph.EndS), strings.Join(cells, "\t"), faults)
		}
		var cells []string
		for _, p := range paths {
			cells = append(cells, fmt.Sprint(total[p]))
		}
		fmt.Fprintf(tw, "  all\t\t\t%s\t\n", strings.Join(cells, "\t"))
		tw.Flush()
	}

	if len(pv.Resolved) > 0 {
		fmt.Fprintf(out, "\nresolved by the loader:\n")
		for _, k := range slices.Sorted(maps.Keys(pv.Resolved)) {
			fmt.Fprintf(out, "  %s: %s\n", k, pv.Resolved[k])
		}
	}

	if len(pv.Claims) == 0 {
		fmt.Fprintf(out, "\nno claims: the report will show measurements only\n")
		return
	}
	feasible := 0
	for _, c := range pv.Claims {
		if c.Feasible {
			feasible++
		}
	}
	fmt.Fprintf(out, "\nclaims: %d of %d can be decided by the planned requests:\n", feasible, len(pv.Claims))
	for _, c := range pv.Claims {
		mark := "ok "
		if !c.Feasible {
			mark = "NO "
		}
		from := ""
		if c.Test != "" {
			from = " (test " + c.Test + ")"
		}
		fmt.Fprintf(out, "  %s %s%s: %s\n", mark, c.ID, from, c.Says)
		for _, why := range c.Infeasible {
			fmt.Fprintf(out, "        cannot bound %s\n", why)
		}
	}
}

// describeTarget names a configuration's system under test for the plan.
func describeTarget(c experiment.ConfigPreview) string {
	if c.Doc == "" {
		return "the built-in service"
	}
	return c.Target + " (" + c.Doc + ")"
}

func list(xs []string) string {
	if len(xs) == 0 {
		return "(none)"
	}
	return strings.Join(xs, ", ")
}

// seconds writes a time in seconds as a duration ("1m10s", "0s").
func seconds(s float64) string {
	return (time.Duration(s * float64(time.Second))).Round(time.Millisecond).String()
}

// naturalCompare orders keys as a person reads them: runs of digits by their value, so that
// command[6] comes before command[10]. Keys equal by value (a01, a1) fall back on their text.
func naturalCompare(a, b string) int {
	a0, b0 := a, b
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a0, b0)
}

// digits returns how many ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
