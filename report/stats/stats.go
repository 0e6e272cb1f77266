package stats

import (
	"math"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// Quantile returns the nearest-rank q-quantile of sorted (the smallest value with at least a
// fraction q of the values at or below it), or 0 for an empty slice.
func Quantile(sorted []int64, q float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	if i < 0 {
		i = 0
	}
	if i >= n {
		i = n - 1
	}
	return sorted[i]
}

// SelectQuantile returns what Quantile would return for xs sorted, the nearest-rank q-quantile,
// without sorting: it reorders xs in place (quickselect, expected linear time), where a full
// sort of every slice was most of the report's analysis time.
func SelectQuantile(xs []int64, q float64) int64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	k := min(max(int(math.Ceil(q*float64(n)))-1, 0), n-1)
	lo, hi := 0, n-1
	for hi > lo {
		// Median of three as the pivot, then a three-way partition: runs of equal latencies
		// (common at microsecond resolution) end in the middle part and are never revisited.
		mid := lo + (hi-lo)/2
		a, b, c := xs[lo], xs[mid], xs[hi]
		pivot := max(min(a, b), min(max(a, b), c))
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case xs[i] < pivot:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case xs[i] > pivot:
				xs[gt], xs[i] = xs[i], xs[gt]
				gt--
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return pivot
		}
	}
	return xs[k]
}

// MS converts nanoseconds to milliseconds.
func MS(ns int64) float64 { return float64(ns) / 1e6 }

// LatencyOf summarises sorted latencies.
func LatencyOf(sorted []int64) model.Latency {
	if len(sorted) == 0 {
		return model.Latency{}
	}
	var sum float64
	for _, v := range sorted {
		sum += float64(v)
	}
	return model.Latency{
		Count:  len(sorted),
		MeanMS: sum / float64(len(sorted)) / 1e6,
		P50MS:  MS(Quantile(sorted, 0.50)),
		P90MS:  MS(Quantile(sorted, 0.90)),
		P99MS:  MS(Quantile(sorted, 0.99)),
		P999MS: MS(Quantile(sorted, 0.999)),
		MaxMS:  MS(sorted[len(sorted)-1]),
	}
}

// curvePercentiles are the points of the latency percentile curves.
var curvePercentiles = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100}

// Scratch holds reusable buffers so that computing many slices does not allocate per slice.
type Scratch struct{ all, ok, fail, rej, lag []int64 }

func (s *Scratch) reset() {
	s.all, s.ok, s.fail, s.rej, s.lag = s.all[:0], s.ok[:0], s.fail[:0], s.rej[:0], s.lag[:0]
}

func countError(e *model.Errors, o model.Kind) {
	switch o.Type {
	case "timeout":
		e.Timeout++
	case "rejected":
		e.Rejected++
		if outcome.RejectionKind(o.Class) == outcome.RejectWaited {
			e.RejectedWaited++
		} else {
			e.RejectedRefused++
		}
	case "upstream":
		e.Upstream++
	case "connection":
		e.Connection++
	default:
		e.Other++
	}
}

// Compute computes the statistics of recs (sorted by send time), which span dur of the time
// line; kinds are the outcomes their keys index. s holds buffers reused across calls.
func Compute(recs []model.Record, outs []model.Kind, dur time.Duration, s *Scratch) *model.Stats {
	s.reset()
	st := &model.Stats{Requests: len(recs), Classes: map[string]int{}}
	for _, r := range recs {
		o := outs[r.Key]
		st.Classes[o.Class]++
		s.all = append(s.all, r.Lat)
		if o.Success {
			s.ok = append(s.ok, r.Lat)
			continue
		}
		s.fail = append(s.fail, r.Lat)
		countError(&st.Errors, o)
		if o.Type == "rejected" {
			s.rej = append(s.rej, r.Lat)
		}
	}
	for _, b := range [][]int64{s.all, s.ok, s.fail, s.rej} {
		slices.Sort(b)
	}
	ok := LatencyOf(s.ok)
	st.Successes = len(s.ok)
	if st.Requests > 0 {
		st.SuccessRate = float64(st.Successes) / float64(st.Requests)
		st.ErrorRate = 1 - st.SuccessRate
	}
	// Latency figures are of successes (a failure that returns at once is not fast service),
	// as the claims' metrics are; failures and rejections keep their own (Failure, Rejected).
	st.P50MS, st.P90MS, st.P99MS, st.P999MS, st.MaxMS, st.MeanMS = ok.P50MS, ok.P90MS, ok.P99MS, ok.P999MS, ok.MaxMS, ok.MeanMS
	st.Success, st.Failure, st.Rejected = ok, LatencyOf(s.fail), LatencyOf(s.rej)
	if dur > 0 {
		st.ThroughputRPS = float64(st.Successes) / dur.Seconds()
	}
	if len(s.ok) > 0 {
		st.Curve = make([]model.CurvePoint, len(curvePercentiles))
		for i, p := range curvePercentiles {
			st.Curve[i] = model.CurvePoint{Percentile: p, MS: MS(Quantile(s.ok, p/100))}
		}
	}
	return st
}

