package stats

import (
	"math"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// The time line is cut into buckets of the report's bucket width (DefaultBucket) that never
// straddle a phase boundary: a bucket that would cross one ends there, and the next starts at
// it. A fault starting at 19.5 s therefore shows from the bucket starting at 19.5 s, never in a
// bucket that mixes both phases. Each bucket keeps, besides its counts, the latency of its
// successes and of its failures apart, the send lag of its requests, and a log-scaled latency
// histogram of both, so that every plot of package output is drawn from summary.json's timeline.

// BucketSpans returns the [from, to) spans of the buckets of a time line that ends at end: steps
// of width from 0, cut at every phase boundary, as far as the first span that reaches limit.
func BucketSpans(phases []model.Phase, end, width, limit time.Duration) [][2]time.Duration {
	var cuts []time.Duration
	for _, ph := range phases {
		cuts = append(cuts, ph.Start, ph.End)
	}
	slices.Sort(cuts)
	var spans [][2]time.Duration
	for from := time.Duration(0); from < end && from < limit; {
		to := min(from+width, end)
		for _, c := range cuts {
			if c > from && c < to {
				to = c
				break
			}
		}
		spans = append(spans, [2]time.Duration{from, to})
		from = to
	}
	return spans
}

// Latency histogram bins: histPerDecade bins per decade from histFloorMS up, histBins in all
// (0.1 ms to 100 s). Bin i covers [histFloorMS·10^(i/histPerDecade), histFloorMS·10^((i+1)/histPerDecade))
// ms; bin 0 also holds anything faster and the last bin anything slower.
const (
	histFloorMS   = 0.1
	histPerDecade = 10
	histBins      = 6 * histPerDecade
)

// HistogramEdgesMS returns the histBins+1 edges of the latency histogram bins, in ms.
func HistogramEdgesMS() []float64 {
	e := make([]float64, histBins+1)
	for i := range e {
		e[i] = histFloorMS * math.Pow(10, float64(i)/histPerDecade)
	}
	return e
}

// histBin returns the histogram bin of a latency in ns.
func histBin(ns int64) int {
	v := MS(ns) / histFloorMS
	if v <= 1 {
		return 0
	}
	// The small epsilon keeps an exact edge (10 ms) in the bin it starts despite rounding.
	return min(int(math.Floor(math.Log10(v)*histPerDecade+1e-9)), histBins-1)
}

// HistOf counts sorted latencies (ns) into a Hist trimmed to its first and last non-empty bin.
func HistOf(sorted []int64) model.Hist {
	if len(sorted) == 0 {
		return model.Hist{}
	}
	lo, hi := histBin(sorted[0]), histBin(sorted[len(sorted)-1])
	h := model.Hist{From: lo, Counts: make([]int, hi-lo+1)}
	for _, v := range sorted {
		h.Counts[histBin(v)-lo]++
	}
	return h
}

// Timeline computes the buckets of recs (sorted by send offset) over spans.
func Timeline(recs []model.Record, spans [][2]time.Duration, outs []model.Kind, s *Scratch) []model.Bucket {
	buckets := make([]model.Bucket, len(spans))
	for i, sp := range spans {
		buckets[i] = ComputeBucket(sp[0].Seconds(), model.Span(recs, int64(sp[0]), int64(sp[1])), outs, sp[1]-sp[0], s)
	}
	return buckets
}
