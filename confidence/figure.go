package confidence

import (
	"math"
)

// MinBlocks is the fewest blocks a repetition's scores may rest on: below it a figure's
// variance within the repetition counts as unknown (with one repetition its interval is open,
// and a claim on it is inconclusive). A variance read from 2-4 blocks is itself too uncertain to
// bound anything: simulated, resampling 1, 2 and 6 blocks covered the truth 16%, 61% and 90% of
// the time (TestWithinRunCoverage shows what these intervals reach from MinBlocks on).
const MinBlocks = 6

// Figure is one figure measured in one configuration, as the verdict engine hands it over:
// its value in each repetition and, per repetition, its block scores.
type Figure struct {
	// Group names the configuration. Figures of different groups ran apart from one another
	// and are independent; figures of one group share its repetitions.
	Group string
	// Reps holds the figure in each repetition.
	Reps []float64
	// Scores holds, per repetition, the figure's score in each block (Ratio, Sum, Quantile),
	// in time order; nil for a figure without them (see Point).
	Scores [][]float64
	// Series names the blocks the scores belong to (a phase): figures of one group, repetition
	// and series were measured in the same blocks, and their scores are summed block by block.
	Series string
	// Point marks a figure read once from a repetition's time line (an event time, a resource
	// figure): it has no scores, only a Resolution. With one repetition it cannot decide anything
	// finer than ±Resolution; across repetitions its quantisation adds Resolution²/12 to each.
	// A figure with neither scores nor Point has no variance within a repetition at all (a
	// maximum): only repetitions can bound it.
	Point      bool
	Resolution float64
	// Rate holds the counts behind a rate (over every repetition); nil for any other figure.
	Rate *Counts
	// LoOpen and HiOpen say the data cannot bound that side of the figure (a quantile with too
	// few requests above it has no upper end).
	LoOpen, HiOpen bool
	// Floor is the standard deviation by which a lone repetition's value is taken to move from
	// run to run: the noise floor the scenario declared, or the spread other repetitions of the
	// same run measured. Read only with one repetition.
	Floor float64
	// FloorKnown says Floor is known even when it is 0 (repetitions that agreed exactly).
	FloorKnown bool
	// FloorMetric names the metric the floor was declared for. Figures of one group, series and
	// FloorMetric share one moment on the machine (one configuration's run, one phase, one
	// metric: /a's and /b's p99 in the same stall), so a run that moves one moves the others with
	// it: their floors are summed over the linearised expression, (Σ Coef·Floor)², as Across does
	// with a measured spread, not added as if independent. "" keeps the floor a figure's own.
	FloorMetric string
	// Across holds, for one repetition judged alone, the same figure in every repetition of the
	// whole run: their spread is the floor of the lone one, taken per configuration over the
	// linearised expression (so figures that move together across repetitions, as two of the
	// same time line do, keep their correlation). It takes the place of Floor.
	Across []float64
	// Shift is the standard deviation by which the whole run (every repetition of it at once)
	// may sit off another run of the same scenario: the repetitions of one run share its moment
	// on the machine, so their spread cannot show it. Set when two runs are compared (a declared
	// noise floor); it adds to the figure's variance whatever the number of repetitions.
	Shift float64
	// Grain is the smallest change of the figure the run's clock can tell, as a 95% half-width in
	// the figure's unit: for a latency, how late the run's own timers fired (its load generator's
	// send-lag p99). Every timer of a run, the fake dependencies' and the service's included, is
	// late by about as much, so a whole run's latencies can sit that far off another run's for
	// the machine's sake alone. Like Shift it adds to the variance whatever the number of
	// repetitions: two figures less than their grains apart are not told apart. 0 means none.
	Grain float64
}

// Counts are a rate's numerator and denominator over every repetition.
type Counts struct{ X, N float64 }

// Value is the figure's value: the mean over its repetitions.
func (f *Figure) Value() float64 {
	s := 0.0
	for _, x := range f.Reps {
		s += x
	}
	return s / float64(len(f.Reps))
}

// Term is a figure with its coefficient in a linearised expression: the expression's
// derivative with respect to the figure at the figures' values.
type Term struct {
	Coef float64
	*Figure
}

