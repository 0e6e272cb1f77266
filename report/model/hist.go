package model

// Hist is a latency histogram over the bins of stats.HistogramEdgesMS: Counts[i] requests fell in bin
// From+i. The zero value is an empty histogram.
type Hist struct {
	From   int   `json:"from"`
	Counts []int `json:"counts,omitempty"`
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
