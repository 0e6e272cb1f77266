package stats

import (
	"fmt"
	"math"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// Settle is how an adaptive pool's limit behaved over one window of a run (a phase, from the
// fault switch that starts it to its end), read from resources.csv's exact rows of the pool:
// each row's limit is its time-weighted mean over its interval (mean_capacity; capacity for a
// row whose capacity was fixed).
type Settle struct {
	// Final is the limit the pool settled at: the time-weighted mean over the window's last
	// quarter. Band is how far from Final a row may be and count as settled: max(1, 10% of
	// Final) slots.
	Final, Band float64
	// Min and Max are the lowest and highest row values in the window.
	Min, Max float64
	// After is the time from the window's start to the end of the last row outside the band: 0
	// when the limit was within the band from the start.
	After time.Duration
	// Settled is false when a row of the last quarter is outside the band: the limit was still
	// moving at the window's end, and After means nothing.
	Settled bool
}

// LimitSettle returns how the capacity of resource name (an adaptive pool:<name>) settled over
// (start, end], from the exact rows of samples. It returns an error when no exact row of the
// resource ends in the window (a run folder with point samples only, or no such resource).
func LimitSettle(samples []rundir.ResourceSample, name string, start, end time.Duration) (Settle, error) {
	type row struct {
		from, to time.Duration
		v        float64
	}
	var rows []row
	for _, s := range samples {
		if s.Resource != name || !s.Exact() || s.T <= start || s.T > end {
			continue
		}
		v := s.MeanCapacity
		if v == 0 {
			v = s.Capacity
		}
		rows = append(rows, row{from: max(s.T-s.Interval, start), to: s.T, v: v})
	}
	if len(rows) == 0 {
		return Settle{}, fmt.Errorf("no exact samples of %s in (%v, %v]", name, start, end)
	}
	lastQuarter := end - (end-start)/4
	var w, sum float64
	st := Settle{Min: math.Inf(1), Max: math.Inf(-1)}
	for _, r := range rows {
		st.Min, st.Max = math.Min(st.Min, r.v), math.Max(st.Max, r.v)
		if r.to > lastQuarter {
			d := float64(r.to - max(r.from, lastQuarter))
			w += d
			sum += d * r.v
		}
	}
	if w == 0 { // the last row ends before the last quarter: use it
		sum, w = rows[len(rows)-1].v, 1
	}
	st.Final = sum / w
	st.Band = math.Max(1, 0.1*st.Final)
	st.Settled = true
	for _, r := range rows {
		if math.Abs(r.v-st.Final) > st.Band {
			st.After = r.to - start
			if r.to > lastQuarter {
				st.Settled = false
			}
		}
	}
	return st, nil
}