// Combine returns the 95% interval of value, an expression of the terms' figures (and of
// constants) whose linearisation at their values is Σ Coef x figure. Terms are grouped by
// configuration into Parts (one per group: the terms' repetition values summed, and each
// repetition's within variance from the terms' scores summed block by block), and Linear takes
// the widest source. A lone rate (one term, a rate, coefficient > 0) goes through Proportion
// instead: a Wilson interval on its effective sample size.
//
// An open end of a figure opens the end of the expression it moves (an unbounded p99 with a
// positive coefficient opens the upper end).
func Combine(value float64, terms []Term) Estimate {
	var parts []Part
	groups := map[string]int{}
	var order []string
	loOpen, hiOpen, point := false, false, false
	// A declared floor's standard deviation per moment (group, series, metric), summed with
	// the terms' coefficients: figures of one moment move together from run to run.
	type moment struct{ group, series, metric string }
	floors := map[moment]float64{}
	var moments []moment
	for _, t := range terms {
		if t.Coef == 0 {
			continue
		}
		if (t.HiOpen && t.Coef > 0) || (t.LoOpen && t.Coef < 0) {
			hiOpen = true
		}
		if (t.LoOpen && t.Coef > 0) || (t.HiOpen && t.Coef < 0) {
			loOpen = true
		}
		point = point || (t.Point && len(t.Reps) == 1)
		i, ok := groups[t.Group]
		if !ok {
			i = len(parts)
			groups[t.Group] = i
			order = append(order, t.Group)
			parts = append(parts, Part{Reps: make([]float64, len(t.Reps))})
		}
		p := &parts[i]
		for r, v := range t.Reps {
			if r < len(p.Reps) {
				p.Reps[r] += t.Coef * v
			}
		}
		if t.Shift > 0 {
			p.Shift += t.Coef * t.Coef * t.Shift * t.Shift
		}
		if t.Grain > 0 {
			g := t.Coef * t.Grain / z975
			p.Shift += g * g
		}
		if len(t.Reps) == 1 && len(t.Across) < 2 && (t.Floor > 0 || t.FloorKnown) {
			p.FloorKnown = true
			if t.FloorMetric == "" {
				p.Floor += t.Coef * t.Coef * t.Floor * t.Floor
			} else {
				m := moment{t.Group, t.Series, t.FloorMetric}
				if _, ok := floors[m]; !ok {
					moments = append(moments, m)
				}
				floors[m] += t.Coef * t.Floor
			}
		}
	}
	for _, m := range moments {
		parts[groups[m.group]].Floor += floors[m] * floors[m]
	}
	// A lone repetition's floor from the whole run's repetitions, part by part.
	for i, g := range order {
		var across []float64
		ok := true
		for _, t := range terms {
			if t.Group != g || t.Coef == 0 {
				continue
			}
			if len(t.Reps) != 1 || len(t.Across) < 2 || (across != nil && len(t.Across) != len(across)) {
				ok = false
				break
			}
			if across == nil {
				across = make([]float64, len(t.Across))
			}
			for r, v := range t.Across {
				across[r] += t.Coef * v
			}
		}
		if ok && across != nil {
			parts[i].Floor += sampleVar(across)
			parts[i].FloorKnown = true
		}
	}
	for i, g := range order {
		parts[i].Within, parts[i].WithinDF = within(terms, g, len(parts[i].Reps))
	}
	// Each configuration's part gets its own interval (a lone rate its Wilson interval, which is
	// asymmetric near 0 and 1), and the parts' intervals are combined by the method of variance
	// estimates recovery (Zou and Donner 2008; Newcombe's hybrid score interval for a difference
	// of two rates is its best-known case): the lower end lies sqrt(Σ d_lo²) below the value,
	// d_lo each part's distance from its value to the end that lowers the sum.
	e := Estimate{Value: value, Basis: BasisNone, RunToRun: true, Point: point}
	dlo, dhi := 0.0, 0.0
	widest := -1.0
	// Every part is read with the degrees of freedom of the whole (Welch-Satterthwaite over the
	// parts), so that for symmetric parts the result is the Welch t interval of the sum.
	df := collect(parts).df
	for i, g := range order {
		pe := partEstimate(terms, g, parts[i], df)
		lo, hi := pe.Value-pe.Lo, pe.Hi-pe.Value
		dlo += lo * lo
		dhi += hi * hi
		e.RunToRun = e.RunToRun && pe.RunToRun
		if w := lo + hi; w > widest || math.IsNaN(w) {
			widest, e.Basis, e.DF = w, pe.Basis, pe.DF
		}
	}
	if len(order) == 0 {
		e.Lo, e.Hi, e.Basis = value, value, BasisNone
		return open(e, loOpen, hiOpen)
	}
	e.Lo, e.Hi = value-math.Sqrt(dlo), value+math.Sqrt(dhi)
	if math.IsNaN(e.Lo) {
		e.Lo = math.Inf(-1)
	}
	if math.IsNaN(e.Hi) {
		e.Hi = math.Inf(1)
	}
	return open(e, loOpen, hiOpen)
}

