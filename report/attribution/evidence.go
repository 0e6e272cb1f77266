package attribution

import (
	"sort"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// series is one resource's rows of resources.csv in time order, with what each row's interval
// shows: whether the resource was at capacity in it, and whether demand was waiting for it or
// refused by it then.
type series struct {
	name string
	rows []rundir.ResourceSample
	from []time.Duration // start of each row's interval
	// atCap, waiting and refused per row: at capacity in the interval (exact: some time at
	// capacity; a point sample: in use >= capacity); the resource's waiting room held someone
	// in it; its rejection counter grew in it.
	atCap, waiting, refused []bool
}

// ranOut reports whether row i shows the resource run out: at capacity with demand waiting or
// refused. A waiting room is itself the waiters: it runs out when it is full and refuses.
func (s *series) ranOut(i int) bool {
	switch kind, _ := outcome.SplitResource(s.name); kind {
	case outcome.ResourceQueue:
		return s.atCap[i] && s.refused[i]
	case outcome.ResourceEventLoop:
		return s.atCap[i] // its level is the wait every callback had: at its bound, all waited
	}
	return s.atCap[i] && (s.waiting[i] || s.refused[i])
}

// overlapping returns the index range [lo, hi) of the rows whose interval (from, T] meets the
// window [start, end].
func (s *series) overlapping(start, end time.Duration) (lo, hi int) {
	lo = sort.Search(len(s.rows), func(i int) bool { return s.rows[i].T >= start })
	hi = lo
	for hi < len(s.rows) && s.from[hi] <= end {
		hi++
	}
	return lo, hi
}

// ranOutIn reports whether the resource ran out in some row meeting [start, end].
func (s *series) ranOutIn(start, end time.Duration) bool {
	lo, hi := s.overlapping(start, end)
	for i := lo; i < hi; i++ {
		if s.ranOut(i) {
			return true
		}
	}
	return false
}

// atCapIn reports whether the resource was at capacity in some row meeting [start, end].
func (s *series) atCapIn(start, end time.Duration) bool {
	lo, hi := s.overlapping(start, end)
	for i := lo; i < hi; i++ {
		if s.atCap[i] {
			return true
		}
	}
	return false
}

// demand returns the time in [start, end) the resource was at capacity with demand waiting or
// refused (exact rows: each such row's time at capacity, pro-rated to the part in the window),
// and whether any row of the window showed it; point samples count their share of the window.
func (s *series) demand(start, end time.Duration) (time.Duration, bool) {
	var d time.Duration
	any := false
	n, hit := 0, 0
	for i, r := range s.rows {
		lo, hi := max(s.from[i], start), min(r.T, end)
		if hi <= lo && !(r.Interval == 0 && r.T >= start && r.T < end) {
			continue
		}
		n++
		if !s.ranOut(i) {
			continue
		}
		any = true
		hit++
		if r.Exact() {
			d += time.Duration(float64(r.AtCapacity) * float64(hi-lo) / float64(r.Interval))
		}
	}
	if !s.exact() && n > 0 {
		d = time.Duration(float64(end-start) * float64(hit) / float64(n))
	}
	return d, any
}

func (s *series) exact() bool {
	for _, r := range s.rows {
		if r.Exact() {
			return true
		}
	}
	return false
}

// peak returns the highest level of the resource in rows meeting [start, end).
func (s *series) peak(start, end time.Duration) float64 {
	lo, hi := s.overlapping(start, end)
	p := 0.0
	for i := lo; i < hi; i++ {
		p = max(p, s.rows[i].InUse)
		if s.rows[i].Exact() {
			p = max(p, s.rows[i].MaxInUse)
		}
	}
	return p
}

// seriesOf splits rows into one series per resource, each row flagged, waiting rooms paired with
// the resources they are the waiting room of: queue:<what> holds the callers waiting for
// pool:<what>, conns:<what> and calls:<what>.
func seriesOf(rows []rundir.ResourceSample) map[string]*series {
	out := map[string]*series{}
	for _, r := range rows {
		s := out[r.Resource]
		if s == nil {
			s = &series{name: r.Resource}
			out[r.Resource] = s
		}
		s.rows = append(s.rows, r)
	}
	for _, s := range out {
		var prevT time.Duration
		var prevRej uint64
		for i, r := range s.rows {
			from := r.T - r.Interval
			if r.Interval == 0 {
				from = prevT // a point sample stands for the time since the previous one
				if i == 0 {
					from = r.T
				}
			}
			s.from = append(s.from, from)
			at := r.Capacity > 0 && r.InUse >= r.Capacity
			if r.Exact() {
				at = r.Capacity > 0 && r.AtCapacity > 0
			}
			s.atCap = append(s.atCap, at)
			s.refused = append(s.refused, i > 0 && r.Rejected > prevRej)
			prevT, prevRej = r.T, r.Rejected
		}
		s.waiting = make([]bool, len(s.rows))
	}
	for name, s := range out {
		kind, what := outcome.SplitResource(name)
		if what == "" || kind == outcome.ResourceQueue {
			continue
		}
		q := out[outcome.ResourceName(outcome.ResourceQueue, what)]
		if q == nil {
			continue
		}
		for i := range s.rows {
			lo, hi := q.overlapping(s.from[i], s.rows[i].T)
			for j := lo; j < hi; j++ {
				level := q.rows[j].InUse
				if q.rows[j].Exact() {
					level = max(q.rows[j].MaxInUse, q.rows[j].MeanInUse)
				}
				if level > 0 && q.rows[j].T > s.from[i] && q.from[j] < s.rows[i].T {
					s.waiting[i] = true
				}
			}
		}
	}
	return out
}

// isGlobal reports whether every call of the target depends on the resource, whoever it calls:
// its event loop, its CPU, its inbound connections.
func isGlobal(name string) bool {
	kind, _ := outcome.SplitResource(name)
	return kind == outcome.ResourceEventLoop || kind == outcome.ResourceCPU || name == outcome.ResourceInboundConns
}
