package attribution

import (
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Usage is one resource's account over a window of the time line, from resources.csv. A run
// written with the interval columns is accounted exactly: each row covers the interval
// (T-Interval, T] with the resource's own time-weighted mean, maximum, time at capacity and first
// instant at capacity, and a row that straddles an end of the window counts for the part inside
// it (the mean and the time at capacity pro-rated, bounded by what the row's first instant at
// capacity allows). An older run has point samples only: the figures are then shares of samples,
// as they were (and alias with a periodic load, see issue 11).
type Usage struct {
	// exact is true when the figures come from intervals, false from point samples.
	exact bool
	// samples is the number of rows that overlap the window; span the time they cover (exact).
	samples int
	span    time.Duration
	// capacity and maxInUse are the highest capacity and level seen.
	capacity, maxInUse float64
	// area is the integral of the level over the window in level·seconds (exact), or the sum of
	// the sampled levels.
	area float64
	// atCapacity is the time at capacity (exact); satSamples the samples at capacity.
	atCapacity time.Duration
	satSamples int
	// first is the offset on the time line of the first instant at capacity in the window, -1
	// when the resource never reached capacity in it.
	first time.Duration
	// base is the rejection counter before the window, last at its last sample; firstRej the
	// offset of the first sample (from the window's start) whose counter grew, -1 for none.
	base, last uint64
	firstRej   time.Duration
}

// ResourceUsage accounts resource name over the window [start, end) of rs.
func ResourceUsage(rs []rundir.ResourceSample, name string, start, end time.Duration) Usage {
	u := Usage{first: -1, firstRej: -1}
	for _, r := range rs {
		if r.Resource == name && r.Exact() {
			u.exact = true
			break
		}
	}
	// base is the rejection counter just before the window; counters start at 0 with the
	// service, before the time line, so 0 is right for a window that starts before the first
	// sample.
	for _, r := range rs {
		if r.Resource != name {
			continue
		}
		if r.T < start {
			u.base, u.last = r.Rejected, r.Rejected
		}
		if u.exact {
			u.addInterval(r, start, end)
			continue
		}
		if r.T < start || r.T >= end {
			continue
		}
		u.samples++
		u.area += r.InUse
		u.maxInUse = max(u.maxInUse, r.InUse)
		u.capacity = max(u.capacity, r.Capacity)
		if r.Capacity > 0 && r.InUse >= r.Capacity {
			u.satSamples++
			if u.first < 0 {
				u.first = r.T
			}
		}
		u.rejectedAt(r, start)
	}
	return u
}

// addInterval adds the part of the exact row r that lies in [start, end).
func (u *Usage) addInterval(r rundir.ResourceSample, start, end time.Duration) {
	if !r.Exact() {
		return // a point sample (the run's first row) covers no time
	}
	from := r.T - r.Interval
	lo, hi := max(from, start), min(r.T, end)
	if hi <= lo {
		return
	}
	part := hi - lo
	u.samples++
	u.span += part
	u.capacity = max(u.capacity, r.Capacity)
	u.maxInUse = max(u.maxInUse, r.MaxInUse)
	u.area += r.MeanInUse * part.Seconds()
	at := r.AtCapacity
	if part < r.Interval && at > 0 {
		// The time at capacity lies in [from+FirstAtCapacity, r.T]: pro-rate it, within what
		// fits in the part and what the part must hold.
		full := r.T - (from + max(r.FirstAtCapacity, 0))
		inPart := min(hi, r.T) - max(lo, from+max(r.FirstAtCapacity, 0))
		prorated := time.Duration(float64(at) * float64(part) / float64(r.Interval))
		least := max(0, at-(r.Interval-part))
		at = min(max(prorated, least), max(inPart, 0), full, part)
	}
	u.atCapacity += at
	if u.first < 0 && r.FirstAtCapacity >= 0 && r.Capacity > 0 {
		switch t := from + r.FirstAtCapacity; {
		case t >= lo && t < hi:
			u.first = t
		case t < lo && at > 0:
			u.first = lo // at capacity in the part, first reached before the window
		}
	}
	if r.T < end {
		u.rejectedAt(r, start)
	}
}

// rejectedAt follows the rejection counter of a sample inside the window.
func (u *Usage) rejectedAt(r rundir.ResourceSample, start time.Duration) {
	if r.T < start {
		return
	}
	if r.Rejected > u.last && u.firstRej < 0 {
		u.firstRej = r.T - start
	}
	u.last = r.Rejected
}

// OK reports whether any sample falls in the window.
func (u Usage) OK() bool { return u.samples > 0 }

// Saturated reports whether the resource reached capacity in the window.
func (u Usage) Saturated() bool { return u.first >= 0 }

// Share is the share of the window at capacity.
func (u Usage) Share() float64 {
	if u.exact {
		if u.span <= 0 {
			return 0
		}
		return float64(u.atCapacity) / float64(u.span)
	}
	return float64(u.satSamples) / float64(u.samples)
}

// SaturatedS is the time at capacity in seconds; for point samples, the share of samples at
// capacity times the window's length.
func (u Usage) SaturatedS(window time.Duration) float64 {
	if u.exact {
		return u.atCapacity.Seconds()
	}
	return u.Share() * window.Seconds()
}

// Mean is the time-weighted mean level (exact), or the mean of the sampled levels.
func (u Usage) Mean() float64 {
	if u.exact {
		if u.span <= 0 {
			return 0
		}
		return u.area / u.span.Seconds()
	}
	return u.area / float64(u.samples)
}

// Rejected is the growth of the rejection counter over the window.
func (u Usage) Rejected() uint64 {
	if u.last > u.base {
		return u.last - u.base
	}
	return 0
}

// Exact reports whether the figures come from the run's intervals (false: point samples).
func (u Usage) Exact() bool { return u.exact }

// Capacity is the highest capacity seen in the window.
func (u Usage) Capacity() float64 { return u.capacity }

// MaxInUse is the highest level seen in the window.
func (u Usage) MaxInUse() float64 { return u.maxInUse }

// First is the offset on the time line of the first instant at capacity in the window, -1 when
// the resource never reached capacity in it.
func (u Usage) First() time.Duration { return u.first }

// FirstRejected is the offset, from the window's start, of the first sample whose rejection
// counter grew, -1 for none.
func (u Usage) FirstRejected() time.Duration { return u.firstRej }

// FirstSaturated returns the offset on the time line at which resource name first reached
// capacity within phase ph of c.
func FirstSaturated(c *model.Configuration, ph *model.Phase, name string) (time.Duration, bool) {
	u := ResourceUsage(c.Resources, name, ph.Start, ph.End)
	return u.first, u.Saturated()
}
