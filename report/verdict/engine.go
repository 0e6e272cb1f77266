package verdict

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/confidence"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// The verdict engine. Every figure a claim uses is measured in each repetition of its
// configuration (metrics.go: one point function and one spread function per metric of
// claim.Catalogue) and handed to package confidence, which gives its 95% interval:
//
//   - a figure's value is its mean over the repetitions;
//   - its interval reads the spread between repetitions with Student's t on R-1 degrees of
//     freedom (the spread holds the noise within each run and the variation between runs
//     alike), floored by the noise within the runs (block scores: requests of the same 1 s
//     block share a pool's state) and, for a rate, by its binomial variance;
//   - a comparison (minus:, over:, than:) is linearised at the figures' values and each
//     configuration's part keeps its own repetitions (Welch-Satterthwaite degrees of freedom):
//     both sides' variation between repetitions counts;
//   - a latency figure has a grain: how late the run's timers fired (its send-lag p99), which
//     adds to its variance whatever the number of repetitions (confidence.Figure.Grain);
//   - with one repetition there is no spread between runs to read: the interval holds the run's
//     own noise only, and a claim comparing configurations is held inconclusive unless a noise
//     floor stands in for the missing spread (one the scenario declared, or, when each
//     repetition is judged alone, the spread the whole run measured).
//
// There are no random draws: the same run folder always gives the same intervals.

// MethodText states the method in report.md and summary.json.
const MethodText = "95% intervals: a figure is measured in each repetition and averaged; its interval is Student's t " +
	"over the repetitions (R-1 degrees of freedom; Welch-Satterthwaite across configurations), so it contains the " +
	"variation between runs, floored by the noise within each run (1 s blocks as clusters, corrected for few blocks " +
	"and for correlation between consecutive seconds; fewer than 6 blocks give no within-run interval). Latency figures " +
	"are of successes; failures and rejections have their own (failure_*, rejected_*), and none is finer than the run's " +
	"timers: its interval is widened by the send-lag p99 the run's load generators measured, so two latencies closer " +
	"than how late the machine fired its timers are not told apart. A rate's interval is Wilson's on " +
	"its effective sample size (never zero-width: 150 of 150 bound the failure rate only below 2.5%); a quantile has no " +
	"upper end when fewer than enough effective requests lie above it (a p99 needs 368), and one held to a number is " +
	"then judged at the number (p99 <= 50 ms holds when the share of values <= 50 ms is at least 0.99 by its interval); " +
	"a comparison combines each " +
	"configuration's interval (MOVER). With one repetition the interval holds that run's noise only: a claim comparing " +
	"configurations then holds or fails only beyond a declared noise floor (figures of one configuration, phase and " +
	"metric share their moment, so their floors move together). Event times and resource figures are read " +
	"once per repetition and decide nothing finer than their resolution. A claim holds when the whole interval of " +
	"left - right satisfies it, does not hold when the whole interval violates it, and is inconclusive otherwise; it is " +
	"not measurable when a figure cannot be computed or a precondition does not hold."

// Figures is the run the engine judges: the configuration runs (with their per-phase
// statistics, the requests kept for the endpoints a claim measures, and their resource samples)
// and the width of the blocks a phase is cut into. *model.Summary is one; the engine judges
// each repetition alone through a view of one.
type Figures interface {
	// Repetitions returns the runs of configuration config, one per repetition, in order
	// (none when the run has no such configuration).
	Repetitions(config string) []*model.Configuration
	// BucketWidth is the width of the blocks a phase is cut into.
	BucketWidth() time.Duration
}

// engine evaluates measures on Figures, memoising figures and blocks.
type engine struct {
	f Figures
	// salt names the run in every figure's group ("" for a run's own claims), so that figures
	// of two runs compared with each other are independent (see Delta).
	salt string
	// parent is, for a view of one repetition, the engine of the whole run: the spread between
	// its repetitions is the noise floor of each lone one.
	parent *engine
	// floors are the noise floors the scenario declared, by metric.
	floors map[string]claim.Floor
	// shifts are the floors a run's figures are widened by when compared with another run's
	// (NewRunEstimator), by metric.
	shifts map[string]claim.Floor
	figs   map[string]figEntry
	blocks map[string][]blockStat
}

type figEntry struct {
	fig  *confidence.Figure
	why  string
	note string
}

func newEngine(f Figures) *engine {
	return &engine{f: f, figs: map[string]figEntry{}, blocks: map[string][]blockStat{}}
}

// measure evaluates m (with its minus: or over:) as a linear form, or returns why it cannot be
// measured.
func (e *engine) measure(m claim.Measure) (*form, string) {
	base, why := e.leaf(m.Base())
	if base == nil {
		return nil, why
	}
	o := m.Other()
	if o == nil {
		return base, ""
	}
	other, why := e.leaf(*o)
	if other == nil {
		return nil, why
	}
	if m.Over != nil {
		if other.value == 0 {
			return nil, fmt.Sprintf("%s is 0: no ratio", describeMeasure(*o))
		}
		return base.over(other), ""
	}
	return base.minus(other), ""
}

