package confidence

import (
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// A figure's variance within one repetition comes from its scores: the repetition is cut into
// consecutive blocks (1 s of requests: requests of the same second share the pool's state and
// are not independent), and each block's score is its contribution to the figure's estimation
// error, linearised at the figure's value (its influence). The variance is then
// nb/(nb-1) x Σ score² (the cluster-robust variance with nb clusters and its small-sample
// correction), widened by Inflation for the correlation between consecutive blocks. Scores of
// figures measured in the same blocks are summed block by block before squaring, which keeps
// their covariance (/a's and /b's error rates in the same seconds).
//
// This is the linearisation (Taylor) variance of survey statistics, with blocks as clusters;
// the few-clusters literature (Cameron, Gelbach and Miller 2008; Bell and McCaffrey 2002) adds
// the nb/(nb-1) factor and Student's t with nb-1 degrees of freedom, which Combine applies.

// Ratio returns the figure Σnum/Σden over the blocks (a success rate: successes over
// requests; a mean latency: summed latency over successes; a throughput: successes over
// seconds) and each block's score (num_b - v·den_b)/Σden. It returns NaN and nil when Σden is 0.
func Ratio(num, den []float64) (float64, []float64) {
	sn, sd := 0.0, 0.0
	for i := range num {
		sn += num[i]
		sd += den[i]
	}
	if sd == 0 {
		return math.NaN(), nil
	}
	v := sn / sd
	scores := make([]float64, len(num))
	for i := range num {
		scores[i] = (num[i] - v*den[i]) / sd
	}
	return v, scores
}

// Sum returns the figure Σc over the blocks (a count of requests, failures, timeouts) and each
// block's score c_b - Σc/nb.
func Sum(c []float64) (float64, []float64) {
	s := 0.0
	for _, x := range c {
		s += x
	}
	scores := make([]float64, len(c))
	for i, x := range c {
		scores[i] = x - s/float64(len(c))
	}
	return s, scores
}

// Quantile returns the nearest-rank q-quantile of the values of all blocks (each block's
// values sorted ascending), each block's score, and the effective number of values its upper end
// rests on (see Open).
//
// The scores are Woodruff's: the share of values at or below the quantile is a ratio whose
// block scores are known (Ratio), and the quantile's error is that share's error divided by
// the density there. The density is read off the empirical distribution over ± 1.96 standard
// errors of the share (Francisco and Fuller's estimate), but over no more than Hall and
// Sheather's bandwidth for n values: when seconds shift together the share's error grows with
// the design effect while the density at the quantile does not, and a window that wide would
// read the slope of the far tail instead (a p90 of 6-8 ms values read its density out to the
// phase's 20 ms outliers).
//
// The effective number is n over the design effect the blocks show (never above n): correlated
// blocks count for fewer requests. One case counts it as enough for an upper end whatever the
// design effect: n at least QuantileNeeds(q) and the linearised upper end at or below the
// largest value. Seconds whose values shift together (a narrow distribution moving by a
// fraction of a millisecond from second to second) swing the share below the quantile from
// block to block, which the design effect reads as a thin tail, though every block has values
// above the quantile and the data bound it (TestShiftingSecondsBoundAQuantile).
func Quantile(blocks [][]float64, q float64) (v float64, scores []float64, neff float64) {
	var all []float64
	for _, b := range blocks {
		all = append(all, b...)
	}
	n := len(all)
	if n == 0 {
		return math.NaN(), nil, 0
	}
	slices.Sort(all)
	at := func(p float64) float64 { // the nearest-rank p-quantile of all
		i := int(math.Ceil(p*float64(n))) - 1
		return all[max(0, min(i, n-1))]
	}
	v = at(q)
	below := make([]float64, len(blocks))
	count := make([]float64, len(blocks))
	for i, b := range blocks {
		j, _ := slices.BinarySearch(b, math.Nextafter(v, math.Inf(1)))
		below[i], count[i] = float64(j), float64(len(b))
	}
	f, z := Ratio(below, count)
	nb := float64(len(blocks))
	vp := 0.0
	for _, s := range z {
		vp += s * s
	}
	if nb > 1 {
		vp *= nb / (nb - 1) * Inflation(z)
	}
	// The design effect is never taken below 1: the share's variance is at least binomial.
	vp = math.Max(vp, q*(1-q)/float64(n))
	se := math.Sqrt(vp)
	neff = q * (1 - q) / vp
	w := math.Min(z975*se, hallSheather(n, q))
	lo, hi := math.Max(0, f-w), math.Min(1, f+w)
	slope := 0.0 // d value / d share
	if hi > lo {
		slope = (at(hi) - at(lo)) / (hi - lo)
	}
	scores = make([]float64, len(z))
	for i, s := range z {
		scores[i] = -s * slope // more values below: a lower quantile
	}
	if Open(q, neff) && float64(n) >= QuantileNeeds(q) && v+z975*se*slope <= all[n-1] {
		neff = tailNeeds(q)
	}
	return v, scores, neff
}

// tailNeeds is the fewest independent values with which a q-quantile has an upper end (Open).
func tailNeeds(q float64) float64 { return math.Ceil(math.Log((1-Level)/2) / math.Log(q)) }

// hallSheather returns Hall and Sheather's (1988) bandwidth, in share, for reading the density
// at a q-quantile of n values (the bandwidth of Koenker's quantile regression intervals).
func hallSheather(n int, q float64) float64 {
	x := distuv.UnitNormal.Quantile(q)
	phi := math.Exp(-x*x/2) / math.Sqrt(2*math.Pi)
	return math.Pow(float64(n), -1.0/3) * math.Pow(z975, 2.0/3) * math.Cbrt(1.5*phi*phi/(2*x*x+1))
}

// Open reports whether a q-quantile resting on neff effective requests (summed over the
// repetitions) has no upper end: the q-quantile of n independent requests lies above the
// largest of them with probability q^n, so below 2.5% only from ln(2.5%)/ln(q) requests on (a
// p99 needs 368).
func Open(q, neff float64) bool { return math.Pow(q, neff) > (1-Level)/2 }

// DesignMargin is how many requests, per effective one, a plan gives a quantile so that its
// upper end is bounded in practice. The effective number Quantile returns is n over a design
// effect estimated from a phase's one-second blocks, and for a tail as thin as a p99 (a handful of
// requests above it per phase) that estimate is noisy even when requests are independent: on
// independent requests in blocks of 50, a p99 of 500 requests came out open 44% of the time,
// 800 8%, 1,000 3.5% and 1,500 0.1% (TestQuantileNeedsMargin holds the last on seeded data).
const DesignMargin = 4

// QuantileNeeds returns the requests (summed over the repetitions) a q-quantile needs before its
// upper end is bounded in practice: the ln(2.5%)/ln(q) effective requests of Open (368 for a
// p99), times DesignMargin (1,472 for a p99). Fewer still bound it when the run's seconds look
// independent enough; the feasibility check warns below this.
func QuantileNeeds(q float64) float64 {
	return DesignMargin * tailNeeds(q)
}

// Inflation returns the factor by which serial correlation between consecutive blocks widens
// the variance of a figure over those blocks (scores in time order): (1+ρ)/(1-ρ), the long-run
// variance of a first-order autoregressive series over its variance, with ρ the scores' lag-1
// autocorrelation corrected for its small-sample bias (Kendall's -(1+3ρ)/n, which is large over
// a dozen blocks) and capped at 0.9; never below 1 (a negative correlation is not taken to
// narrow an interval). Requests of adjacent seconds share a pool's state (a queue that filled in
// one second drains in the next), which blocks taken as independent cannot see; a kernel
// estimate (Newey-West) with the two or three lags a dozen blocks allow caught too little of it
// in simulation (TestWithinRunCoverage).
func Inflation(scores []float64) float64 {
	n := len(scores)
	if n < 3 {
		return 1
	}
	mean := 0.0
	for _, s := range scores {
		mean += s
	}
	mean /= float64(n)
	g0, g1 := 0.0, 0.0
	for i := range n {
		d := scores[i] - mean
		g0 += d * d
		if i > 0 {
			g1 += d * (scores[i-1] - mean)
		}
	}
	if g0 == 0 {
		return 1
	}
	rho := g1 / g0
	rho = math.Min(0.9, rho+(1+3*rho)/float64(n))
	if rho <= 0 {
		return 1
	}
	return (1 + rho) / (1 - rho)
}