// partEstimate returns the interval of one configuration's part: a Wilson interval when the
// part is a single rate (scaled by its coefficient), else Linear over the part alone.
func partEstimate(terms []Term, g string, p Part, df float64) Estimate {
	var only []Term
	binomial := 0.0
	for _, t := range terms {
		if t.Group == g && t.Coef != 0 {
			only = append(only, t)
			if t.Rate != nil {
				binomial += t.Coef * t.Coef * Binomial(t.Rate.X, t.Rate.N)
			}
		}
	}
	value := 0.0
	for _, v := range p.Reps {
		value += v / float64(len(p.Reps))
	}
	if len(only) == 1 && only[0].Rate != nil {
		t := only[0]
		e := proportion(t.Value(), t.Rate.N, []Part{scale(p, 1/t.Coef)}, df)
		lo, hi := t.Coef*e.Lo, t.Coef*e.Hi
		e.Value, e.Lo, e.Hi = value, math.Min(lo, hi), math.Max(lo, hi)
		return e
	}
	return linear(value, []Part{p}, binomial, df)
}

// scale returns p with every value divided back to the figure's own scale (variances by f²).
func scale(p Part, f float64) Part {
	q := Part{Reps: make([]float64, len(p.Reps)), WithinDF: p.WithinDF, Floor: p.Floor * f * f, FloorKnown: p.FloorKnown, Shift: p.Shift * f * f}
	for i, v := range p.Reps {
		q.Reps[i] = v * f
	}
	if p.Within != nil {
		q.Within = make([]float64, len(p.Within))
		for i, v := range p.Within {
			q.Within[i] = v * f * f
		}
	}
	return q
}

func open(e Estimate, lo, hi bool) Estimate {
	if lo {
		e.Lo = math.Inf(-1)
	}
	if hi {
		e.Hi = math.Inf(1)
	}
	return e
}

// within returns, per repetition, the within-repetition variance of the sum of group g's terms,
// and its degrees of freedom (the fewest blocks - 1 among its series); NaN for a repetition
// where some term has no variance within it or rests on fewer than MinBlocks blocks.
func within(terms []Term, g string, reps int) ([]float64, float64) {
	out := make([]float64, reps)
	df := math.Inf(1)
	for r := range reps {
		series := map[string][]float64{}
		var names []string
		v := 0.0
		for _, t := range terms {
			if t.Group != g || t.Coef == 0 {
				continue
			}
			if t.Point {
				res := t.Coef * t.Resolution
				if reps == 1 {
					v += res * res / (z975 * z975) // ±Resolution, no finer
				} else {
					v += res * res / 12 // quantisation
				}
				continue
			}
			if r >= len(t.Scores) || t.Scores[r] == nil || len(t.Scores[r]) < MinBlocks {
				v = math.NaN()
				continue
			}
			s, ok := series[t.Series]
			if !ok {
				s = make([]float64, len(t.Scores[r]))
				names = append(names, t.Series)
			}
			for b := range min(len(s), len(t.Scores[r])) {
				s[b] += t.Coef * t.Scores[r][b]
			}
			series[t.Series] = s
		}
		for _, name := range names {
			s := series[name]
			nb := float64(len(s))
			ss := 0.0
			for _, x := range s {
				ss += x * x
			}
			v += nb / (nb - 1) * ss * Inflation(s)
			df = math.Min(df, nb-1)
		}
		out[r] = v
	}
	for _, v := range out {
		if math.IsNaN(v) {
			return out, math.NaN()
		}
	}
	return out, df
}
