package report

import (
	"fmt"
	"strings"
)

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// f1n is f1 for a figure over n requests: "–" when there were none, rather than a 0.0 that reads
// as a measured latency.
func f1n(v float64, n int) string {
	if n == 0 {
		return "–"
	}
	return f1(v)
}

// rate1 writes a success rate with one decimal, never rounding a rate with failures up to
// 100.0% nor one with successes down to 0.0%; "–" for no requests.
func rate1(st *Stats) string {
	if st.Requests == 0 {
		return "–"
	}
	v := fmt.Sprintf("%.1f%%", 100*st.SuccessRate)
	switch {
	case st.Successes < st.Requests && v == "100.0%":
		return ">99.9%"
	case st.Successes > 0 && v == "0.0%":
		return "<0.1%"
	}
	return v
}

// markdown renders report.md. It depends only on the Summary and the plot list, so the same run
// always renders the same text.
func (s *Summary) markdown(jobs []plotJob) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# %s: run %s\n\n", s.Scenario, s.RunID)
	w("## The question\n\n%s", s.question())

	w("## Settings\n\n")
	if len(s.Configurations) > 0 {
		c := &s.Configurations[0]
		w("Client timeout of every dependency call: %s ms, identical in every configuration. Time buckets for the plots: %g s, cut short at each phase boundary so that none straddles two phases.\n\n", f1(c.ClientTimeoutMS), s.BucketS)
		w("| endpoint | calls | rate (req/s) | arrivals | load generator timeout (ms) |\n|---|---|---|---|---|\n")
		member := members(c)
		for _, e := range c.Endpoints {
			if member[e.Path] == "" {
				w("| %s | %s | %g | %s | %s |\n", e.Path, strings.Join(e.Calls, ", "), e.Rate, e.Arrivals, f1(e.TimeoutMS))
			}
		}
		for _, g := range c.EndpointGroups {
			w("| %s | %d dependencies, one each | %s | %s | %s |\n", g.Name, g.Dependencies, span2(g.RateMin, g.RateMax, "%g"),
				strings.Join(g.Arrivals, ", "), f1(g.TimeoutMS))
		}
		w("\n| configuration | mode | pool | kind | size | queue | max wait (ms) | dependencies |\n|---|---|---|---|---|---|---|---|\n")
		for _, cf := range firstOfEachConfig(s.Configurations) {
			if len(cf.Pools) == 0 {
				w("| %s | %s | (none) | | | | | |\n", cf.Config, cf.Mode)
			}
			deps := groupDeps(cf)
			for _, p := range cf.Pools {
				if !groupPool(p, deps) {
					w("| %s | %s | %s | %s | %d | %d | %s | %s |\n", cf.Config, cf.Mode, p.Name, p.Kind, p.Size, p.Queue, f1(p.MaxWaitMS), strings.Join(p.Dependencies, ", "))
				}
			}
			for _, g := range cf.EndpointGroups {
				if gp := g.Pools; gp.Count > 0 {
					w("| %s | %s | %d pools, one per dependency of %s | %s | %s | %s | %s | %d dependencies |\n", cf.Config, cf.Mode, gp.Count, g.Name,
						strings.Join(gp.Kinds, ", "), span2(float64(gp.SizeMin), float64(gp.SizeMax), "%.0f"),
						span2(float64(gp.QueueMin), float64(gp.QueueMax), "%.0f"), f1(gp.MaxWaitMS), g.Dependencies)
				}
			}
		}
		w("\n")
		for _, cf := range firstOfEachConfig(s.Configurations) {
			if cf.Target != "" {
				w("- %s: system under test %s; outcomes classed by %s.\n", cf.Config, cf.Target, cf.Outcomes)
			}
		}
		for _, cf := range s.Configurations {
			for _, p := range cf.TargetProblems {
				w("- %s: while it ran: %s\n", cf.Name, p)
			}
		}
		w("\n| phase | start (s) | end (s) | faults (resolved) |\n|---|---|---|---|\n")
		for _, ph := range c.Phases {
			var d []string
			for _, f := range ph.Faults {
				d = append(d, f.String())
			}
			if len(d) == 0 {
				d = []string{"none"}
			}
			w("| %s | %g | %g | %s |\n", ph.Name, ph.StartS, ph.EndS, strings.Join(d, "; "))
		}
		if rt := rolesText(s.Roles); rt != "" {
			w("\nRoles declared by the scenario (its `roles:` block): %s.\n\n", rt)
		} else {
			w("\n")
		}
	}

	w("## Validity\n\n")
	limit := 1.0
	for _, c := range s.Configurations {
		if c.LagLimitMS > 0 {
			limit = c.LagLimitMS
		}
	}
	w("A configuration's run is valid when the open-model load generator dropped no send and its send lag (actual minus scheduled send time) stayed at or under %s ms at p99.", num(limit))
	if lt := loadText(s.Configurations); lt != "" {
		w(" %s", lt)
	}
	if st := stealText(s.Configurations); st != "" {
		w(" %s", st)
	}
	w("\n\n")
	if s.Valid {
		w("Valid: the load generator kept to its schedule in every configuration.\n\n")
	} else {
		w("**Invalid**, so no verdicts are given:\n\n")
		for _, r := range s.Invalid {
			w("- %s\n", r)
		}
		w("\n")
	}
	w("| configuration | endpoint | scheduled | sent | dropped | lag p99 (ms) | lag max (ms) |\n|---|---|---|---|---|---|---|\n")
	for _, c := range s.Configurations {
		member := members(&c)
		for _, e := range c.Endpoints {
			if member[e.Path] == "" {
				w("| %s | %s | %d | %d | %d | %.2f | %.2f |\n", c.Name, e.Path, e.Scheduled, e.Sent, e.Dropped, e.LagP99MS, e.LagMaxMS)
			}
		}
		for _, g := range c.EndpointGroups {
			inv := ""
			if len(g.InvalidMembers) > 0 {
				inv = fmt.Sprintf(", %d invalid", len(g.InvalidMembers))
			}
			w("| %s | %s%s | %d | %d | %d | %.2f (worst member: %s) | %.2f |\n", c.Name, g.Name, inv, g.Scheduled, g.Sent, g.Dropped, g.LagP99MS, g.LagWorst, g.LagMaxMS)
		}
	}
	w("\n")
	if grouped(s.Configurations) {
		w("A group's row sums its members' sends and shows the largest send lag of any member.\n\n")
	}

	s.claimsMarkdown(&b)

	w("## What ran out\n\n")
	for _, c := range s.Configurations {
		if c.Mode != c.Name {
			w("**%s** (%s)\n\n", c.Name, c.Mode)
		} else {
			w("**%s**\n\n", c.Name)
		}
		for _, ph := range c.Phases {
			w("- %s: %s.\n", ph.Name, ph.Sentence)
		}
		w("\n")
	}

	b.WriteString(s.hubSection()) // many endpoints only (groups.go)

	w("## Numbers per phase\n\n")
	w("Exact quantiles (nearest rank over every request of the slice, sorted), in ms; a request belongs to the phase containing its send time. ")
	w("\"ok p99\" and \"fail p99\" are the p99 of successes and of failures (– when there were none); ok/s is successful throughput.\n\n")
	if len(s.Configurations) > 0 {
		for pi, ph := range s.Configurations[0].Phases {
			w("### %s (%g to %g s)\n\n", ph.Name, ph.StartS, ph.EndS)
			w("| configuration | endpoint | requests | success | p50 | p90 | p99 | p99.9 | max | ok p99 | fail p99 | timeout | rejected | upstream | connection | other | ok/s |\n")
			w("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
			for _, c := range s.Configurations {
				if pi >= len(c.Phases) {
					continue
				}
				if ph := c.Phases[pi]; !ph.Reached {
					w("| %s | %s |\n", c.Name, ph.Sentence)
					continue
				}
				for _, ep := range endpointPaths(&c) {
					st := c.Phases[pi].Endpoints[ep]
					if st == nil {
						continue
					}
					w("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %d | %d | %d | %s |\n",
						c.Name, ep, st.Requests, rate1(st), f1n(st.P50MS, st.Requests), f1n(st.P90MS, st.Requests), f1n(st.P99MS, st.Requests),
						f1n(st.P999MS, st.Requests), f1n(st.MaxMS, st.Requests),
						f1n(st.Success.P99MS, st.Success.Count), f1n(st.Failure.P99MS, st.Failure.Count), st.Errors.Timeout, st.Errors.Rejected, st.Errors.Upstream,
						st.Errors.Connection, st.Errors.Other, f1(st.ThroughputRPS))
				}
			}
			w("\n")
		}
	}
	reps := false
	for _, a := range s.Aggregates {
		reps = reps || a.Repetitions > 1
	}
	if reps {
		w("### Across repetitions\n\n")
		w("Each cell: mean ± 95%% CI (t distribution), then the spread over the repetitions as min / median / max. ")
		w("Repetitions differ in what the runner varies between them (the seed, the constant-rate streams' relative offsets), so the spread shows how much a figure depends on that choice.\n\n")
		w("| configuration | repetitions | phase | endpoint | success rate | p50 (ms) | p99 (ms) | ok/s |\n|---|---|---|---|---|---|---|---|\n")
		for _, a := range s.Aggregates {
			for _, ph := range a.Phases {
				for _, ep := range sortedKeys(ph.Endpoints) {
					f := ph.Endpoints[ep]
					w("| %s | %d | %s | %s | %s | %s | %s | %s |\n", a.Config, a.Repetitions, ph.Name, ep,
						spread(f["success_rate"], 3), spread(f["p50_ms"], 1), spread(f["p99_ms"], 1), spread(f["throughput_rps"], 1))
				}
			}
		}
		w("\n")
	}

	if len(jobs) > 0 {
		w("## Plots\n\n")
		w("Each figure is a PNG; the SVG link under it is the same figure as vectors, with its fonts embedded.\n\n")
		for _, j := range jobs {
			b.WriteString(j.ref())
		}
	}

	w("## Reproduce\n\n")
	cmd := s.Command
	if cmd == "" {
		cmd = "bulkhead run " + s.Scenario
	}
	w("Run again (a new run folder; the seed is recorded in each manifest):\n\n```\n%s\n```\n\n", cmd)
	w("Regenerate this report, summary.json and the plots from the raw files:\n\n```\nbulkhead report <this folder>\n```\n")
	return b.String()
}

