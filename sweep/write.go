package sweep

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// PlotsDir holds the heatmaps inside a sweep folder.
const PlotsDir = "plots"

// Report re-reads dir/sweep.json and writes the sweep's report again (see Write), with the
// verdicts recomputed under the thresholds recorded there. It returns the sweep read.
func Report(dir string) (*Sweep, error) {
	var sw Sweep
	if err := rundir.ReadJSON(filepath.Join(dir, SweepFile), &sw); err != nil {
		return nil, fmt.Errorf("sweep report: %w", err)
	}
	return &sw, Write(dir, &sw)
}

// Write draws the heatmaps of sw into dir/plots and writes dir/sweep.md and dir/sweep.json,
// replacing earlier ones (each file atomically). It reads nothing but sw, so a sweep.json can be
// re-reported. It recomputes the verdicts first (Rejudge). It blocks until every file is written; on error some files may be written.
func Write(dir string, sw *Sweep) error {
	Rejudge(sw)
	var figs []figureRef
	for _, rate := range sw.Grid.Rates {
		for _, m := range metrics(sw.Roles) {
			name := fmt.Sprintf("%s-r%s", m.slug, rateLabel(rate))
			title := fmt.Sprintf("%s in the fault phase, %s/s per endpoint", m.title, rateLabel(rate))
			if err := chart.HeatmapPanels(filepath.Join(dir, PlotsDir, name), title, heatmaps(sw, rate, m)); err != nil {
				return fmt.Errorf("sweep plots: %w", err)
			}
			figs = append(figs, figureRef{rate: rate, title: title, file: filepath.Join(PlotsDir, name)})
		}
	}
	if err := rundir.WriteFile(filepath.Join(dir, ReportFile), []byte(markdown(sw, figs))); err != nil {
		return fmt.Errorf("write sweep report: %w", err)
	}
	return rundir.WriteJSON(filepath.Join(dir, SweepFile), sw)
}

type figureRef struct {
	rate        float64
	title, file string
}

// metric is one figure of merit drawn as shared | split | comparison.
type metric struct {
	slug, title, unit string
	value             func(*Figures) float64
	log, reverse      bool
	min, max          func(rate float64) (float64, float64)
	format            func(float64) string
	// cmp is the comparison panel: its title, unit, how it is computed, and whether it is a ratio
	// (log scale centred on 1) rather than a difference (centred on 0).
	cmpTitle, cmpUnit string
	cmp               func(shared, split float64) float64
	ratio, cmpReverse bool
	cmpFormat         func(float64) string
}

func metrics(r Roles) []metric {
	pct := func(v float64) string { return pctS(v / 100) }
	pts := func(v float64) string { return fmt.Sprintf("%+.1f", v) }
	return []metric{
		{
			slug: "unaffected-success", title: r.Unaffected + " success rate", unit: r.Unaffected + " success (%)",
			value:  func(f *Figures) float64 { return 100 * f.UnaffectedSuccessRate },
			min:    func(float64) (float64, float64) { return 0, 100 },
			format: pct,
			// Purple where split kept more of the unaffected endpoint's requests.
			cmpTitle: "split - shared", cmpUnit: "difference (points)",
			cmp:       func(sh, sp float64) float64 { return sp - sh },
			cmpFormat: pts,
		},
		{
			slug: "unaffected-p99", title: r.Unaffected + " p99 latency", unit: r.Unaffected + " p99 (ms)",
			value: func(f *Figures) float64 { return f.UnaffectedP99MS },
			// Dark where the latency is high: dark means bad in every figure.
			log: true, reverse: true,
			format:   msS,
			cmpTitle: "split / shared", cmpUnit: "ratio (log)",
			cmp:   func(sh, sp float64) float64 { return sp / sh },
			ratio: true, cmpReverse: true, // a ratio below 1 (split faster) is purple
			cmpFormat: func(v float64) string { return fmt.Sprintf("%.2g", v) },
		},
		{
			slug: "affected-throughput", title: r.Affected + " success throughput", unit: r.Affected + " successes/s",
			value:  func(f *Figures) float64 { return f.AffectedThroughputRPS },
			min:    func(rate float64) (float64, float64) { return 0, rate },
			format: func(v float64) string { return fmt.Sprintf("%.1f", v) },
			// Orange where split served fewer of the affected endpoint's requests: the cost.
			cmpTitle: "split - shared", cmpUnit: "difference (successes/s)",
			cmp:       func(sh, sp float64) float64 { return sp - sh },
			cmpFormat: func(v float64) string { return fmt.Sprintf("%+.1f", v) },
		},
	}
}

