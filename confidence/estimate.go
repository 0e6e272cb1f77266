package confidence

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Part is the share of a figure that one configuration's runs contribute, linearised at the
// figure's value (for a - b, a's part is a and b's is -b; for a / b, a's is a/b̄ and b's is
// -ā·b/b̄²). The repetitions of one configuration ran on their own time lines, apart from every
// other configuration's, so parts are independent of one another; figures of the same
// configuration and repetition share one part (their correlation is kept).
type Part struct {
	// Reps holds the part's value in each repetition.
	Reps []float64
	// Within holds, per repetition, the part's variance within that repetition (see Within),
	// NaN where it is unknown; nil when the figure is not resampled within a repetition.
	Within []float64
	// WithinDF is the degrees of freedom behind each Within: the repetition's blocks - 1.
	WithinDF float64
	// Floor is the variance a lone repetition's value is taken to move by from run to run (a
	// noise floor the scenario declared): read only when len(Reps) == 1, where no spread
	// between repetitions can show it. 0 means none is known, unless FloorKnown.
	Floor float64
	// FloorKnown says Floor is known even when 0 (repetitions that measured no spread at all).
	FloorKnown bool
	// Shift is the variance by which the whole run may sit off another run (see Figure.Shift),
	// taken as known and added whatever the number of repetitions.
	Shift float64
}

// Basis names the variance that set an interval's width (the widest of the candidates).
type Basis string

// Bases of an interval.
const (
	// BasisRepetitions: the spread between repetitions, Student's t with R-1 (Welch-Satterthwaite
	// across configurations) degrees of freedom. It contains run-to-run variation.
	BasisRepetitions Basis = "repetitions"
	// BasisBlocks: resampling the 1 s blocks within repetitions. Within one run only.
	BasisBlocks Basis = "blocks"
	// BasisBinomial: the binomial variance of the requests counted (a rate's floor).
	BasisBinomial Basis = "binomial"
	// BasisNone: no variance is known; the interval is open.
	BasisNone Basis = "none"
)

// Estimate is a figure with its 95% interval [Lo, Hi] (±Inf for an open end), the variance
// source that set the width, its degrees of freedom, and whether the interval contains the
// variation between runs (RunToRun: every part had two or more repetitions or a declared floor).
type Estimate struct {
	Value    float64
	Lo, Hi   float64
	Basis    Basis
	DF       float64
	RunToRun bool
	// Point says a figure of one repetition that is not resampled (an event time, a resource
	// figure) is part of it: the interval is its resolution, not a sampling interval.
	Point bool
}

// sources holds the candidate variances of a figure and their degrees of freedom: the
// figure's whole variance (with its between-run part: repetitions or a declared floor), and
// the binomial floor of its rates.
type sources struct {
	v, df    float64 // NaN when some part has no variance at all
	runToRun bool
}

// collect sums the parts' variances (the parts are independent):
//
//   - A part with R >= 2 repetitions contributes max(s², c_R·W̃)/R with R-1 degrees of freedom:
//     s² the spread of its repetition values, which holds both the noise within each
//     repetition and the variation between them, W̃ the median of the repetitions' within
//     variances (the median: one repetition whose quantile sits at a cliff of its latency
//     distribution reads a huge density-based variance the others do not share). The spread is
//     taken below what within noise alone would give only once in forty: c_R is the 2.5%
//     quantile of χ²(R-1)/(R-1) (0.025 for three repetitions), so three repetitions that
//     happen to agree do not make an interval of nothing, and the t interval keeps its exact
//     coverage otherwise.
//   - A part with one repetition contributes its within variance W (the run's noise only) and,
//     when a noise floor is known (declared, or the spread of the whole run when a repetition is
//     judged alone), the floor's variance, taken as known; without one the figure's interval
//     does not contain the variation between runs (runToRun false).
//
// The degrees of freedom are Welch-Satterthwaite's over the parts: (Σv)²/Σ(v²/df).
func collect(parts []Part) sources {
	s := sources{runToRun: len(parts) > 0}
	num, den := 0.0, 0.0
	for _, p := range parts {
		R := len(p.Reps)
		w, wdf := math.NaN(), p.WithinDF
		if len(p.Within) == R && R > 0 {
			w = median(p.Within)
		}
		var v, df float64
		switch {
		case R >= 2:
			v, df = sampleVar(p.Reps), float64(R-1)
			if !math.IsNaN(w) {
				v = math.Max(v, chi2Low(df)*w)
			}
			v /= float64(R)
		case R == 1:
			v, df = w, wdf
			if p.Floor > 0 || p.FloorKnown {
				// The floor counts as known (a declared one, or the spread the whole run
				// measured, standing in for the run-to-run sd): only the within part adds to
				// the Welch-Satterthwaite denominator.
				if !math.IsNaN(w) && w > 0 && !math.IsInf(wdf, 1) {
					den += w * w / wdf
				}
				v, df = w+p.Floor, math.Inf(1)
			} else {
				s.runToRun = false
			}
		default:
			v = math.NaN()
		}
		if math.IsNaN(v) {
			return sources{v: math.NaN(), df: math.NaN(), runToRun: s.runToRun}
		}
		if p.Shift > 0 {
			// Known, so it adds to the variance and not to the Welch-Satterthwaite denominator.
			if v > 0 && !math.IsInf(df, 1) {
				den += v * v / df
			}
			num += v + p.Shift
			continue
		}
		num += v
		if v > 0 && !math.IsInf(df, 1) {
			den += v * v / df
		}
	}
	s.v, s.df = num, math.Inf(1)
	if den > 0 {
		s.df = num * num / den
	}
	return s
}

