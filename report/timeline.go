package report

import (
	"math"
	"slices"
	"time"
)

// The time line is cut into buckets of the report's bucket width (DefaultBucket) that never
// straddle a phase boundary: a bucket that would cross one ends there, and the next starts at
// it. A fault starting at 19.5 s therefore shows from the bucket starting at 19.5 s, never in a
// bucket that mixes both phases. Each bucket keeps, besides its counts, the latency of its
// successes and of its failures apart, the send lag of its requests, and a log-scaled latency
// histogram of both, so that every plot of report/plots.go is drawn from summary.json's timeline.

// bucketSpans returns the [from, to) spans of the buckets of a time line that ends at end: steps
// of width from 0, cut at every phase boundary, as far as the first span that reaches limit.
func bucketSpans(phases []Phase, end, width, limit time.Duration) [][2]time.Duration {
	var cuts []time.Duration
	for _, ph := range phases {
		cuts = append(cuts, ph.start, ph.end)
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
	v := ms(ns) / histFloorMS
	if v <= 1 {
		return 0
	}
	// The small epsilon keeps an exact edge (10 ms) in the bin it starts despite rounding.
	return min(int(math.Floor(math.Log10(v)*histPerDecade+1e-9)), histBins-1)
}

// Hist is a latency histogram over the bins of HistogramEdgesMS: Counts[i] requests fell in bin
// From+i. The zero value is an empty histogram.
type Hist struct {
	From   int   `json:"from"`
	Counts []int `json:"counts,omitempty"`
}

// histOf counts sorted latencies (ns) into a Hist trimmed to its first and last non-empty bin.
func histOf(sorted []int64) Hist {
	if len(sorted) == 0 {
		return Hist{}
	}
	lo, hi := histBin(sorted[0]), histBin(sorted[len(sorted)-1])
	h := Hist{From: lo, Counts: make([]int, hi-lo+1)}
	for _, v := range sorted {
		h.Counts[histBin(v)-lo]++
	}
	return h
}

// Total returns the number of requests counted.
func (h Hist) Total() int {
	n := 0
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// At returns the count of bin i (0 outside the histogram).
func (h Hist) At(i int) int {
	if i < h.From || i >= h.From+len(h.Counts) {
		return 0
	}
	return h.Counts[i-h.From]
}

// lagUnknown marks a record whose raw result carried no scheduled send offset.
const lagUnknown = -1

// timelineOf computes the buckets of recs (sorted by send offset) over spans.
func timelineOf(recs []record, spans [][2]time.Duration, outs []kind, s *scratch) []Bucket {
	buckets := make([]Bucket, len(spans))
	for i, sp := range spans {
		buckets[i] = computeBucket(sp[0].Seconds(), span(recs, int64(sp[0]), int64(sp[1])), outs, sp[1]-sp[0], s)
	}
	return buckets
}