// heatmaps returns the three panels of one metric at one rate.
func heatmaps(sw *Sweep, rate float64, m metric) []chart.HeatmapSpec {
	g := sw.Grid
	var cols, rows []string
	for _, f := range g.Fractions {
		cols = append(cols, fracLabel(f)+"x")
	}
	for _, p := range g.Sizes {
		rows = append(rows, sizeLabel(sw, p))
	}
	grid := func(f func(cr *CellResult) float64) ([][]float64, [][]bool) {
		vals := make([][]float64, len(g.Sizes))
		marked := make([][]bool, len(g.Sizes))
		for i, p := range g.Sizes {
			vals[i] = make([]float64, len(g.Fractions))
			marked[i] = make([]bool, len(g.Fractions))
			for j, fr := range g.Fractions {
				vals[i][j] = math.NaN()
				cr := sw.find(Cell{Size: p, Fraction: fr, Rate: rate})
				if cr == nil || cr.RunDir == "" {
					continue
				}
				vals[i][j] = f(cr)
				marked[i][j] = !cr.Valid
			}
		}
		return vals, marked
	}
	of := func(pick func(*CellResult) *Figures) func(*CellResult) float64 {
		return func(cr *CellResult) float64 {
			if f := pick(cr); f != nil {
				return m.value(f)
			}
			return math.NaN()
		}
	}
	base := chart.HeatmapSpec{
		XLabel: sw.Roles.FaultDependency + "'s added delay (x timeout " + sw.Roles.Timeout.String() + ")", YLabel: "pool size P (split pools)",
		Columns: cols, Rows: rows, Unit: m.unit, Log: m.log, Reverse: m.reverse, Format: m.format,
		Scale: m.slug, MarkedLabel: "run invalid, not judged (see sweep.md)",
	}
	if m.min != nil {
		base.Min, base.Max = m.min(rate)
	}
	shared, split := base, base
	shared.Title, split.Title = "shared", "split"
	shared.Values, shared.Marked = grid(of(func(cr *CellResult) *Figures { return cr.Shared }))
	split.Values, split.Marked = grid(of(func(cr *CellResult) *Figures { return cr.Split }))
	cmp := chart.HeatmapSpec{
		Title: m.cmpTitle, XLabel: base.XLabel, YLabel: base.YLabel, Columns: cols, Rows: rows,
		Unit: m.cmpUnit, Scheme: chart.SchemeDiverging, Log: m.ratio, Reverse: m.cmpReverse,
		Format: m.cmpFormat, MarkedLabel: base.MarkedLabel,
	}
	cmp.Values, cmp.Marked = grid(func(cr *CellResult) float64 {
		if cr.Shared == nil || cr.Split == nil {
			return math.NaN()
		}
		return m.cmp(m.value(cr.Shared), m.value(cr.Split))
	})
	return []chart.HeatmapSpec{shared, split, cmp}
}

// sizeLabel writes P with the split pools it became: "10 (5+5)".
func sizeLabel(sw *Sweep, p int) string {
	for _, cr := range sw.Cells {
		if cr.Size == p && len(cr.SplitPools) > 0 {
			parts := make([]string, len(cr.SplitPools))
			for i, s := range cr.SplitPools {
				parts[i] = fmt.Sprint(s)
			}
			return fmt.Sprintf("%d (%s)", p, strings.Join(parts, "+"))
		}
	}
	return fmt.Sprint(p)
}

