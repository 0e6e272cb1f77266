package report

import (
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Pools and queues are drawn over the calls in flight; a resource identical to a pool is drawn
// once, named after both; resources of one capacity share one capacity line naming them all.
func TestResourceSeriesOrderAndCapacities(t *testing.T) {
	c := &Configuration{Name: "split"}
	for _, at := range []time.Duration{0, time.Second} {
		c.resources = append(c.resources,
			rundir.ResourceSample{T: at, Resource: "pool:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "calls:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "queue:A", Capacity: 10, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "pool:B", Capacity: 5, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "calls:B", Capacity: 5, InUse: int(at / time.Second)},
			rundir.ResourceSample{T: at, Resource: "goroutines", InUse: 99})
	}
	spec := resourceSeries(c)
	var got []string
	for _, s := range spec.Series {
		got = append(got, s.Name)
	}
	want := []string{"calls:B", "pool:A (= calls:A)", "queue:A", "pool:B"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("series %v, want %v (unbounded ones left out, calls:A merged into pool:A, calls:B differs from pool:B, pools and queues last)", got, want)
	}
	wantLines := []chart.Series{{Name: "capacity 5: pool:A, pool:B, calls:A, calls:B", Y: []float64{5}}, {Name: "capacity 10: queue:A", Y: []float64{10}}}
	if !reflect.DeepEqual(spec.HLines, wantLines) {
		t.Errorf("capacity lines %+v, want %+v", spec.HLines, wantLines)
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
	if spec.Series[0].Name != "inbound:/webhooks/c (capacity 5000, off the scale)" || len(spec.HLines) != 1 || spec.HLines[0].Name != "capacity 2: pool:webhooks" {
		t.Errorf("series %q, lines %+v", spec.Series[0].Name, spec.HLines)
	}
}

// Every phase is marked with its name; phases with faults are shaded and name them, the others
// are outlined only.
func TestWindows(t *testing.T) {
	c := &Configuration{Phases: []Phase{{Name: "baseline", EndS: 3}, {Name: "burst", StartS: 3, EndS: 5}, {Name: "drain", StartS: 5, EndS: 13}}}
	want := []chart.Window{{Start: 0, End: 3, Label: "baseline", Plain: true}, {Start: 3, End: 5, Label: "burst", Plain: true}, {Start: 5, End: 13, Label: "drain", Plain: true}}
	if got := windows(c); !reflect.DeepEqual(got, want) {
		t.Errorf("without faults: windows %+v, want %+v", got, want)
	}
	c.Phases[1].Faults = []faults.Fault{faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond}), faults.New("B", &faults.Reset{})}
	want[1] = chart.Window{Start: 3, End: 5, Label: "burst\nA +450ms, B reset"}
	if got := windows(c); !reflect.DeepEqual(got, want) {
		t.Errorf("with faults: windows %+v, want %+v", got, want)
	}
}

func TestShortFault(t *testing.T) {
	upstreamHalf := faults.New("D", &faults.Reset{})
	upstreamHalf.Direction, upstreamHalf.Toxicity = faults.Upstream, 0.5
	tests := []struct {
		f    faults.Fault
		want string
	}{
		{faults.New("A", &faults.Latency{Latency: 150 * time.Millisecond}), "A +150ms"},
		{faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond, Jitter: 12500 * time.Microsecond}), "A +450ms±12.5ms"},
		{faults.New("B", &faults.Bandwidth{RateKBps: 64}), "B bandwidth 64 KB/s"},
		{faults.New("C", &faults.Reset{}), "C reset"},
		{upstreamHalf, "D reset upstream (50%)"},
		{faults.Fault{Dependency: "E", Type: "from-a-newer-build"}, "E from-a-newer-build"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := shortFault(tt.f); got != tt.want {
				t.Errorf("shortFault = %q, want %q", got, tt.want)
			}
		})
	}
}

