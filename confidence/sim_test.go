package confidence

import (
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// A simulated configuration: R repetitions (runs) of B one-second blocks of M requests each.
// Every figure has three layers of variation, as a real run does: between repetitions (a run's
// machine moment: a shift drawn once per repetition), between consecutive blocks (a pool's state
// carried from one second to the next: an AR(1) series), and between requests.
type model struct {
	R, B, M int
	// Success: logit(p) = Logit + rep shift (sd Tau) + block shift (AR(1), sd Omega, lag-1
	// correlation Phi).
	Logit, Tau, Omega, Phi float64
	// Latency of a success, log-normal: log = LogMS + rep shift (sd TauL) + block shift (AR(1),
	// sd OmegaL, Phi) + request noise (sd Sigma).
	LogMS, TauL, OmegaL, Sigma float64
}

type simBlock struct {
	n, x int       // requests, successes
	lats []float64 // latency of each success, ms
}

func logistic(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// ar1 returns n values of a stationary AR(1) series with marginal sd sd and lag-1 correlation phi.
func ar1(rng *rand.Rand, n int, sd, phi float64) []float64 {
	out := make([]float64, n)
	v := rng.NormFloat64() * sd
	for i := range out {
		out[i] = v
		v = phi*v + math.Sqrt(1-phi*phi)*sd*rng.NormFloat64()
	}
	return out
}

// run simulates the model's repetitions.
func (m model) run(rng *rand.Rand) [][]simBlock {
	out := make([][]simBlock, m.R)
	for r := range out {
		dp, dl := rng.NormFloat64()*m.Tau, rng.NormFloat64()*m.TauL
		ep, el := ar1(rng, m.B, m.Omega, m.Phi), ar1(rng, m.B, m.OmegaL, m.Phi)
		for b := range m.B {
			p := logistic(m.Logit + dp + ep[b])
			blk := simBlock{n: m.M}
			for range m.M {
				if rng.Float64() < p {
					blk.x++
					blk.lats = append(blk.lats, math.Exp(m.LogMS+dl+el[b]+m.Sigma*rng.NormFloat64()))
				}
			}
			out[r] = append(out[r], blk)
		}
	}
	return out
}

// trueRate is the expected success rate of a run: E[logistic(Logit + sqrt(Tau²+Omega²) Z)],
// by Simpson's rule over z in [-10, 10].
func (m model) trueRate() float64 {
	s := math.Hypot(m.Tau, m.Omega)
	const n = 4000
	h := 20.0 / n
	sum := 0.0
	for i := 0; i <= n; i++ {
		z := -10 + float64(i)*h
		w := 2.0
		switch {
		case i == 0 || i == n:
			w = 1
		case i%2 == 1:
			w = 4
		}
		sum += w * logistic(m.Logit+s*z) * math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)
	}
	return sum * h / 3
}

// trueQuantile is the expected q-quantile of a run's success latencies: within a run the block
// shifts mix into a log-normal of sd sqrt(OmegaL²+Sigma²); across runs the run's shift
// multiplies it by exp(shift), whose mean is exp(TauL²/2).
func (m model) trueQuantile(q float64) float64 {
	return math.Exp(m.LogMS + m.TauL*m.TauL/2 + math.Hypot(m.OmegaL, m.Sigma)*distuv.UnitNormal.Quantile(q))
}

// The estimators below do what the verdict engine does with a real run's blocks.

// rateFigure is the success rate of a simulated configuration as the engine measures it.
func rateFigure(group string, reps [][]simBlock) *Figure {
	f := &Figure{Group: group, Rate: &Counts{}}
	for _, blocks := range reps {
		x, n := make([]float64, len(blocks)), make([]float64, len(blocks))
		for j, b := range blocks {
			x[j], n[j] = float64(b.x), float64(b.n)
			f.Rate.X += x[j]
			f.Rate.N += n[j]
		}
		v, scores := Ratio(x, n)
		f.Reps = append(f.Reps, v)
		f.Scores = append(f.Scores, scores)
	}
	return f
}

// quantileFigure is the q-quantile of a simulated configuration's success latencies.
func quantileFigure(group string, reps [][]simBlock, q float64) *Figure {
	f := &Figure{Group: group}
	neff := 0.0
	for _, blocks := range reps {
		vals := make([][]float64, len(blocks))
		for j, b := range blocks {
			vals[j] = slices.Clone(b.lats)
			slices.Sort(vals[j])
		}
		v, scores, n := Quantile(vals, q)
		f.Reps = append(f.Reps, v)
		f.Scores = append(f.Scores, scores)
		neff += n
	}
	f.HiOpen = Open(q, neff)
	return f
}
