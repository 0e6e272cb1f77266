package confidence

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Wilson returns the Wilson score interval of a proportion p observed on n trials, at critical
// value c (1.96 for 95% on independent trials; Critical(df) when the variance behind n is
// itself estimated). Unlike p ± c·sqrt(p(1-p)/n) it never has zero width for n finite: at
// p = 1 its lower end is n/(n+c²), so 150 of 150 bound the failure rate only below 2.5%.
// n need not be an integer: an effective sample size (see Proportion) is the usual argument.
func Wilson(p, n, c float64) (lo, hi float64) {
	if !(n > 0) || math.IsInf(c, 1) {
		return 0, 1
	}
	c2 := c * c
	den := 1 + c2/n
	center := (p + c2/(2*n)) / den
	half := c / den * math.Sqrt(p*(1-p)/n+c2/(4*n*n))
	return math.Max(0, center-half), math.Min(1, center+half)
}

// ClopperPearson returns the exact (conservative) binomial interval of x successes in n
// independent trials: the proportions under which x or fewer (x or more) successes have
// probability 2.5% each. 300 of 300 gives [0.9878, 1].
func ClopperPearson(x, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	a := (1 - Level) / 2
	lo, hi = 0, 1
	if x > 0 {
		lo = distuv.Beta{Alpha: float64(x), Beta: float64(n - x + 1)}.Quantile(a)
	}
	if x < n {
		hi = distuv.Beta{Alpha: float64(x + 1), Beta: float64(n - x)}.Quantile(1 - a)
	}
	return lo, hi
}
