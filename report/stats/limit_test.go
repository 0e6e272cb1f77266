package stats

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// rowsOf returns exact 100 ms rows of pool:A ending at 100 ms, 200 ms, ..., one per value.
func rowsOf(values ...float64) []rundir.ResourceSample {
	var out []rundir.ResourceSample
	for i, v := range values {
		out = append(out, rundir.ResourceSample{T: time.Duration(i+1) * 100 * time.Millisecond, Resource: "pool:A",
			Capacity: float64(int(v)), Interval: 100 * time.Millisecond, MeanCapacity: v, FirstAtCapacity: -1})
	}
	return out
}

func TestLimitSettle(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		name    string
		rows    []rundir.ResourceSample
		final   float64
		after   time.Duration
		settled bool
	}{
		// A limit falling from 10 to 5 over the first 0.4 s of a 2 s window, then flat: it
		// left the band 5 ± 1 for the last time in the row ending at 0.4 s.
		{"steps down and stays", rowsOf(10, 9, 8, 6.5, 6, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5), 5, 400 * ms, true},
		{"flat from the start", rowsOf(8, 8, 8, 8, 8, 8, 8, 8), 8, 0, true},
		// Moving by 4 slots to the end: the last quarter is outside a band of 1 around its mean.
		{"still moving", rowsOf(3, 9, 3, 9, 3, 9, 3, 9), 6, 800 * ms, false},
		// A row's value is its mean over the interval: 5.9 is within 5 ± 1.
		{"mean within the band", rowsOf(9, 5.9, 5, 5, 5, 5, 5, 5), 5, 100 * ms, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			end := c.rows[len(c.rows)-1].T
			got, err := LimitSettle(c.rows, "pool:A", 0, end)
			if err != nil {
				t.Fatal(err)
			}
			if got.Final != c.final || got.After != c.after || got.Settled != c.settled {
				t.Errorf("settle %+v, want final %v after %v settled %v", got, c.final, c.after, c.settled)
			}
		})
	}
	// Rows outside the window and other resources do not count.
	rows := append(rowsOf(1, 1, 10, 10), rundir.ResourceSample{T: 300 * ms, Resource: "pool:B", Interval: 100 * ms, MeanCapacity: 50})
	if got, err := LimitSettle(rows, "pool:A", 200*ms, 400*ms); err != nil || got.Final != 10 || got.Min != 10 || !got.Settled || got.After != 0 {
		t.Errorf("window (0.2 s, 0.4 s]: %+v, %v; want 10 throughout", got, err)
	}
	// Point samples carry no interval: nothing to judge.
	if _, err := LimitSettle([]rundir.ResourceSample{{T: 100 * ms, Resource: "pool:A", Capacity: 5}}, "pool:A", 0, time.Second); err == nil || !strings.Contains(err.Error(), "no exact samples") {
		t.Errorf("point samples: err %v, want no exact samples", err)
	}
}
