package output

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// markdown renders report.md. It depends only on the Summary and the plot list, so the same run
// always renders the same text; noFiles links the figures in report.html instead of plots/.
func markdown(s *model.Summary, jobs []Plot, noFiles bool) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# %s: run %s\n\n", s.Scenario, s.RunID)
	b.WriteString(answerMarkdown(s))
	w("## The question\n\n%s", question(s))

	w("## Settings\n\n")
	if len(s.Configurations) > 0 {
		c := &s.Configurations[0]
		w("Client timeout of every dependency call: %s ms, identical in every configuration. Time buckets for the plots: %g s, cut short at each phase boundary so that none straddles two phases.\n\n", f1(c.ClientTimeoutMS), s.BucketS)
		w("| endpoint | calls | rate (req/s) | arrivals | load generator timeout (ms) |\n|---|---|---|---|---|\n")
		member := c.Members()
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
		for _, cf := range model.FirstOfEachConfig(s.Configurations) {
			if len(cf.Pools) == 0 {
				w("| %s | %s | (none) | | | | | |\n", cf.Config, cf.Mode)
			}
			deps := cf.GroupDeps()
			for _, p := range cf.Pools {
				if !model.GroupPool(p, deps) {
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
		if line := slotsLine(model.FirstOfEachConfig(s.Configurations)); line != "" {
			w("%s\n\n", line)
		}
		for _, cf := range model.FirstOfEachConfig(s.Configurations) {
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
	w("A configuration's run is valid when the open-model load generator dropped no send and its send lag (actual minus scheduled send time) stayed at or under %s ms at p99.", model.Num(limit))
	if lt := loadText(s.Configurations); lt != "" {
		w(" %s", lt)
	}
	if st := stealText(s.Configurations); st != "" {
		w(" %s", st)
	}
	w("\n\n")
	if s.Partial {
		w("**Partial**: the run was interrupted (or killed); it is judged as far as it got: a claim on a phase that did not run to its end, or on a configuration it did not reach, is not measurable.\n\n")
		for _, r := range s.NotReached {
			w("- not reached: %s\n", r)
		}
		if len(s.NotReached) > 0 {
			w("\n")
		}
	}
	if s.Valid {
		w("Valid: the load generator kept to its schedule in every configuration.\n\n")
	} else {
		w("**Invalid**, so no verdicts are given:\n\n")
		for _, r := range s.Invalid {
			w("- %s\n", r)
		}
		w("\n")
	}
	b.WriteString(validityTable(s).markdown())
	w("\n")
	if model.Grouped(s.Configurations) {
		w("A group's row sums its members' sends and shows the largest send lag of any member.\n\n")
	}

	claimsMarkdown(s, &b)

	w("## What ran out\n\n")
	w("**How blame is decided.** %s\n\n", attribution.MethodText)
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

	b.WriteString(hubSection(s))    // many endpoints only (groups.go)
	b.WriteString(limitsSection(s)) // adaptive pools only (limits.go)

	w("## Numbers per phase\n\n")
	w("Exact quantiles (nearest rank, sorted), in ms, of the successes (a failure that returns at once is not fast service); a request belongs to the phase containing its send time. ")
	w("\"ok p99\" and \"fail p99\" are the p99 of successes and of failures (– when there were none); ok/s is successful throughput.\n\n")
	if len(s.Configurations) > 0 {
		for pi, ph := range s.Configurations[0].Phases {
			w("### %s (%g to %g s)\n\n", ph.Name, ph.StartS, ph.EndS)
			b.WriteString(phaseTable(s, pi).markdown())
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
				for _, ep := range slices.Sorted(maps.Keys(ph.Endpoints)) {
					f := ph.Endpoints[ep]
					w("| %s | %d | %s | %s | %s | %s | %s | %s |\n", a.Config, a.Repetitions, ph.Name, ep,
						spread(f["success_rate"], 3), spread(f["p50_ms"], 1), spread(f["p99_ms"], 1), spread(f["throughput"], 1))
				}
			}
		}
		w("\n")
	}

	if len(jobs) > 0 && !noFiles {
		w("## Plots\n\n")
		w("Each figure is a PNG; the SVG link under it is the same figure as vectors, with its fonts embedded.\n\n")
		for _, j := range jobs {
			b.WriteString(j.ref())
		}
	} else if len(jobs) > 0 {
		w("## Plots\n\n")
		w("The figures are inline in [report.html](report.html) (drawing them as files is most of a report's time: `bulkhead report --plots` also writes each as PNG and SVG under plots/):\n\n")
		for _, j := range jobs {
			w("- [%s](report.html#fig-%s)\n", j.Title, j.File)
		}
		w("\n")
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
func question(s *model.Summary) string {
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
func rolesText(r model.Roles) string {
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

// stealText says how much of a CPU's time the hypervisor took while the loads ran, from
// the manifests that record it ("" when none does): the highest share and its configuration run,
// since late sends and slow responses on a machine starved that way are the machine's.
func stealText(cs []model.Configuration) string {
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
func loadText(cs []model.Configuration) string {
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

// claimsMarkdown renders the Claims section of report.md, or nothing when the scenario makes no
// claims.
func claimsMarkdown(s *model.Summary, b *strings.Builder) {
	v := s.Verdict
	if len(v.Claims) == 0 && v.Note == "" {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Claims\n\n")
	if v.Note != "" {
		w("%s\n\n", v.Note)
	}
	if len(v.Claims) == 0 {
		return
	}
	w("The scenario's claims (its `claims:` block), judged on this run's numbers. Each figure is shown as value [95%% interval]; times in s from the phase start, latencies in ms, rates as shares.\n\n")
	w("**Method.** %s\n\n", v.Method)
	w("Outcome: **%s** (%s).\n\n", v.Outcome, countsText(v.Counts))
	w("| claim | says | verdict | left | right | left - right | reason |\n|---|---|---|---|---|---|---|\n")
	for _, c := range v.Claims {
		w("| %s | %s | %s | %s | %s | %s | %s |\n", c.ID, mdCell(c.Says), verdictMark(c.Verdict),
			c.Left.String(), c.Right.String(), c.Difference.String(), mdCell(c.Reason))
	}
	if len(v.Repetitions) > 1 {
		w("\n**Each repetition alone.** The same claims judged on one repetition at a time (each with its own arrival offsets: where a stream drifts, the offset it started from), floored by the spread the whole run measured, to show whether a verdict rests on one repetition:\n\n")
		w("| claim | all |")
		for _, r := range v.Repetitions {
			w(" r%d (%s) |", r.Repetition, mdCell(r.Offsets))
		}
		w("\n|---|---|%s\n", strings.Repeat("---|", len(v.Repetitions)))
		for _, c := range v.Claims {
			w("| %s | %s |", c.ID, c.Verdict)
			for _, r := range c.ByRepetition {
				w(" %s %s |", r.Says(), r.Difference.String())
			}
			w("\n")
		}
		var decided []string
		for _, c := range v.Claims {
			for _, r := range c.ByRepetition {
				if r.PreconditionReason != "" {
					decided = append(decided, fmt.Sprintf("- %s r%d: precondition %s: %s\n", c.ID, r.Repetition, r.Precondition, mdCell(r.PreconditionReason)))
				}
			}
		}
		if len(decided) > 0 {
			w("\nThe preconditions that made a claim not measurable in one repetition:\n\n%s", strings.Join(decided, ""))
		}
		if v.SameInEveryRepetition != nil && *v.SameInEveryRepetition {
			w("\nEvery claim has the same verdict in each repetition as in all of them.\n")
		} else {
			w("\nSome verdicts differ between repetitions: they depend on the arrival offsets, on too little data in one repetition, or on a busier machine in one (each configuration run's send lag is under Validity).\n")
		}
	}
	w("\nRules:\n\n")
	for _, c := range v.Claims {
		w("- **%s**: %s", c.ID, mdCell(c.Rule))
		for _, q := range c.Require {
			w("; requires %s (%s)", mdCell(q.Rule), q.Verdict)
		}
		w(".\n")
	}
	w("\n")
}

// hubSection is report.md's section for a grouped scenario (seed 003's partner hub): memory and
// goroutines per configuration next to the seed's figures, and the isolation of the pooled
// endpoints from the faulted ones. Empty for a scenario that was not grouped.
func hubSection(s *model.Summary) string {
	cfgs := model.FirstOfEachConfig(s.Configurations)
	if len(cfgs) == 0 || len(cfgs[0].EndpointGroups) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Many dependencies: memory, goroutines and isolation\n\n")
	w("Seed 003 sizes a hub of 500 partners with 20 slots each: as Java thread pools, 10,000 threads x ~1 MB of stack = ~10 GB; as semaphores, 10,000 permits ~ 80 KB. ")
	together := "service, embedded Toxiproxy, fake dependencies and load generator share one process"
	if cfgs[0].Load == "process" {
		together = "service, embedded Toxiproxy and fake dependencies share one process; the load generator ran in its own"
	}
	w("Here every figure is process-wide (%s), so a layout's own cost is the difference between configurations run the same way.\n\n", together)
	w("| configuration | pools | worker goroutines owned | semaphore permits | goroutines mean (max) | heap mean (max) | stacks mean (max) |\n|---|---|---|---|---|---|---|\n")
	var sem, wrk *model.Configuration
	for _, c := range cfgs {
		m := c.Memory
		if m == nil {
			w("| %s | %d | | | no memory series in this run | | |\n", c.Name, len(c.Pools))
			continue
		}
		w("| %s | %d | %d | %d | %.0f (%d) | %s (%s) | %s (%s) |\n", c.Name, len(c.Pools), m.WorkerPoolSlots, m.SemaphoreSlots,
			m.GoroutinesMean, m.GoroutinesMax, mb(m.HeapBytesMean), mb(float64(m.HeapBytesMax)), mb(m.StackBytesMean), mb(float64(m.StackBytesMax)))
		switch {
		case m.WorkerPools == 0 && sem == nil:
			sem = c
		case m.WorkerPools > 0 && wrk == nil:
			wrk = c
		}
	}
	w("\n")
	if sem != nil && wrk != nil {
		ms, mw := sem.Memory, wrk.Memory
		dg := mw.GoroutinesMean - ms.GoroutinesMean
		ds := mw.StackBytesMean - ms.StackBytesMean
		dh := mw.HeapBytesMean - ms.HeapBytesMean
		w("The worker pools' own cost (%s minus %s, means over the time line): %+.0f goroutines (the layout owns %d), %s of stacks (%.1f KB per extra goroutine), %s of heap. ",
			wrk.Name, sem.Name, dg, mw.WorkerPoolSlots, mb(ds), ds/max(dg, 1)/1024, mb(dh))
		w("Seed 003's thread-pool figure for the same %d workers at ~1 MB per thread: %.1f GB. ", mw.WorkerPoolSlots, float64(mw.WorkerPoolSlots)/1024)
		w("A Go goroutine starts with a 2 KB stack that grows only as deep as its calls go, and an idle worker blocks on a channel without a kernel thread, so the seed's argument against thread pools (memory and context switches) shrinks from gigabytes to megabytes; ")
		w("the semaphore variant still owns no goroutine at all (%d permits are %d bytes of counters in service/bench_test.go's measurement), and its calls run on the request's own goroutine.\n\n", ms.SemaphoreSlots, 4*ms.SemaphoreSlots)
	}
	w("Isolation: the pooled endpoints against the faulted ones, per phase (exact quantiles over the pooled successes).\n\n")
	w("| configuration | phase | endpoint | requests | success | p50 (ms) | p99 (ms) | max (ms) |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range cfgs {
		for _, ph := range c.Phases {
			for _, ep := range c.ViewPaths() {
				if st := ph.Endpoints[ep]; st != nil {
					w("| %s | %s | %s | %d | %.2f%% | %s | %s | %s |\n", c.Name, ph.Name, ep, st.Requests, 100*st.SuccessRate, f1(st.P50MS), f1(st.P99MS), f1(st.MaxMS))
				}
			}
		}
	}
	w("\n")
	return b.String()
}

// answerMarkdown is report.md's first section: the verdict, then the headline table (the
// unaffected endpoint's success rate and p99 of successes per fault phase and layout, with their
// 95% intervals). Empty for a run with neither claims nor a fault phase.
func answerMarkdown(s *model.Summary) string {
	v := s.Verdict
	if len(s.Headline) == 0 && len(v.Claims) == 0 && v.Note == "" {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## The answer\n\n")
	switch {
	case !s.Valid:
		w("**No verdict: the run is invalid** (see **Validity**).")
		if len(v.Claims) > 0 {
			w(" Its claims are listed with their numbers only.")
		}
		w("\n\n")
	case len(v.Claims) > 0 || v.Note != "":
		w("**Verdict: %s** (%s; each claim under **Claims**).\n\n", v.Outcome, countsText(v.Counts))
	}
	if len(s.Headline) > 0 {
		var eps []string
		for _, h := range s.Headline {
			if !slices.Contains(eps, h.Endpoint) {
				eps = append(eps, h.Endpoint)
			}
		}
		w("%s, the endpoint the faults should not touch, in each phase with a fault: success rate and p99 of the successes' latency per layout, each the mean over repetitions with its 95%% interval (the claims' method).\n\n", strings.Join(eps, ", "))
		w("| phase (fault) | endpoint | layout | success rate | p99 of successes (ms) | requests |\n|---|---|---|---|---|---|\n")
		for _, h := range s.Headline {
			label := fmt.Sprintf("%s (%s)", h.Phase, h.Fault)
			for i, l := range h.Layouts {
				if i > 0 {
					label = ""
				}
				p99 := msIv(l.SuccessP99MS)
				if l.SuccessP99MS != nil {
					p99 = strings.Replace(p99, " ms", "", 1)
				}
				if l.Why != "" {
					p99 += " (" + mdCell(l.Why) + ")"
				}
				w("| %s | %s | %s | %s | %s | %d |\n", label, h.Endpoint, l.Configuration, rateIv(l.SuccessRate), p99, l.Requests)
			}
		}
		w("\n")
	}
	return b.String()
}

// slotsLine states the slots each configuration's pools hold in all ("Slots in all: shared 10;
// split 10 (5 + 5)."), so that layouts compared at "P slots" are seen to hold the same; the
// parts are listed up to four pools. A pool of unknown size (a target's layout may leave it out)
// makes its configuration's total unknown. It returns "" when no configuration has a pool.
func slotsLine(confs []*model.Configuration) string {
	var parts []string
	for _, cf := range confs {
		if len(cf.Pools) == 0 {
			continue
		}
		total, sizes, known := 0, make([]string, len(cf.Pools)), true
		for i, p := range cf.Pools {
			total += p.Size
			sizes[i] = strconv.Itoa(p.Size)
			known = known && p.Size > 0
		}
		switch {
		case !known:
			parts = append(parts, cf.Config+" unknown (a pool of unknown size)")
		case len(cf.Pools) == 1 || len(cf.Pools) > 4:
			parts = append(parts, fmt.Sprintf("%s %d", cf.Config, total))
		default:
			parts = append(parts, fmt.Sprintf("%s %d (%s)", cf.Config, total, strings.Join(sizes, " + ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Slots in all: " + strings.Join(parts, "; ") + "."
}
