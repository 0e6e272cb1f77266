package report

import (
	"math"
	"slices"
	"strings"
	"time"
)

// record is one request, reduced to what the statistics need (24 bytes, so a million requests
// stay around 24 MB).
type record struct {
	t   int64  // send offset from the attack start, ns
	lat int64  // latency, ns
	key uint32 // index into the configuration's outcome table
	lag int32  // send lag, µs (actual send offset - scheduled), lagUnknown without a schedule
}

// kind is one distinct combination of class and service outcome headers.
type kind struct {
	class   string // X-Loadgen-Class ("ok", "rejected:full", ...)
	typ     string // ok | timeout | rejected | upstream | connection | other
	cause   string // the part after ':' ("full", "dependency", ...)
	pool    string // X-Bulkhead-Pool
	reason  string // X-Bulkhead-Reason
	dep     string // X-Bulkhead-Dependency
	success bool
}

// newOutcome splits a class into its type and cause. Unknown prefixes are typed "other".
func newOutcome(class, pool, reason, dep string) kind {
	typ, cause, _ := strings.Cut(class, ":")
	switch typ {
	case "ok", "timeout", "rejected", "upstream", "connection":
	default:
		typ = "other"
	}
	return kind{class: class, typ: typ, cause: cause, pool: pool, reason: reason, dep: dep, success: typ == "ok"}
}

