package attribution

import (
	"sort"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// depSide is one dependency's rows of dependencies.csv in time order: its answers as the
// harness timed them on its side.
type depSide struct {
	rows []rundir.DependencySample
}

// depSides splits the rows by dependency.
func depSides(rows []rundir.DependencySample) map[string]*depSide {
	out := map[string]*depSide{}
	for _, r := range rows {
		d := out[r.Dependency]
		if d == nil {
			d = &depSide{}
			out[r.Dependency] = d
		}
		d.rows = append(d.rows, r)
	}
	return out
}

// failedRow reports whether a row shows the dependency answering late or not at all: an answer
// longer than timeout, a call the target gave up on after waiting about the whole timeout for
// it (lateWaits), a call cut or a connection refused on the dependency's side, time closed, a
// call still waiting past timeout, or (errors true, for a failure the target reports as the
// dependency's error status) an answer of 500 or above. A call the target gave up on sooner is
// not the dependency's lateness: the target spent the rest of its time elsewhere (waiting for a
// slot or a socket) before it called.
func failedRow(r rundir.DependencySample, timeout time.Duration, errors bool) bool {
	return r.Max > timeout || lateWaits(r, timeout) > 0 || r.Cut > 0 || r.Refused > 0 ||
		r.Closed > 0 || r.Oldest > timeout || errors && r.Errors > 0
}

// lateWaits counts a row's calls the dependency made wait about the whole timeout or longer:
// answers longer than timeout, and calls given up on after at least 90% of it (a histogram
// bucket is 9% wide).
func lateWaits(r rundir.DependencySample, timeout time.Duration) int {
	return int(r.Times.CountOver(timeout) + r.Unanswered.CountOver(timeout*9/10))
}

// answeredLate reports whether the dependency answered late or not at all in a row meeting the
// window [start, end]; rows ending up to one sampling period after end count too (a call's end
// is recorded in the row of the interval it ends in).
func (d *depSide) answeredLate(start, end, timeout time.Duration, errors bool) bool {
	i := sort.Search(len(d.rows), func(i int) bool { return d.rows[i].T >= start })
	for ; i < len(d.rows); i++ {
		r := d.rows[i]
		if r.T-r.Interval > end {
			break
		}
		if failedRow(r, timeout, errors) {
			return true
		}
	}
	return false
}

// account sums the rows of [start, end) into a phase's account (a row counts for the part of it
// inside the window: whole when it ends inside).
func (d *depSide) account(name string, start, end, timeout time.Duration) model.DependencyAccount {
	a := model.DependencyAccount{Dependency: name}
	var times outcome.Histogram
	var maxT time.Duration
	var closed time.Duration
	for _, r := range d.rows {
		if r.T <= start || r.T > end {
			continue
		}
		a.Arrived += r.Arrived
		a.Answered += r.Answered
		a.Errors += r.Errors
		a.Abandoned += r.Abandoned
		a.Cut += r.Cut
		a.Refused += r.Refused
		a.Late += lateWaits(r, timeout)
		closed += r.Closed
		times.Merge(r.Times)
		maxT = max(maxT, r.Max)
	}
	a.ClosedS = closed.Seconds()
	if q, ok := times.Quantile(0.5); ok {
		a.P50MS = msOf(min(q, maxT))
	}
	if q, ok := times.Quantile(0.99); ok {
		a.P99MS = msOf(min(q, maxT))
	}
	a.MaxMS = msOf(maxT)
	a.InTime = a.Late == 0 && maxT <= timeout && a.Cut == 0 && a.Refused == 0 && closed == 0
	return a
}

// median returns the median answer time of the rows of [start, end), and false without answers.
func (d *depSide) median(start, end time.Duration) (time.Duration, bool) {
	var times outcome.Histogram
	for _, r := range d.rows {
		if r.T > start && r.T <= end {
			times.Merge(r.Times)
		}
	}
	return times.Quantile(0.5)
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
