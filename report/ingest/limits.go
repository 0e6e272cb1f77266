package ingest

import (
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// limitFigures fills each phase's Limits after the first (every phase starts with a fault switch,
// on or off) for every resource of c whose capacity moves: one with a mean_capacity in some row.
// A phase without exact rows of it (one an interrupted run never reached) gets none.
func limitFigures(c *model.Configuration, rs []rundir.ResourceSample) {
	var moving []string
	for _, r := range rs {
		if r.MeanCapacity != 0 && !slices.Contains(moving, r.Resource) {
			moving = append(moving, r.Resource)
		}
	}
	if len(moving) == 0 {
		return
	}
	for i := range c.Phases {
		ph := &c.Phases[i]
		if i == 0 {
			continue
		}
		for _, name := range moving {
			st, err := stats.LimitSettle(rs, name, ph.Start, ph.End)
			if err != nil {
				continue
			}
			f := model.LimitFigure{Resource: name, Before: limitBefore(rs, name, ph.Start), Min: st.Min, Max: st.Max,
				Final: st.Final, Band: st.Band}
			if st.Settled {
				s := st.After.Seconds()
				f.SettleS = &s
			}
			ph.Limits = append(ph.Limits, f)
		}
	}
}

// limitBefore is the limit of resource name in the last exact row that ends at or before t.
func limitBefore(rs []rundir.ResourceSample, name string, t time.Duration) float64 {
	var v float64
	for _, r := range rs {
		if r.Resource != name || !r.Exact() || r.T > t {
			continue
		}
		v = r.MeanCapacity
		if v == 0 {
			v = r.Capacity
		}
	}
	return v
}