// A step series holds each bucket's value across the bucket (of its own width), and breaks at
// empty buckets, at NaN values and at missing buckets, so a change is drawn in the bucket where
// it happened.
func TestStepSeries(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		bs     []Bucket
		wantX  []float64
		wantY  []float64
		noSucc bool // value NaN without successes
	}{
		{"steps and an empty bucket",
			[]Bucket{{TS: 0, Requests: 1, P99MS: 5}, {TS: 1, Requests: 1, P99MS: 500}, {TS: 2}, {TS: 3, Requests: 1, P99MS: 7}},
			[]float64{0, 1, 1, 2, 2, 3, 4}, []float64{5, 5, 500, 500, nan, 7, 7}, false},
		{"a bucket cut short at a phase boundary keeps its own width",
			[]Bucket{{TS: 0, WidthS: 1, Requests: 1, P99MS: 5}, {TS: 1, WidthS: 0.5, Requests: 1, P99MS: 6}, {TS: 1.5, WidthS: 1, Requests: 1, P99MS: 7}},
			[]float64{0, 1, 1, 1.5, 1.5, 2.5}, []float64{5, 5, 6, 6, 7, 7}, false},
		{"a missing bucket breaks the line",
			[]Bucket{{TS: 0, Requests: 1, P99MS: 5}, {TS: 2, Requests: 1, P99MS: 6}},
			[]float64{0, 1, 2, 2, 3}, []float64{5, 5, nan, 6, 6}, false},
		{"a NaN value (no success) breaks the line",
			[]Bucket{{TS: 0, Requests: 1, Successes: 1, P99MS: 5}, {TS: 1, Requests: 1, P99MS: 6}, {TS: 2, Requests: 1, Successes: 1, P99MS: 7}},
			[]float64{0, 1, 1, 2, 3}, []float64{5, 5, nan, 7, 7}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stepSeries("/b p99", tt.bs, 1, func(b Bucket) float64 {
				if tt.noSucc {
					return orNaN(b.Successes, b.P99MS)
				}
				return b.P99MS
			})
			if len(s.X) != len(tt.wantX) || len(s.Y) != len(tt.wantY) {
				t.Fatalf("X %v Y %v; want X %v Y %v", s.X, s.Y, tt.wantX, tt.wantY)
			}
			for i := range tt.wantX {
				sameY := s.Y[i] == tt.wantY[i] || (math.IsNaN(s.Y[i]) && math.IsNaN(tt.wantY[i]))
				if s.X[i] != tt.wantX[i] || !sameY {
					t.Errorf("point %d: (%g, %g), want (%g, %g)", i, s.X[i], s.Y[i], tt.wantX[i], tt.wantY[i])
				}
			}
		})
	}
}

func TestMergeIdentical(t *testing.T) {
	top := func(n string) bool { return strings.HasPrefix(n, "pool:") }
	x := []float64{0, 1, 2}
	tests := []struct {
		name string
		in   []chart.Series
		want []string
	}{
		{"identical: drawn once, named after both",
			[]chart.Series{{Name: "calls:A", X: x, Y: []float64{1, 5, 5}}, {Name: "pool:A", X: x, Y: []float64{1, 5, 5}}},
			[]string{"pool:A (= calls:A)"}},
		{"one point a slot apart: both drawn",
			[]chart.Series{{Name: "calls:A", X: x, Y: []float64{1, 5, 4}}, {Name: "pool:A", X: x, Y: []float64{1, 5, 5}}},
			[]string{"calls:A", "pool:A"}},
		{"within sameWithin everywhere (means of intervals): drawn once, named as nearly equal",
			[]chart.Series{{Name: "calls:A", X: x, Y: []float64{0.31, 4.9, 4.97}}, {Name: "pool:A", X: x, Y: []float64{0.33, 4.9, 5}}},
			[]string{"pool:A (≈ calls:A)"}},
		{"just beyond sameWithin at one point: both drawn",
			[]chart.Series{{Name: "calls:A", X: x, Y: []float64{0.31, 4.9, 4.9}}, {Name: "pool:A", X: x, Y: []float64{0.33, 4.9, 5}}},
			[]string{"calls:A", "pool:A"}},
		{"two pools alike stay apart (neither is kept for the other)",
			[]chart.Series{{Name: "pool:A", X: x, Y: []float64{0, 0, 0}}, {Name: "pool:B", X: x, Y: []float64{0, 0, 0}}},
			[]string{"pool:A", "pool:B"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, s := range mergeIdentical(tt.in, top, sameWithin) {
				got = append(got, s.Name)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("mergeIdentical = %v, want %v", got, tt.want)
			}
		})
	}
}

// Rows with exact interval figures are drawn as their mean held across the interval, and point
// samples beside them are left out; calls within sameWithin of their pool merge into it.
func TestResourceSeriesExact(t *testing.T) {
	row := func(at time.Duration, name string, mean float64) rundir.ResourceSample {
		return rundir.ResourceSample{T: at, Resource: name, Capacity: 5, InUse: 5, Interval: 100 * time.Millisecond, MeanInUse: mean, MaxInUse: 5}
	}
	c := &Configuration{Name: "split", resources: []rundir.ResourceSample{
		{T: 0, Resource: "pool:A", Capacity: 5, InUse: 1}, // a point sample: left out
		row(100*time.Millisecond, "pool:A", 0.5), row(100*time.Millisecond, "calls:A", 0.49),
		row(200*time.Millisecond, "pool:A", 4.9), row(200*time.Millisecond, "calls:A", 4.9),
	}}
	spec := resourceSeries(c)
	if len(spec.Series) != 1 {
		t.Fatalf("series %+v, want pool:A alone (calls:A merged)", spec.Series)
	}
	got := spec.Series[0]
	if got.Name != "pool:A (≈ calls:A)" || !reflect.DeepEqual(got.X, []float64{0, 0.1, 0.1, 0.2}) || !reflect.DeepEqual(got.Y, []float64{0.5, 0.5, 4.9, 4.9}) {
		t.Errorf("series %q X %v Y %v; want pool:A (≈ calls:A), steps 0.5 over [0, 0.1) and 4.9 over [0.1, 0.2)", got.Name, got.X, got.Y)
	}
}
