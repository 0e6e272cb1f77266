package ingest

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// An adaptive pool's limit (rows with mean_capacity) gets a figure per phase after the first; a
// pool of fixed size gets none.
func TestLimitFigures(t *testing.T) {
	ms := time.Millisecond
	var rs []rundir.ResourceSample
	limit := []float64{10, 10, 10, 10, 6, 5, 5, 5} // 100 ms rows; phase p2 starts at 400 ms
	for i, v := range limit {
		at := time.Duration(i+1) * 100 * ms
		rs = append(rs,
			rundir.ResourceSample{T: at, Resource: "pool:A", Capacity: float64(int(v)), Interval: 100 * ms, MeanCapacity: v, FirstAtCapacity: -1},
			rundir.ResourceSample{T: at, Resource: "pool:B", Capacity: 5, Interval: 100 * ms, FirstAtCapacity: -1})
	}
	c := &model.Configuration{Phases: []model.Phase{{Name: "p1", Start: 0, End: 400 * ms}, {Name: "p2", Start: 400 * ms, End: 800 * ms}}}
	limitFigures(c, rs)
	if len(c.Phases[0].Limits) != 0 {
		t.Errorf("first phase: %+v, want no figure (no switch starts it)", c.Phases[0].Limits)
	}
	got := c.Phases[1].Limits
	if len(got) != 1 || got[0].Resource != "pool:A" || got[0].Before != 10 || got[0].Min != 5 || got[0].Max != 6 ||
		got[0].Final != 5 || got[0].SettleS == nil || *got[0].SettleS != 0 {
		t.Fatalf("second phase: %+v, want pool:A only, from 10 to 5 (6 is within a slot of 5: settled at once)", got)
	}
}