// leaf is the form of one figure.
func (e *engine) leaf(m claim.Measure) (*form, string) {
	f, why, note := e.figure(m)
	if f == nil {
		return nil, why
	}
	entry, _ := claim.MetricOf(m)
	l := leaf(f, m.Configuration, entry.Unit)
	if note != "" {
		l.notes = append(l.notes, note)
	}
	return l, ""
}

// figure measures m (without minus: or over:) in every repetition of its configuration.
func (e *engine) figure(m claim.Measure) (*confidence.Figure, string, string) {
	key, _ := json.Marshal(m)
	if c, ok := e.figs[string(key)]; ok {
		return c.fig, c.why, c.note
	}
	fig, why, note := e.compute(m)
	e.figs[string(key)] = figEntry{fig, why, note}
	return fig, why, note
}

func (e *engine) compute(m claim.Measure) (*confidence.Figure, string, string) {
	entry, ok := claim.MetricOf(m)
	if !ok {
		return nil, fmt.Sprintf("unknown metric %q", m.Metric), ""
	}
	impl, ok := implOf(entry)
	if !ok {
		return nil, fmt.Sprintf("metric %q is catalogued but not implemented", m.Metric), ""
	}
	return e.computeWith(m, impl, &entry, func(p *engine) *confidence.Figure { f, _, _ := p.figure(m); return f })
}

// shareAt returns the figure of the share of quantile metric m's values at or below bound
// (shareMetric) and m's quantile, or nil when m is no quantile; why says why it has no figure.
func (e *engine) shareAt(m claim.Measure, bound float64) (fig *confidence.Figure, q float64, why string) {
	entry, ok := claim.MetricOf(m)
	if !ok {
		return nil, 0, ""
	}
	impl, ok := implOf(entry)
	if !ok || impl.values == nil {
		return nil, 0, ""
	}
	key, _ := json.Marshal(m)
	k := fmt.Sprintf("share<=%v\x00%s", bound, key)
	if c, ok := e.figs[k]; ok {
		return c.fig, impl.q, c.why
	}
	fig, why, note := e.computeWith(m, shareMetric(impl.values, bound), nil, func(p *engine) *confidence.Figure { f, _, _ := p.shareAt(m, bound); return f })
	e.figs[k] = figEntry{fig, why, note}
	return fig, impl.q, why
}

// computeWith measures m through impl in every repetition of its configuration. entry (nil for
// a figure derived from m's, such as shareAt's) gives the noise floors declared for its metric;
// ofParent measures the same figure on the engine of the whole run (the spread between its
// repetitions stands in for a lone repetition's).
func (e *engine) computeWith(m claim.Measure, impl metricImpl, entry *claim.Metric, ofParent func(*engine) *confidence.Figure) (*confidence.Figure, string, string) {
	members := e.f.Repetitions(m.Configuration)
	if len(members) == 0 {
		return nil, fmt.Sprintf("no configuration %q in the run", m.Configuration), ""
	}
	fig := &confidence.Figure{Group: e.salt + "\x00" + m.Configuration, Series: m.Phase}
	var notes []string
	support, q := 0.0, 0.0
	for _, c := range members {
		ph := c.Phase(m.Phase)
		if ph == nil {
			return nil, fmt.Sprintf("no phase %q in %s", m.Phase, c.Name), ""
		}
		// An interrupted run is judged on the phases that ran to their end only.
		if c.InterruptedAtS != nil && (ph.CutShort || !ph.Reached) {
			how := "not reached"
			if ph.CutShort {
				how = "cut short"
			}
			return nil, fmt.Sprintf("phase %s of %s was %s: the run was interrupted at %.1f s", m.Phase, c.Name, how, *c.InterruptedAtS), ""
		}
		x := &repetitionOf{e: e, c: c, ph: ph}
		mc := m
		if m.Endpoint == claim.Others {
			if len(c.EndpointGroups) != 1 {
				return nil, fmt.Sprintf("%s: %s pooled no group of the endpoints the faults do not touch", describeMeasure(m), repName(c, len(members))), ""
			}
			mc.Endpoint = c.EndpointGroups[0].Name
		}
		v, why := impl.point(x, mc)
		if why != "" {
			return nil, fmt.Sprintf("%s: %s in %s", describeMeasure(m), why, repName(c, len(members))), ""
		}
		sp := impl.spread(x, mc, v)
		if entry != nil && entry.Unit == claim.UnitMS {
			// The grain of a latency: how late the run's timers fired. In the A/A run one at a
			// time, p99s and p90s of two identical configurations 0.1-0.27 ms apart held as
			// differences (2026-12-03) though only the moments the runs met set them apart.
			fig.Grain += c.WorstLagP99MS() / float64(len(members))
		}
		fig.Reps = append(fig.Reps, v)
		if sp.scores != nil {
			fig.Scores = append(fig.Scores, sp.scores)
		}
		fig.HiOpen = fig.HiOpen || sp.hiOpen
		support, q = support+sp.support, sp.quantile
		fig.Point = sp.point
		fig.Resolution = math.Max(fig.Resolution, sp.resolution)
		if sp.note != "" {
			notes = append(notes, sp.note)
		}
		if impl.counts != nil {
			xx, n := impl.counts(x, mc)
			if fig.Rate == nil {
				fig.Rate = &confidence.Counts{}
			}
			fig.Rate.X += xx
			fig.Rate.N += n
		}
	}
	if q > 0 && confidence.Open(q, support) {
		fig.HiOpen = true
	}
	if len(fig.Scores) != len(fig.Reps) {
		fig.Scores = nil
	}
	if entry != nil {
		if fl, ok := floorFor(e.shifts, *entry); ok {
			fig.Shift = fl.Of(fig.Value()) / 1.959963984540054
		}
	}
	if len(fig.Reps) == 1 {
		if e.parent != nil {
			if pf := ofParent(e.parent); pf != nil && len(pf.Reps) >= 2 {
				// The spread the whole run measured: it holds each repetition's own noise, so
				// the lone repetition's interval is read from it, and its ends are open only
				// where the whole run's are (a p99 too thin in one repetition to have an upper
				// end of its own has one from the spread of five).
				fig.Across = pf.Reps
				fig.HiOpen, fig.LoOpen = pf.HiOpen, pf.LoOpen
			}
		}
		if entry != nil && fig.Across == nil {
			if fl, ok := floorFor(e.floors, *entry); ok {
				fig.Floor, fig.FloorKnown = fl.Of(fig.Reps[0])/1.959963984540054, true // declared as a 95% half-width
				fig.FloorMetric = entry.Canonical()
			}
		}
	}
	note := ""
	if len(notes) > 0 {
		note = notes[0]
		if len(notes) > 1 {
			note = fmt.Sprintf("%s (and in %d more repetitions)", note, len(notes)-1)
		}
	}
	return fig, "", note
}