// question is report.md's "The question" section: the scenario's description, then what the
// report answers: the scenario's claims, or the measurements only.
func (s *Summary) question() string {
	var b strings.Builder
	if d := strings.TrimSpace(s.Description); d != "" {
		b.WriteString(d + "\n\n")
	}
	if len(s.Verdict.Claims) == 0 {
		b.WriteString("The scenario states no claims: the report shows the measurements only.\n\n")
		return b.String()
	}
	b.WriteString("The scenario states its seed's claims as data; they are the question, each judged under **Claims** below:\n\n")
	for _, c := range s.Verdict.Claims {
		fmt.Fprintf(&b, "- **%s**: %s\n", c.ID, mdCell(c.Says))
	}
	b.WriteString("\n")
	return b.String()
}

// rolesText lists the declared roles, leaving out those not declared.
func rolesText(r Roles) string {
	var parts []string
	add := func(what, v string) {
		if v != "" {
			parts = append(parts, what+" "+v)
		}
	}
	add("shared configuration", r.Shared)
	add("split configuration", r.Split)
	add("fault dependency", r.FaultDependency)
	add("affected", strings.Join(r.Affected, ", "))
	add("unaffected", strings.Join(r.Unaffected, ", "))
	add("baseline phase", r.Baseline)
	add("latency phase", r.LatencyPhase)
	add("error phase", r.ErrorPhase)
	add("normal load", strings.Join(r.NormalLoad, ", "))
	return strings.Join(parts, "; ")
}

