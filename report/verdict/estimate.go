package verdict

import (
	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// Estimator evaluates figures of one run with the engine that judges its claims, so that a
// figure shown beside a claim (the headline's success rate, a comparison's delta) carries the
// same interval by the same method. It memoises what it computes; it is not safe for concurrent
// use.
type Estimator struct{ e *engine }

// NewEstimator returns an Estimator over f whose intervals are those the run's claims get.
func NewEstimator(f Figures) *Estimator { return &Estimator{e: newEngine(f)} }

// NewRunEstimator returns an Estimator over f whose figures belong to run (a run ID): figures of
// estimators of two runs with different IDs are independent, as Delta needs. Its intervals are
// those another run of the scenario would be compared with: when f is a judged run
// (*model.Summary) whose scenario declared noise floors, each figure of a floored metric is
// widened by it (the shift of a whole run, which the run's own repetitions, sharing its moment,
// cannot show).
func NewRunEstimator(f Figures, run string) *Estimator {
	e := newEngine(f)
	e.salt = "run\x00" + run
	if s, ok := f.(*model.Summary); ok && len(s.Verdict.NoiseFloor) > 0 {
		e.shifts = map[string]claim.Floor{}
		for name, fl := range s.Verdict.NoiseFloor {
			e.shifts[name] = claim.Floor{Abs: fl.Abs, Rel: fl.Rel}
		}
	}
	return &Estimator{e: e}
}

// Estimate evaluates m (with its minus: or over:) and returns its value with its 95% interval,
// or nil and why it cannot be measured. The same run and measure always give the same interval.
func (x *Estimator) Estimate(m claim.Measure) (*model.Interval, string) {
	f, why := x.e.measure(m)
	if f == nil {
		return nil, why
	}
	return f.interval(), ""
}

// Delta returns m measured on run a minus m measured on run b, with the 95% interval of the
// difference: the two runs are independent (make the estimators with NewRunEstimator and the
// runs' IDs), each side's spread between its repetitions counts, and so does each side's
// declared noise floor for the metric (a whole run's shift against another). With one
// repetition on a side and no floor the interval holds that run's noise only (its basis says
// "one run"): two runs of one configuration differ by more than that, so such a delta is no
// evidence of a change.
// It returns nil and why when m cannot be measured on either run.
func Delta(a, b *Estimator, m claim.Measure) (*model.Interval, string) {
	ea, why := a.e.measure(m)
	if ea == nil {
		return nil, why
	}
	eb, why := b.e.measure(m)
	if eb == nil {
		return nil, why
	}
	return ea.minus(eb).interval(), ""
}