// quantile returns the nearest-rank q-quantile of sorted (the smallest value with at least a
// fraction q of the values at or below it), or 0 for an empty slice.
func quantile(sorted []int64, q float64) int64 {
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

// selectQuantile returns what quantile would return for xs sorted, the nearest-rank q-quantile,
// without sorting: it reorders xs in place (quickselect, expected linear time). The bootstrap
// takes one quantile of each of its thousand resamples, where a full sort was most of the
// report's analysis time.
func selectQuantile(xs []int64, q float64) int64 {
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

func ms(ns int64) float64 { return float64(ns) / 1e6 }

// latencyOf summarises sorted latencies.
func latencyOf(sorted []int64) Latency {
	if len(sorted) == 0 {
		return Latency{}
	}
	var sum float64
	for _, v := range sorted {
		sum += float64(v)
	}
	return Latency{
		Count:  len(sorted),
		MeanMS: sum / float64(len(sorted)) / 1e6,
		P50MS:  ms(quantile(sorted, 0.50)),
		P90MS:  ms(quantile(sorted, 0.90)),
		P99MS:  ms(quantile(sorted, 0.99)),
		P999MS: ms(quantile(sorted, 0.999)),
		MaxMS:  ms(sorted[len(sorted)-1]),
	}
}

// curvePercentiles are the points of the latency percentile curves.
var curvePercentiles = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100}

// scratch holds reusable buffers so that computing many slices does not allocate per slice.
type scratch struct{ all, ok, fail, rej, lag []int64 }

func (s *scratch) reset() {
	s.all, s.ok, s.fail, s.rej, s.lag = s.all[:0], s.ok[:0], s.fail[:0], s.rej[:0], s.lag[:0]
}

func countError(e *Errors, typ string) {
	switch typ {
	case "timeout":
		e.Timeout++
	case "rejected":
		e.Rejected++
	case "upstream":
		e.Upstream++
	case "connection":
		e.Connection++
	default:
		e.Other++
	}
}

// computeStats computes the statistics of recs, which span dur of the time line.
func computeStats(recs []record, outs []kind, dur time.Duration, s *scratch) *Stats {
	s.reset()
	st := &Stats{Requests: len(recs), Classes: map[string]int{}}
	for _, r := range recs {
		o := outs[r.key]
		st.Classes[o.class]++
		s.all = append(s.all, r.lat)
		if o.success {
			s.ok = append(s.ok, r.lat)
			continue
		}
		s.fail = append(s.fail, r.lat)
		countError(&st.Errors, o.typ)
		if o.typ == "rejected" {
			s.rej = append(s.rej, r.lat)
		}
	}
	for _, b := range [][]int64{s.all, s.ok, s.fail, s.rej} {
		slices.Sort(b)
	}
	all := latencyOf(s.all)
	st.Successes = len(s.ok)
	if st.Requests > 0 {
		st.SuccessRate = float64(st.Successes) / float64(st.Requests)
		st.ErrorRate = 1 - st.SuccessRate
	}
	st.P50MS, st.P90MS, st.P99MS, st.P999MS, st.MaxMS, st.MeanMS = all.P50MS, all.P90MS, all.P99MS, all.P999MS, all.MaxMS, all.MeanMS
	st.Success, st.Failure, st.Rejected = latencyOf(s.ok), latencyOf(s.fail), latencyOf(s.rej)
	if dur > 0 {
		st.ThroughputRPS = float64(st.Successes) / dur.Seconds()
	}
	if len(s.ok) > 0 {
		st.curve = make([]CurvePoint, len(curvePercentiles))
		for i, p := range curvePercentiles {
			st.curve[i] = CurvePoint{Percentile: p, MS: ms(quantile(s.ok, p/100))}
		}
	}
	return st
}

// computeBucket computes the time-bucket figures of recs, which span width of the time line
// from ts seconds.
func computeBucket(ts float64, recs []record, outs []kind, width time.Duration, s *scratch) Bucket {
	s.reset()
	b := Bucket{TS: ts, WidthS: width.Seconds(), Requests: len(recs)}
	for _, r := range recs {
		o := outs[r.key]
		s.all = append(s.all, r.lat)
		if r.lag != lagUnknown {
			s.lag = append(s.lag, int64(r.lag))
		}
		if o.success {
			b.Successes++
			s.ok = append(s.ok, r.lat)
		} else {
			countError(&b.Errors, o.typ)
			s.fail = append(s.fail, r.lat)
		}
	}
	for _, v := range [][]int64{s.all, s.ok, s.fail, s.lag} {
		slices.Sort(v)
	}
	if b.Requests > 0 {
		b.SuccessRate = float64(b.Successes) / float64(b.Requests)
		b.ErrorRate = 1 - b.SuccessRate
		b.P50MS = ms(quantile(s.all, 0.5))
		b.P99MS = ms(quantile(s.all, 0.99))
		b.MaxMS = ms(s.all[len(s.all)-1])
	}
	if len(s.ok) > 0 {
		b.SuccessP50MS, b.SuccessP99MS = ms(quantile(s.ok, 0.5)), ms(quantile(s.ok, 0.99))
	}
	if len(s.fail) > 0 {
		b.FailureP50MS, b.FailureP99MS = ms(quantile(s.fail, 0.5)), ms(quantile(s.fail, 0.99))
	}
	if n := len(s.lag); n > 0 {
		b.LagCount = n
		b.LagP50MS = float64(quantile(s.lag, 0.5)) / 1e3
		b.LagMaxMS = float64(s.lag[n-1]) / 1e3
	}
	b.SuccessHist, b.FailureHist = histOf(s.ok), histOf(s.fail)
	if width > 0 {
		b.ThroughputRPS = float64(b.Successes) / width.Seconds()
		b.SentRPS = float64(b.Requests) / width.Seconds()
	}
	return b
}

// span returns the sub-slice of recs (sorted by t) with from <= t < to.
func span(recs []record, from, to int64) []record {
	i, _ := slices.BinarySearchFunc(recs, from, func(r record, t int64) int { return cmpInt(r.t, t) })
	j, _ := slices.BinarySearchFunc(recs, to, func(r record, t int64) int { return cmpInt(r.t, t) })
	return recs[i:j]
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// tQuantile975 is Student's t 0.975 quantile for 1..30 degrees of freedom.
var tQuantile975 = []float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

// meanCI returns the mean of xs and the half-width of its 95% confidence interval (t
// distribution), nil with fewer than two values.
func meanCI(xs []float64) Figure {
	f := Figure{N: len(xs)}
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

// figures flattens the numbers of a Stats that get a mean and CI across repetitions.
func figures(s *Stats) map[string]float64 {
	return map[string]float64{
		"requests":        float64(s.Requests),
		"success_rate":    s.SuccessRate,
		"error_rate":      s.ErrorRate,
		"p50_ms":          s.P50MS,
		"p90_ms":          s.P90MS,
		"p99_ms":          s.P99MS,
		"p999_ms":         s.P999MS,
		"max_ms":          s.MaxMS,
		"throughput_rps":  s.ThroughputRPS,
		"timeouts":        float64(s.Errors.Timeout),
		"rejected":        float64(s.Errors.Rejected),
		"upstream":        float64(s.Errors.Upstream),
		"connection":      float64(s.Errors.Connection),
		"other":           float64(s.Errors.Other),
		"failures":        float64(s.Errors.Total()),
		"rejected_p99_ms": s.Rejected.P99MS,
	}
}