// members maps every grouped endpoint of c to its group's name.
func members(c *Configuration) map[string]string {
	m := map[string]string{}
	for _, g := range c.EndpointGroups {
		for _, p := range g.Members {
			m[p] = g.Name
		}
	}
	return m
}

// groupDeps returns the dependencies called by grouped endpoints of c (empty without groups).
func groupDeps(c *Configuration) map[string]bool {
	member := members(c)
	deps := map[string]bool{}
	for _, e := range c.Endpoints {
		if member[e.Path] != "" {
			for _, d := range e.Calls {
				deps[d] = true
			}
		}
	}
	return deps
}

func grouped(cfgs []Configuration) bool {
	for _, c := range cfgs {
		if len(c.EndpointGroups) > 0 {
			return true
		}
	}
	return false
}

// span2 writes a range "lo-hi", or one number when they are equal.
func span2(lo, hi float64, format string) string {
	if lo == hi {
		return fmt.Sprintf(format, lo)
	}
	return fmt.Sprintf(format+"–"+format, lo, hi)
}

func ci(f Figure, prec int) string {
	if f.CI95 == nil {
		return fmt.Sprintf("%.*f", prec, f.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, f.Mean, prec, *f.CI95)
}

// spread writes a figure across repetitions: "0.440 ± 0.020 (0.410 / 0.440 / 0.470)".
func spread(f Figure, prec int) string {
	return fmt.Sprintf("%s (%.*f / %.*f / %.*f)", ci(f, prec), prec, f.Min, prec, f.Median, prec, f.Max)
}

// compareMarkdown renders compare.md for several runs.
func compareMarkdown(sums []*Summary, jobs []plotJob) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Comparison of %d runs\n\n", len(sums))
	w("| run | scenario | valid | outcome | claims |\n|---|---|---|---|---|\n")
	for _, s := range sums {
		w("| %s | %s | %t | %s | %s |\n", s.RunID, s.Scenario, s.Valid, s.Verdict.Outcome, countsText(s.Verdict.Counts))
	}
	w("\n## Unaffected endpoint per configuration and phase\n\n")
	w("| run | configuration | phase | endpoint | success | p99 (ms) | ok/s |\n|---|---|---|---|---|---|---|\n")
	for _, s := range sums {
		for _, c := range s.Configurations {
			eps := s.Roles.Unaffected
			if len(eps) == 0 {
				eps = endpointPaths(&c)
			}
			for _, ph := range c.Phases {
				for _, ep := range eps {
					if st := ph.Endpoints[ep]; st != nil {
						w("| %s | %s | %s | %s | %s | %s | %s |\n", s.RunID, c.Name, ph.Name, ep, rate1(st), f1(st.P99MS), f1(st.ThroughputRPS))
					}
				}
			}
		}
	}
	w("\n")
	for _, j := range jobs {
		b.WriteString(j.ref())
	}
	return b.String()
}

