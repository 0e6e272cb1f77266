package output

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/verdict"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Run is one run folder in a comparison: its Summary and the claims it was judged on.
type Run struct {
	S      *model.Summary
	Claims []claim.Claim
}

// WriteComparison writes compare.md laying runs side by side, the first the one the others are
// compared with, and the comparison plots under dir/plots: each run's verdicts; claim by claim,
// each run's verdict and figure and the change of the figure from the first run with its 95%
// interval; the headline's figures the same way; and, per fault phase, the unaffected endpoint's
// latency and success over the phase's time with one line per run (the median over its
// repetitions, dotted its range). Every interval comes from the verdict engine (verdict.Delta),
// the runs resampled independently. It blocks until every file is written; on error some may be
// written.
func WriteComparison(dir string, runs []Run) error {
	jobs := compareJobs(runs)
	if err := drawAll(filepath.Join(dir, rundir.PlotsDir), jobs); err != nil {
		return err
	}
	return rundir.WriteFile(filepath.Join(dir, "compare.md"), []byte(compareMarkdown(runs, jobs)))
}

// runLabel names run i in tables and legends: "run 1", "run 2" (the table of runs gives their IDs).
func runLabel(i int) string { return fmt.Sprintf("run %d", i+1) }

// estimators returns an independent estimator per run.
func estimators(runs []Run) []*verdict.Estimator {
	out := make([]*verdict.Estimator, len(runs))
	for i, r := range runs {
		out[i] = verdict.NewRunEstimator(r.S, fmt.Sprintf("%d\x00%s", i, r.S.RunID))
	}
	return out
}

// compareMarkdown renders compare.md for runs.
func compareMarkdown(runs []Run, jobs []Plot) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("# Comparison of %d runs\n\n", len(runs))
	w("| | run | scenario | valid | outcome | claims | send lag p99 (ms) |\n|---|---|---|---|---|---|---|\n")
	for i, r := range runs {
		s := r.S
		w("| %s | %s | %s | %t | %s | %s | %s |\n", runLabel(i), s.RunID, s.Scenario, s.Valid, s.Verdict.Outcome, countsText(s.Verdict.Counts), ms2(worstLag(s)))
	}
	w("\n")
	if m := machineMoments(runs); m != "" {
		w("%s\n\n", m)
	}
	if len(runs) > 1 {
		est := estimators(runs)
		w("Every change is a later run's figure minus run 1's, with its 95%% interval from the verdict engine (the runs resampled independently): a change whose interval excludes 0 is one the runs' own variation does not explain.\n\n")
		claimDeltas(&b, runs, est)
		headlineDeltas(&b, runs, est)
	}
	w("## Unaffected endpoint per configuration and phase\n\n")
	w("| run | configuration | phase | endpoint | success | p99 (ms) | ok/s |\n|---|---|---|---|---|---|---|\n")
	for i, r := range runs {
		s := r.S
		for _, c := range s.Configurations {
			eps := s.Roles.Unaffected
			if len(eps) == 0 {
				eps = c.EndpointPaths()
			}
			for _, ph := range c.Phases {
				for _, ep := range eps {
					if st := ph.Endpoints[ep]; st != nil {
						w("| %s | %s | %s | %s | %s | %s | %s |\n", runLabel(i), c.Name, ph.Name, ep, rate1(st), f1(st.P99MS), f1(st.ThroughputRPS))
					}
				}
			}
		}
	}
	w("\n")
	if len(jobs) > 0 {
		w("## Plots\n\n")
	}
	for _, j := range jobs {
		b.WriteString(j.ref())
	}
	return b.String()
}