// floorFor returns the floor declared for a metric, by its name or the name it is an alias of.
func floorFor(floors map[string]claim.Floor, entry claim.Metric) (claim.Floor, bool) {
	if f, ok := floors[entry.Name]; ok {
		return f, true
	}
	f, ok := floors[entry.Canonical()]
	return f, ok
}

// repName names a configuration run in a reason: its name, and its repetition when there are
// several.
func repName(c *model.Configuration, reps int) string {
	if reps > 1 {
		return fmt.Sprintf("%s (repetition %d)", c.Name, c.Repetition)
	}
	return c.Name
}

// samplePeriod is the smallest gap between two samples of resource name in c (0 with fewer
// than two).
func samplePeriod(c *model.Configuration, name string) time.Duration {
	var p, last time.Duration = 0, -1
	for _, r := range c.Resources {
		if r.Resource != name {
			continue
		}
		if last >= 0 && r.T > last && (p == 0 || r.T-last < p) {
			p = r.T - last
		}
		last = r.T
	}
	return p
}

func variance(xs []float64) float64 {
	m := sum(xs) / float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}

// timeToLevel returns the seconds from the first fault of the phase to the end of the first
// block in which endpoint ep's error rate is at least half of levelOf's error rate over the
// phase. When ep never gets there within the phase it returns the seconds from the fault to the
// phase's end (the time it is known to be later than) and never = true: a claim that the level
// is reached within some time then does not hold. It returns why there is no level to reach.
func (x *repetitionOf) timeToLevel(ep, levelOf string) (v float64, never bool, why string) {
	lst := x.ph.Endpoints[levelOf]
	if lst == nil || lst.Requests == 0 {
		return 0, false, fmt.Sprintf("%s sent no requests", levelOf)
	}
	if lst.ErrorRate == 0 {
		return 0, false, fmt.Sprintf("%s did not fail, so there is no level to reach", levelOf)
	}
	if x.c.Requests == nil || x.c.Requests[ep] == nil {
		return 0, false, fmt.Sprintf("the requests of %s were not kept", ep)
	}
	w := x.e.f.BucketWidth()
	recs := model.Span(x.c.Requests[ep], int64(x.ph.FaultStart), int64(x.ph.End))
	for from := x.ph.FaultStart; from < x.ph.End; from += w {
		to := min(from+w, x.ph.End)
		n, fails := 0, 0
		for _, r := range model.Span(recs, int64(from), int64(to)) {
			n++
			if !x.c.Kinds[r.Key].Success {
				fails++
			}
		}
		if n > 0 && float64(fails)/float64(n) >= lst.ErrorRate/2 {
			return (to - x.ph.FaultStart).Seconds(), false, ""
		}
	}
	return (x.ph.End - x.ph.FaultStart).Seconds(), true, ""
}