// markdown writes sweep.md.
func markdown(sw *Sweep, figs []figureRef) string {
	var b strings.Builder
	r := sw.Roles
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Sizing sweep: %s\n\n", sw.Scenario)
	if sw.Partial {
		w("**Partial: the sweep was interrupted; cells without a run folder did not run.**\n\n")
	}
	w("Sweep `%s` of the base scenario `%s`", sw.SweepID, sw.Base)
	if sw.Command != "" {
		w(", started with `%s`", sw.Command)
	}
	w(". It took %s of wall time for %d cells.\n\n", sw.Ended.Sub(sw.Started).Round(1e9), len(sw.Cells))
	w("Each cell re-runs the base scenario's configurations `%s` (one pool of P slots) and `%s` (its pools scaled by P/%d) on a time line of %gs baseline then %gs with %s delayed by the cell's fraction of the %v client timeout, every endpoint at the cell's rate (open model). ",
		r.Shared, r.Split, r.BaseSize, sw.PhaseDurationS, sw.PhaseDurationS, r.FaultDependency, r.Timeout)
	w("The figures are those of the fault phase: %s (calls %s) is the affected endpoint, %s the unaffected one. Latency quantiles are exact (nearest rank) over every request sent in the phase, successes and failures alike.\n\n",
		r.Affected, r.FaultDependency, r.Unaffected)
	sizes := make([]float64, len(sw.Grid.Sizes))
	for i, p := range sw.Grid.Sizes {
		sizes[i] = float64(p)
	}
	w("Grid: P in %s; fault delay in %s x timeout; rate in %s/s per endpoint. A cell's run is invalid when the load generator's send lag p99 exceeds %g ms (or its self-check fails otherwise).\n\n",
		joinFloats(sizes, rateLabel), joinFloats(sw.Grid.Fractions, fracLabel), joinFloats(sw.Grid.Rates, rateLabel), sw.LagLimitMS)
	w("## Thresholds\n\n")
	for _, l := range sw.Thresholds.Rules(r) {
		w("- %s\n", l)
	}
	w("\nHow to read the heatmaps: rows are P (with the split pools it became), columns the fault delay. Left and middle panels share one colour scale, on which **dark is bad** (a low success rate or throughput, a high latency; viridis, readable in greyscale and with colour blindness). The right panel compares them: **purple means split did better, orange that shared did**, white no difference. Hatched cells are invalid runs: their values are shown but not judged.\n\n")
	for _, f := range Findings(sw) {
		w("## %s/s per endpoint\n\n", rateLabel(f.Rate))
		for _, s := range f.Sentences {
			w("%s\n\n", s)
		}
		for _, fg := range figs {
			if fg.rate == f.Rate {
				w("![%s](%s.png)\n\n[SVG](%s.svg)\n\n", fg.title, fg.file, fg.file)
			}
		}
	}
	w("## Cells\n\n")
	w("| rate/s | P | split pools | delay | %s success shared | split | %s p99 ms shared | split | %s successes/s shared | split | verdict | run |\n",
		r.Unaffected, r.Unaffected, r.Affected)
	w("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, cr := range sw.Cells {
		pools := make([]string, len(cr.SplitPools))
		for i, s := range cr.SplitPools {
			pools[i] = fmt.Sprint(s)
		}
		fig := func(f *Figures, v func(*Figures) string) string {
			if f == nil {
				return "n/a"
			}
			return v(f)
		}
		verdict := cr.Verdict
		switch {
		case cr.RunDir == "":
			verdict = "not run"
		case !cr.Valid:
			verdict = "invalid: " + shortReason(cr.Invalid)
		}
		run := "-"
		if cr.RunDir != "" {
			run = fmt.Sprintf("[%s](%s/)", cr.RunDir, cr.RunDir)
		}
		succ := func(f *Figures) string { return pctS(f.UnaffectedSuccessRate) }
		p99 := func(f *Figures) string { return msS(f.UnaffectedP99MS) }
		thr := func(f *Figures) string { return fmt.Sprintf("%.1f", f.AffectedThroughputRPS) }
		w("| %s | %d | %s | %sx (%.0f ms) | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			rateLabel(cr.Rate), cr.Size, strings.Join(pools, "+"), fracLabel(cr.Fraction), cr.LatencyMS,
			fig(cr.Shared, succ), fig(cr.Split, succ), fig(cr.Shared, p99), fig(cr.Split, p99),
			fig(cr.Shared, thr), fig(cr.Split, thr), verdict, run)
	}
	w("\nEvery cell folder is an ordinary run folder: `bulkhead report <folder>` writes its full report (time series, exhausted resource, verdicts).\n\n")
	w("Regenerate this file and the heatmaps from sweep.json (nothing runs; the verdicts are recomputed):\n\n```\nbulkhead sweep --report <this folder>\n```\n")
	return b.String()
}

func joinFloats(xs []float64, label func(float64) string) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = label(x)
	}
	return strings.Join(parts, ", ")
}