// stealText says how much of a CPU's time the hypervisor took while the loads ran, from
// the manifests that record it ("" when none does): the highest share and its configuration run,
// since late sends and slow responses on a machine starved that way are the machine's.
func stealText(cs []Configuration) string {
	var lo, hi float64
	var worst string
	n := 0
	for _, c := range cs {
		if c.MachineSteal == nil {
			continue
		}
		s := *c.MachineSteal
		if n == 0 || s < lo {
			lo = s
		}
		if n == 0 || s > hi {
			hi, worst = s, c.Name
		}
		n++
	}
	switch {
	case n == 0:
		return ""
	case hi == 0:
		return "The hypervisor took no CPU time from the machine while the loads ran (steal time, each manifest's `load.machine_steal`)."
	case n == 1 || pct1(lo) == pct1(hi):
		return fmt.Sprintf("The hypervisor took at most %s of any one CPU's time while each load ran (steal time, each manifest's `load.machine_steal`).", pct1(hi))
	}
	return fmt.Sprintf("The hypervisor took between %s and %s of any one CPU's time while each load ran (steal time, each manifest's `load.machine_steal`; most in %s).",
		pct1(lo), pct1(hi), worst)
}

// loadText says where the load generators ran, from the manifests that record it ("" when none
// does: a folder from before, in-process).
func loadText(cs []Configuration) string {
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Load != "" {
			seen[c.Load] = true
		}
	}
	switch {
	case len(seen) == 0:
		return ""
	case len(seen) > 1:
		return "The load generator ran inside the runner's process for some configuration runs and in a child process for others (see each manifest's `load`)."
	case seen["process"]:
		return "Each configuration run's load generator ran in its own child process (`bulkhead attack`; its spec and logs are in the configuration's folder), apart from the service, Toxiproxy and the fake dependencies."
	}
	return "The load generator ran inside the runner's process, beside the service, Toxiproxy and the fake dependencies."
}
