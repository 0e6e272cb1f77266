package attribution

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// unbounded reports whether r is a waiting room without a count limit: a queue whose rows all
// have capacity 0. It is judged by the wait it imposes, against boundOf.
func (a *Attribution) unbounded(r string) bool {
	s := a.series[r]
	if s == nil {
		return false
	}
	if kind, _ := outcome.SplitResource(r); kind != outcome.ResourceQueue {
		return false
	}
	for _, row := range s.rows {
		if row.Capacity > 0 {
			return false
		}
	}
	return true
}

// boundOf returns the wait a waiting room is judged against and where it comes from: its
// pool's max wait (the built-in service's, or the one a foreign target's layout states, such as
// a proxy's queue timeout), else the client timeout.
func (a *Attribution) boundOf(queue string) (time.Duration, string) {
	_, what := outcome.SplitResource(queue)
	if w := a.maxWait[what]; w > 0 {
		return w, "max_wait of pool " + what
	}
	return a.timeout, "the client timeout"
}

// queuedToBound reports whether a call in [start, end] waited in the unbounded queue r to its
// bound: the queue held someone then, and the call lasted at least 95% of the bound.
func (a *Attribution) queuedToBound(r string, start, end time.Duration) bool {
	if !a.unbounded(r) {
		return false
	}
	bound, _ := a.boundOf(r)
	return end-start >= bound*95/100 && a.series[r].peak(start, end) > 0
}

// served returns the endpoints whose calls go through resource r: those calling a dependency
// of pool <what>, or dependency <what> itself.
func (a *Attribution) served(r string) []string {
	_, what := outcome.SplitResource(r)
	var out []string
	for _, ep := range slices.Sorted(maps.Keys(a.calls)) {
		for _, d := range a.calls[ep] {
			if d == what || a.poolOf[d] == what {
				out = append(out, ep)
				break
			}
		}
	}
	return out
}

// depMedian returns the sum of the median answer times of deps over [start, end), and false
// when one of them has no answers measured there.
func (a *Attribution) depMedian(deps []string, start, end time.Duration) (time.Duration, bool) {
	var sum time.Duration
	for _, d := range deps {
		side := a.deps[d]
		if side == nil {
			return 0, false
		}
		m, ok := side.median(start, end)
		if !ok {
			return 0, false
		}
		sum += m
	}
	return sum, len(deps) > 0
}

// queues judges each waiting room without a count limit that held anyone in phase ph: how far
// it grew, the longest wait it imposed on the calls of the endpoints it serves (their successes'
// p99 time inside the target beyond their dependencies' median answer, and their rejections
// after waiting), against its bound.
func (a *Attribution) queues(i int, ph *model.Phase) []model.Queue {
	var out []model.Queue
	for _, r := range slices.Sorted(maps.Keys(a.series)) {
		if !a.unbounded(r) {
			continue
		}
		peak := a.series[r].peak(ph.Start, ph.End)
		if peak == 0 {
			continue
		}
		bound, from := a.boundOf(r)
		q := model.Queue{Resource: r, Peak: peak, BoundMS: msOf(bound), BoundFrom: from}
		for _, ep := range a.served(r) {
			st := ph.Endpoints[ep]
			if st == nil {
				continue
			}
			if st.Success.Count > 0 {
				if dm, ok := a.depMedian(a.calls[ep], ph.Start, ph.End); ok {
					q.WaitMS = max(q.WaitMS, st.Success.P99MS-msOf(dm))
				}
			}
			if st.Errors.RejectedWaited > 0 {
				q.WaitMS = max(q.WaitMS, st.Rejected.MaxMS)
			}
			// Calls charged to the queue waited to its bound; so did the timeouts charged to the
			// resource it is the waiting room of, while it held callers.
			_, what := outcome.SplitResource(r)
			for res, byType := range a.counts[i][ep] {
				kind, w := outcome.SplitResource(res)
				if res == r && len(byType) > 0 || w == what && kind != outcome.ResourceQueue && byType[outcome.ClassTimeout] > 0 {
					q.WaitMS = max(q.WaitMS, min(msOf(bound), msOf(a.timeout)))
				}
			}
		}
		q.ReachedBound = q.WaitMS >= 0.95*q.BoundMS
		out = append(out, q)
	}
	return out
}

// accounts sums each metered dependency's rows over phase ph.
func (a *Attribution) accounts(ph *model.Phase) []model.DependencyAccount {
	var out []model.DependencyAccount
	for _, d := range slices.Sorted(maps.Keys(a.deps)) {
		out = append(out, a.deps[d].account(d, ph.Start, ph.End, a.timeout))
	}
	return out
}

// minWait is the least time inside the target, beyond the dependencies' answers, that the
// sentence explains: 10 ms, or a tenth of the client timeout if that is more.
func (a *Attribution) minWait() time.Duration { return max(10*time.Millisecond, a.timeout/10) }

// waits says, per endpoint of phase ph whose successes spent at least minWait inside the target
// beyond their dependencies' median answer, how long (the median) and what for: the first
// resource serving its calls that ran out in the phase, or held waiters (its waiting room, or
// itself a waiting room), else nothing measured.
func (a *Attribution) waits(i int, ph *model.Phase) []model.Wait {
	var out []model.Wait
	for _, ep := range slices.Sorted(maps.Keys(ph.Endpoints)) {
		st := ph.Endpoints[ep]
		if st == nil || st.Success.Count == 0 {
			continue
		}
		dm, ok := a.depMedian(a.calls[ep], ph.Start, ph.End)
		if !ok {
			continue
		}
		inside := time.Duration(st.Success.P50MS*float64(time.Millisecond)) - dm
		if inside < a.minWait() {
			continue
		}
		w := model.Wait{Endpoint: ep, InsideMS: msOf(inside), Failures: st.Requests - st.Successes}
		for _, r := range a.candidates(model.Kind{Type: outcome.ClassTimeout}, a.calls[ep]) {
			s := a.series[r]
			if s == nil {
				continue
			}
			if _, any := s.demand(ph.Start, ph.End); any {
				w.Resource = r
				break
			}
			kind, what := outcome.SplitResource(r)
			if q := a.series[outcome.ResourceName(outcome.ResourceQueue, what)]; kind != outcome.ResourceQueue && q != nil && q.peak(ph.Start, ph.End) > 0 {
				w.Resource = r
				break
			}
			if kind == outcome.ResourceQueue && s.peak(ph.Start, ph.End) > 0 {
				w.Resource = r
				break
			}
		}
		out = append(out, w)
	}
	return out
}

// waitClause says what a Wait is: "/b waited a median 310 ms for the shared pool; none failed".
func waitClause(w model.Wait) string {
	what := "inside the target beyond its dependencies' answers, which nothing measured explains (unexplained)"
	if w.Resource != "" {
		what = "for " + describeResource(w.Resource)
		if kind, _ := outcome.SplitResource(w.Resource); kind == outcome.ResourceQueue {
			what = "in " + describeResource(w.Resource)
		}
	}
	s := fmt.Sprintf("%s's successes waited a median %s %s", w.Endpoint, msText(w.InsideMS), what)
	if w.Failures == 0 {
		s += "; none failed"
	}
	return s
}

// msText writes a duration in milliseconds for a sentence: "310 ms", "4.2 ms".
func msText(ms float64) string {
	if ms >= 100 {
		return fmt.Sprintf("%.0f ms", ms)
	}
	return fmt.Sprintf("%.1f ms", ms)
}