// claimDeltas writes the claims table: per claim of run 1, each run's verdict and figure, and
// the change of the claim's figure (its left side) from run 1.
func claimDeltas(b *strings.Builder, runs []Run, est []*verdict.Estimator) {
	if len(runs[0].Claims) == 0 {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## Claims, run by run\n\n")
	w("| claim | rule |")
	for i := range runs {
		w(" %s |", runLabel(i))
	}
	for i := 1; i < len(runs); i++ {
		w(" change, %s − run 1 |", runLabel(i))
	}
	w("\n|---|---|%s\n", strings.Repeat("---|", 2*len(runs)-1))
	for _, c := range runs[0].Claims {
		var rule string
		cells := make([]string, len(runs))
		for i, r := range runs {
			cells[i] = "–"
			for _, jc := range r.S.Verdict.Claims {
				if jc.ID == c.ID {
					cells[i] = fmt.Sprintf("%s %s", jc.Verdict, jc.Left)
					if rule == "" {
						rule = jc.Rule
					}
				}
			}
		}
		w("| %s | %s | %s |", c.ID, mdCell(rule), strings.Join(cells, " | "))
		for i := 1; i < len(runs); i++ {
			d, why := verdict.Delta(est[i], est[0], c.Measure)
			w(" %s |", deltaCell(d, why))
		}
		w("\n")
	}
	w("\nA cell is the claim's verdict and its measured figure (its left side) in that run; the change is of that figure.\n\n")
}

// headlineDeltas writes the headline's figures run by run with their changes from run 1.
func headlineDeltas(b *strings.Builder, runs []Run, est []*verdict.Estimator) {
	if len(runs[0].S.Headline) == 0 {
		return
	}
	w := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	w("## The headline, run by run\n\n")
	w("| phase (fault) | endpoint | layout | figure |")
	for i := range runs {
		w(" %s |", runLabel(i))
	}
	for i := 1; i < len(runs); i++ {
		w(" change, %s − run 1 |", runLabel(i))
	}
	w("\n|---|---|---|---|%s\n", strings.Repeat("---|", 2*len(runs)-1))
	for _, h := range runs[0].S.Headline {
		for _, l := range h.Layouts {
			for _, f := range []struct{ metric, name string }{{"success_rate", "success rate"}, {"success_p99_ms", "p99 of successes (ms)"}} {
				m := claim.Measure{Metric: f.metric, Configuration: l.Configuration, Phase: h.Phase, Endpoint: h.Endpoint}
				w("| %s (%s) | %s | %s | %s |", h.Phase, h.Fault, h.Endpoint, l.Configuration, f.name)
				for i := range runs {
					iv, why := est[i].Estimate(m)
					w(" %s |", deltaCell(iv, why))
				}
				for i := 1; i < len(runs); i++ {
					d, why := verdict.Delta(est[i], est[0], m)
					w(" %s |", deltaCell(d, why))
				}
				w("\n")
			}
		}
	}
	w("\n")
}

// deltaCell writes a figure with its interval, or why it could not be measured.
func deltaCell(iv *model.Interval, why string) string {
	if iv == nil {
		return "not measurable: " + mdCell(why)
	}
	return iv.String()
}

// compareJobs draws, per fault phase of run 1, the unaffected endpoint's p99 of successes and
// success rate over the phase's time (seconds from its start), one panel per layout and one line
// per run: the median over the run's repetitions, dotted the smallest and largest.
func compareJobs(runs []Run) []Plot {
	if len(runs) == 0 || len(runs[0].S.Configurations) == 0 {
		return nil
	}
	first := runs[0].S
	var jobs []Plot
	for _, ph := range first.Configurations[0].Phases {
		if len(ph.Faults) == 0 {
			continue
		}
		for _, ep := range headlineEndpoints(first, ph.Name) {
			for _, f := range []struct {
				file, what, ylabel string
				logY               bool
				f                  func(model.Bucket) float64
			}{
				{"p99", "p99 latency of successes", "p99 of successes (ms)", true, func(b model.Bucket) float64 { return orNaN(b.Successes, b.SuccessP99MS) }},
				{"success", "success rate", "success rate", false, func(b model.Bucket) float64 { return b.SuccessRate }},
			} {
				var specs []chart.Spec
				for _, layout := range model.GroupNames(first.Configurations) {
					spec := chart.Spec{Title: layout, YLabel: f.ylabel, XLabel: "time since the phase began (s)", LogY: f.logY}
					for i, r := range runs {
						reps := r.S.Repetitions(layout)
						if len(reps) == 0 || reps[0].Phase(ph.Name) == nil {
							continue
						}
						shifted := phaseOnly(reps, ph.Name, ep)
						for _, sr := range repSeries(runLabel(i), shifted, ep, r.S.BucketS, f.f) {
							sr.Color = chart.Palette[(i+1)%len(chart.Palette)]
							spec.Series = append(spec.Series, sr)
						}
					}
					specs = append(specs, spec)
				}
				fault := ""
				for _, x := range ph.Faults {
					fault += " " + model.ShortFault(x)
				}
				jobs = append(jobs, Plot{File: fmt.Sprintf("compare-runs-%s-%s-%s", slug(ph.Name), slug(ep), f.file),
					Title: fmt.Sprintf("%s of %s in %s (%s), run by run", f.what, ep, ph.Name, strings.TrimSpace(fault)), Kind: chart.KindLines, Rows: [][]chart.Spec{specs},
					About: "One panel per layout, one line per run on the phase's own time: each the median of the run's repetitions per bucket, dotted their smallest and largest."})
			}
		}
	}
	return jobs
}

// headlineEndpoints are the endpoints s's headline shows for phase, the unaffected one by
// default.
func headlineEndpoints(s *model.Summary, phase string) []string {
	var eps []string
	for _, h := range s.Headline {
		if h.Phase == phase && !slices.Contains(eps, h.Endpoint) {
			eps = append(eps, h.Endpoint)
		}
	}
	return eps
}

// phaseOnly returns copies of reps whose time line of ep holds only phase's buckets, shifted to
// start at 0.
func phaseOnly(reps []*model.Configuration, phase, ep string) []*model.Configuration {
	out := make([]*model.Configuration, len(reps))
	for i, c := range reps {
		ph := c.Phase(phase)
		cc := &model.Configuration{Timeline: map[string][]model.Bucket{}}
		if ph != nil {
			for _, b := range c.Timeline[ep] {
				if b.TS >= ph.StartS-1e-9 && b.TS < ph.EndS-1e-9 {
					b.TS = math.Round((b.TS-ph.StartS)*1e6) / 1e6
					cc.Timeline[ep] = append(cc.Timeline[ep], b)
				}
			}
		}
		out[i] = cc
	}
	return out
}

// worstLag is the largest send-lag p99 (ms) of any endpoint of any configuration run of s: how
// busy the machine was at the run's worst moment, as the load generator saw it.
func worstLag(s *model.Summary) float64 {
	worst := 0.0
	for i := range s.Configurations {
		worst = max(worst, s.Configurations[i].WorstLagP99MS())
	}
	return worst
}

// lagApart is how many times larger one run's worst send-lag p99 must be than another's, and
// lagNoticeMS how large it must be (about this kind of machine's own timer noise at p99), before
// compare.md says the runs met the machine at different moments.
const (
	lagApart    = 4.0
	lagNoticeMS = 1.0
)

// machineMoments says, when the runs' worst send-lag p99s are lagApart apart and the larger is
// over lagNoticeMS, that the machine was busier in one run than in another: a change of a
// millisecond-scale figure between them may be the machine's, beyond what the declared noise
// floor (two runs on a comparably loaded machine) covers. "" when the runs are alike.
func machineMoments(runs []Run) string {
	if len(runs) < 2 {
		return ""
	}
	lags := make([]float64, len(runs))
	for i, r := range runs {
		lags[i] = worstLag(r.S)
	}
	lo, hi := slices.Index(lags, slices.Min(lags)), slices.Index(lags, slices.Max(lags))
	l, h := lags[lo], lags[hi]
	if h <= lagNoticeMS || h < lagApart*l {
		return ""
	}
	return fmt.Sprintf("The machine was busier in %s than in %s: its load generator's send lag reached %s ms at p99 against %s ms. "+
		"The noise floor that widens these changes was measured between runs on a comparably loaded machine, so a change of a few "+
		"milliseconds between these two may be the machine's, not the system's: rerun them at quiet moments before reading one.",
		runLabel(hi), runLabel(lo), ms2(h), ms2(l))
}