// ComputeBucket computes the time-bucket figures of recs, which span width of the time line
// from ts seconds.
func ComputeBucket(ts float64, recs []model.Record, outs []model.Kind, width time.Duration, s *Scratch) model.Bucket {
	s.reset()
	b := model.Bucket{TS: ts, WidthS: width.Seconds(), Requests: len(recs)}
	for _, r := range recs {
		o := outs[r.Key]
		s.all = append(s.all, r.Lat)
		if r.Lag != model.LagUnknown {
			s.lag = append(s.lag, int64(r.Lag))
		}
		if o.Success {
			b.Successes++
			s.ok = append(s.ok, r.Lat)
		} else {
			countError(&b.Errors, o)
			s.fail = append(s.fail, r.Lat)
		}
	}
	for _, v := range [][]int64{s.all, s.ok, s.fail, s.lag} {
		slices.Sort(v)
	}
	if b.Requests > 0 {
		b.SuccessRate = float64(b.Successes) / float64(b.Requests)
		b.ErrorRate = 1 - b.SuccessRate
		b.P50MS = MS(Quantile(s.all, 0.5))
		b.P99MS = MS(Quantile(s.all, 0.99))
		b.MaxMS = MS(s.all[len(s.all)-1])
	}
	if len(s.ok) > 0 {
		b.SuccessP50MS, b.SuccessP99MS = MS(Quantile(s.ok, 0.5)), MS(Quantile(s.ok, 0.99))
	}
	if len(s.fail) > 0 {
		b.FailureP50MS, b.FailureP99MS = MS(Quantile(s.fail, 0.5)), MS(Quantile(s.fail, 0.99))
	}
	if n := len(s.lag); n > 0 {
		b.LagCount = n
		b.LagP50MS = float64(Quantile(s.lag, 0.5)) / 1e3
		b.LagMaxMS = float64(s.lag[n-1]) / 1e3
	}
	b.SuccessHist, b.FailureHist = HistOf(s.ok), HistOf(s.fail)
	if width > 0 {
		b.ThroughputRPS = float64(b.Successes) / width.Seconds()
		b.SentRPS = float64(b.Requests) / width.Seconds()
	}
	return b
}

// tQuantile975 is Student's t 0.975 quantile for 1..30 degrees of freedom.
var tQuantile975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// MeanCI returns the mean of xs and the half-width of its 95% confidence interval (t
// distribution), nil with fewer than two values.
func MeanCI(xs []float64) model.Figure {
	f := model.Figure{N: len(xs)}
	if len(xs) == 0 {
		return f
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	f.Mean = sum / float64(len(xs))
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	f.Min, f.Max = sorted[0], sorted[len(sorted)-1]
	f.Median = sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		f.Median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	if len(xs) < 2 {
		return f
	}
	var ss float64
	for _, x := range xs {
		ss += (x - f.Mean) * (x - f.Mean)
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	df := len(xs) - 1
	t := 1.96
	if df <= len(tQuantile975) {
		t = tQuantile975[df-1]
	} else if df < 120 {
		t = 2.0 // within 2% of the exact value for 30 < df < 120
	}
	h := t * sd / math.Sqrt(float64(len(xs)))
	f.CI95 = &h
	return f
}

// figures flattens the numbers of a Stats that get a mean and CI across repetitions, under the
// names of the claim metrics they are (claim.Catalogue).
func figures(s *model.Stats) map[string]float64 {
	return map[string]float64{
		"requests":         float64(s.Requests),
		"success_rate":     s.SuccessRate,
		"error_rate":       s.ErrorRate,
		"p50_ms":           s.P50MS,
		"p90_ms":           s.P90MS,
		"p99_ms":           s.P99MS,
		"p999_ms":          s.P999MS,
		"max_ms":           s.MaxMS,
		"throughput":       s.ThroughputRPS,
		"timeouts":         float64(s.Errors.Timeout),
		"rejected":         float64(s.Errors.Rejected),
		"rejected_refused": float64(s.Errors.RejectedRefused),
		"rejected_waited":  float64(s.Errors.RejectedWaited),
		"upstream":         float64(s.Errors.Upstream),
		"connection":       float64(s.Errors.Connection),
		"other":            float64(s.Errors.Other),
		"failures":         float64(s.Errors.Total()),
		"rejected_p99_ms":  s.Rejected.P99MS,
	}
}

// FirstTimes records on st the send offsets, from the phase start, of the first failed and the
// first rejected request among recs (sorted by send time).
func FirstTimes(st *model.Stats, recs []model.Record, outs []model.Kind, start time.Duration) {
	for _, r := range recs {
		o := outs[r.Key]
		if o.Success {
			continue
		}
		v := float64(r.T-int64(start)) / 1e9
		if st.FirstFailureS == nil {
			st.FirstFailureS = &v
		}
		if o.Type == "rejected" {
			st.FirstRejectionS = &v
			return
		}
	}
}
