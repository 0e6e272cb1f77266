package report

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Pools and queues are drawn over the calls in flight (which often equal them), and a pool and
// the calls to its dependency share one capacity line, named (so coloured) after the pool.
func TestResourceSeriesOrderAndCapacities(t *testing.T) {
	c := &Configuration{Name: "split"}
	for _, at := range []time.Duration{0, time.Second} {
		c.resources = append(c.resources,
			rundir.ResourceSample{T: at, Resource: "pool:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "calls:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "queue:A", Capacity: 10, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "pool:B", Capacity: 5, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "goroutines", InUse: 99})
	}
	spec := resourceSeries(c)
	var got []string
	for _, s := range spec.Series {
		got = append(got, s.Name)
	}
	if want := []string{"calls:A", "pool:A", "queue:A", "pool:B"}; !reflect.DeepEqual(got, want) {
		t.Errorf("series %v, want %v (unbounded ones left out, pools and queues last)", got, want)
	}
	want := []chart.Series{{Name: "pool:A capacity (= calls:A)", Y: []float64{5}}, {Name: "pool:B capacity", Y: []float64{5}}, {Name: "queue:A capacity", Y: []float64{10}}}
	if !reflect.DeepEqual(spec.HLines, want) {
		t.Errorf("capacity lines %+v, want %+v", spec.HLines, want)
	}
}

// Outcome panels switch to shares of requests when the endpoints' rates differ by more than
// shareFrom, so a slow endpoint's failures do not vanish on the fast one's scale.
func TestRateSpread(t *testing.T) {
	timeline := func(perBucket ...int) []Bucket {
		var bs []Bucket
		for _, n := range perBucket {
			bs = append(bs, Bucket{Requests: n})
		}
		return bs
	}
	tests := []struct {
		name   string
		tl     map[string][]Bucket
		want   float64
		shares bool
	}{
		{"equal rates", map[string][]Bucket{"/a": timeline(50, 50), "/b": timeline(50, 50)}, 1, false},
		{"carriers: 20/s against 5/s", map[string][]Bucket{"/a": timeline(5, 5), "/b": timeline(20, 20)}, 4, false},
		{"orders: 200/s against 10/s", map[string][]Bucket{"/order": timeline(200, 200), "/slow": timeline(10, 10)}, 20, true},
		{"an endpoint without requests is left out", map[string][]Bucket{"/a": timeline(50), "/b": timeline(0)}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Configuration{Timeline: tt.tl}
			for p := range tt.tl {
				c.Endpoints = append(c.Endpoints, EndpointRun{Path: p})
			}
			got := rateSpread(c)
			if got != tt.want || (got > shareFrom) != tt.shares {
				t.Errorf("rateSpread = %g, want %g (shares %t)", got, tt.want, tt.shares)
			}
		})
	}
}

// A capacity far above anything in use is written into the series' name instead of drawn, so it
// does not squash the pools to the floor.
func TestResourceSeriesFarCapacity(t *testing.T) {
	c := &Configuration{resources: []rundir.ResourceSample{
		{Resource: "pool:webhooks", Capacity: 2, InUse: 2},
		{Resource: "inbound:/webhooks/c", Capacity: 5000, InUse: 207},
	}}
	spec := resourceSeries(c)
	if spec.Series[0].Name != "inbound:/webhooks/c (capacity 5000, off the scale)" || len(spec.HLines) != 1 || spec.HLines[0].Name != "pool:webhooks capacity" {
		t.Errorf("series %q, lines %+v", spec.Series[0].Name, spec.HLines)
	}
}

// Fault-free time lines (a burst of load) still show where their phases begin.
func TestWindowsWithoutFaults(t *testing.T) {
	c := &Configuration{Phases: []Phase{{Name: "baseline", EndS: 3}, {Name: "burst", StartS: 3, EndS: 5}, {Name: "drain", StartS: 5, EndS: 13}}}
	want := []chart.Window{{Start: 3, End: 5, Label: "phase burst"}, {Start: 5, End: 13, Label: "phase drain"}}
	if got := windows(c); !reflect.DeepEqual(got, want) {
		t.Errorf("windows %+v, want %+v", got, want)
	}
	c.Phases[1].Faults = []faults.Fault{faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond})}
	if got := windows(c); len(got) != 1 || got[0].Label != "latency 450ms on A" {
		t.Errorf("with a fault: windows %+v, want the fault's phase only", got)
	}
}

// A step series holds each bucket's value across the bucket, and breaks at empty buckets, so a
// change is drawn in the bucket where it happened.
func TestStepSeries(t *testing.T) {
	bs := []Bucket{{TS: 0, Requests: 1, P99MS: 5}, {TS: 1, Requests: 1, P99MS: 500}, {TS: 2}, {TS: 3, Requests: 1, P99MS: 7}}
	s := stepSeries("/b p99", bs, 1, func(b Bucket) float64 { return b.P99MS })
	wantX := []float64{0, 1, 1, 2, 2, 3, 4}
	wantY := []float64{5, 5, 500, 500, math.NaN(), 7, 7}
	if len(s.X) != len(wantX) || len(s.Y) != len(wantY) {
		t.Fatalf("X %v Y %v; want X %v Y %v", s.X, s.Y, wantX, wantY)
	}
	for i := range wantX {
		sameY := s.Y[i] == wantY[i] || (math.IsNaN(s.Y[i]) && math.IsNaN(wantY[i]))
		if s.X[i] != wantX[i] || !sameY {
			t.Errorf("point %d: (%g, %g), want (%g, %g)", i, s.X[i], s.Y[i], wantX[i], wantY[i])
		}
	}
}