// chi2Low returns the 2.5% quantile of χ²(df)/df.
func chi2Low(df float64) float64 {
	return distuv.ChiSquared{K: df}.Quantile((1-Level)/2) / df
}

// Linear returns the interval of value, a figure whose linearised parts are parts, and whose
// rates contribute binomial (Σ g² p̃(1-p̃)/ñ over its rates, see Binomial; 0 without rates): value
// ± the widest of t(df_between)·√between, t(df_within)·√within and 1.96·√binomial. Taking the
// widest keeps the interval honest where one source cannot see the noise: three repetitions
// that happen to agree (their spread is one draw of it), a rate at 0 or 1 whose every resample
// is at 0 or 1 (only the binomial floor is not zero there).
//
// Without repetitions (and no floor) the between source is missing: the interval contains the
// noise within the run only, and Estimate.RunToRun says so. When some part has no variance at
// all (one repetition of fewer than MinBlocks blocks, a maximum) the interval is open: a binomial
// floor alone would take the requests as independent.
func Linear(value float64, parts []Part, binomial float64) Estimate {
	return linear(value, parts, binomial, math.NaN())
}

// linear is Linear with the degrees of freedom set to df when df is not NaN (a part of a larger
// combination is read with the combination's degrees of freedom, see Combine).
func linear(value float64, parts []Part, binomial, df float64) Estimate {
	s := collect(parts)
	if !math.IsNaN(df) && !math.IsNaN(s.v) {
		s.df = df
	}
	e := Estimate{Value: value, Basis: BasisNone, DF: math.NaN(), RunToRun: s.runToRun}
	h := math.NaN()
	if !math.IsNaN(s.v) {
		h, e.DF, e.Basis = Critical(s.df)*math.Sqrt(s.v), s.df, basisOf(s)
		if s.v == 0 {
			h = 0
		}
	}
	if binomial > 0 && !math.IsNaN(h) {
		if w := z975 * math.Sqrt(binomial); w > h {
			h, e.DF, e.Basis = w, math.Inf(1), BasisBinomial
		}
	}
	if math.IsNaN(h) {
		e.Lo, e.Hi = math.Inf(-1), math.Inf(1)
		return e
	}
	e.Lo, e.Hi = value-h, value+h
	return e
}

func basisOf(s sources) Basis {
	if s.runToRun {
		return BasisRepetitions
	}
	return BasisBlocks
}

// Binomial returns the binomial floor of a rate of x in n as Agresti and Caffo adjust it (two
// successes and two failures added, p̃ = (x+2)/(n+4)): p̃(1-p̃)/(n+4), never 0, so a rate at
// 0 or 1 still has a width. The caller scales it by the rate's coefficient squared.
func Binomial(x, n float64) float64 {
	p := (x + 2) / (n + 4)
	return p * (1 - p) / (n + 4)
}

// Proportion returns the interval of a rate p (the mean over repetitions of x/n) measured on
// n requests in all, with the parts of its per-repetition values: a Wilson score interval on
// an effective sample size. Each variance source gives an effective size, n_eff = p(1-p)/v,
// scaled by (1.96/t(df))² as Korn and Graubard do so that an estimated variance keeps its
// uncertainty; the smallest of them and of n itself (the binomial: the design effect is never
// taken below 1) decides. 150 of 150 gives [0.975, 1]; the interval never has zero width and
// never leaves [0, 1].
func Proportion(p, n float64, parts []Part) Estimate {
	return proportion(p, n, parts, math.NaN())
}

func proportion(p, n float64, parts []Part, df float64) Estimate {
	s := collect(parts)
	if !math.IsNaN(df) && !math.IsNaN(s.v) {
		s.df = df
	}
	e := Estimate{Value: p, Basis: BasisBinomial, DF: math.Inf(1), RunToRun: s.runToRun}
	if !(n > 0) {
		e.Lo, e.Hi, e.Basis = 0, 1, BasisNone
		return e
	}
	// Wilson depends on n and c only through k = c²/n: the widest source has the largest k.
	if math.IsNaN(s.v) {
		// Too few blocks to see how the requests cluster: a binomial interval would take them
		// as independent, which is what a few blocks cannot show.
		e.Lo, e.Hi, e.Basis, e.DF = 0, 1, BasisNone, math.NaN()
		return e
	}
	k := z975 * z975 / n
	if pq := p * (1 - p); pq > 0 && s.v > 0 {
		t := Critical(s.df)
		if kk := t * t * s.v / pq; kk > k {
			k, e.Basis, e.DF = kk, basisOf(s), s.df
		}
	}
	if math.IsInf(k, 1) {
		e.Lo, e.Hi = 0, 1
		return e
	}
	e.Lo, e.Hi = Wilson(p, 1/k, 1)
	return e
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func sampleVar(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m += x
	}
	m /= float64(len(xs))
	ss := 0.0
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return ss / float64(len(xs)-1)
}
