package confidence

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Level is the confidence level of every interval: 95%, two-sided (2.5% cut off on each side).
const Level = 0.95

// z975 is the 0.975 quantile of the standard normal: the critical value of a variance known
// without estimation error (a binomial's, a declared floor's).
const z975 = 1.959963984540054

// Critical returns the two-sided 95% critical value of Student's t with df degrees of freedom.
// df may be fractional (a Welch-Satterthwaite df is) and +Inf (the normal's 1.96). It returns
// +Inf for df <= 0 or NaN: a variance estimated from one value bounds nothing.
func Critical(df float64) float64 {
	switch {
	case math.IsNaN(df) || df <= 0:
		return math.Inf(1)
	case df > 1e7:
		return z975
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(1 - (1-Level)/2)
}
