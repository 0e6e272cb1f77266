package output

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Pools and queues are drawn over the calls in flight; a resource identical to a pool is drawn
// once, named after both; resources of one capacity share one capacity line naming them all.
func TestResourceSeriesOrderAndCapacities(t *testing.T) {
	c := &model.Configuration{Name: "split"}
	for _, at := range []time.Duration{0, time.Second} {
		c.Resources = append(c.Resources,
			rundir.ResourceSample{T: at, Resource: "pool:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "calls:A", Capacity: 5, InUse: 5},
			rundir.ResourceSample{T: at, Resource: "queue:A", Capacity: 10, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "pool:B", Capacity: 5, InUse: 1},
			rundir.ResourceSample{T: at, Resource: "calls:B", Capacity: 5, InUse: float64(at / time.Second)},
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
	timeline := func(perBucket ...int) []model.Bucket {
		var bs []model.Bucket
		for _, n := range perBucket {
			bs = append(bs, model.Bucket{Requests: n})
		}
		return bs
	}
	tests := []struct {
		name   string
		tl     map[string][]model.Bucket
		want   float64
		shares bool
	}{
		{"equal rates", map[string][]model.Bucket{"/a": timeline(50, 50), "/b": timeline(50, 50)}, 1, false},
		{"carriers: 20/s against 5/s", map[string][]model.Bucket{"/a": timeline(5, 5), "/b": timeline(20, 20)}, 4, false},
		{"orders: 200/s against 10/s", map[string][]model.Bucket{"/order": timeline(200, 200), "/slow": timeline(10, 10)}, 20, true},
		{"an endpoint without requests is left out", map[string][]model.Bucket{"/a": timeline(50), "/b": timeline(0)}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &model.Configuration{Timeline: tt.tl}
			for p := range tt.tl {
				c.Endpoints = append(c.Endpoints, model.EndpointRun{Path: p})
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
	c := &model.Configuration{Resources: []rundir.ResourceSample{
		{Resource: "pool:webhooks", Capacity: 2, InUse: 2},
		{Resource: "inbound:/webhooks/c", Capacity: 5000, InUse: 207},
	}}
	spec := resourceSeries(c)
	if spec.Series[0].Name != "inbound:/webhooks/c (capacity 5000, off the scale)" || len(spec.HLines) != 1 || spec.HLines[0].Name != "capacity 2: pool:webhooks" {
		t.Errorf("series %q, lines %+v", spec.Series[0].Name, spec.HLines)
	}
}

// Every phase is marked with its name, and its number for where the name does not fit; phases
// with faults are shaded and name them, the others are outlined only.
func TestWindows(t *testing.T) {
	c := &model.Configuration{Phases: []model.Phase{{Name: "baseline", EndS: 3}, {Name: "burst", StartS: 3, EndS: 5}, {Name: "drain", StartS: 5, EndS: 13}}}
	want := []chart.Window{{Start: 0, End: 3, Label: "baseline", Plain: true, Short: "1"}, {Start: 3, End: 5, Label: "burst", Plain: true, Short: "2"},
		{Start: 5, End: 13, Label: "drain", Plain: true, Short: "3"}}
	if got := windows(c); !reflect.DeepEqual(got, want) {
		t.Errorf("without faults: windows %+v, want %+v", got, want)
	}
	c.Phases[1].Faults = []faults.Fault{faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond}), faults.New("B", &faults.Reset{})}
	want[1] = chart.Window{Start: 3, End: 5, Label: "burst\nA +450ms, B reset", Short: "2"}
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
			if got := model.ShortFault(tt.f); got != tt.want {
				t.Errorf("ShortFault = %q, want %q", got, tt.want)
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
		bs     []model.Bucket
		wantX  []float64
		wantY  []float64
		noSucc bool // value NaN without successes
	}{
		{"steps and an empty bucket",
			[]model.Bucket{{TS: 0, Requests: 1, P99MS: 5}, {TS: 1, Requests: 1, P99MS: 500}, {TS: 2}, {TS: 3, Requests: 1, P99MS: 7}},
			[]float64{0, 1, 1, 2, 2, 3, 4}, []float64{5, 5, 500, 500, nan, 7, 7}, false},
		{"a bucket cut short at a phase boundary keeps its own width",
			[]model.Bucket{{TS: 0, WidthS: 1, Requests: 1, P99MS: 5}, {TS: 1, WidthS: 0.5, Requests: 1, P99MS: 6}, {TS: 1.5, WidthS: 1, Requests: 1, P99MS: 7}},
			[]float64{0, 1, 1, 1.5, 1.5, 2.5}, []float64{5, 5, 6, 6, 7, 7}, false},
		{"a missing bucket breaks the line",
			[]model.Bucket{{TS: 0, Requests: 1, P99MS: 5}, {TS: 2, Requests: 1, P99MS: 6}},
			[]float64{0, 1, 2, 2, 3}, []float64{5, 5, nan, 6, 6}, false},
		{"a NaN value (no success) breaks the line",
			[]model.Bucket{{TS: 0, Requests: 1, Successes: 1, P99MS: 5}, {TS: 1, Requests: 1, P99MS: 6}, {TS: 2, Requests: 1, Successes: 1, P99MS: 7}},
			[]float64{0, 1, 1, 2, 3}, []float64{5, 5, nan, 7, 7}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := stepSeries("/b p99", tt.bs, 1, func(b model.Bucket) float64 {
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
	c := &model.Configuration{Name: "split", Resources: []rundir.ResourceSample{
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

// An adaptive pool's limit (rows with mean_capacity) is drawn as its own line, not as a fixed
// capacity level.
func TestResourceSeriesMovingLimit(t *testing.T) {
	row := func(at time.Duration, limit float64) rundir.ResourceSample {
		return rundir.ResourceSample{T: at, Resource: "pool:A", Capacity: float64(int(limit)), InUse: 3, Interval: 100 * time.Millisecond,
			MeanInUse: 3, MaxInUse: 3, MeanCapacity: limit, FirstAtCapacity: -1}
	}
	c := &model.Configuration{Name: "adaptive", Resources: []rundir.ResourceSample{row(100*time.Millisecond, 10), row(200*time.Millisecond, 8.5)}}
	spec := resourceSeries(c)
	if len(spec.HLines) != 0 {
		t.Errorf("capacity lines %+v, want none for a moving limit", spec.HLines)
	}
	if len(spec.Series) != 2 || spec.Series[1].Name != "limit of pool:A" ||
		!reflect.DeepEqual(spec.Series[1].X, []float64{0, 0.1, 0.1, 0.2}) || !reflect.DeepEqual(spec.Series[1].Y, []float64{10, 10, 8.5, 8.5}) {
		t.Errorf("series %+v, want pool:A then its limit stepping 10 then 8.5", spec.Series)
	}
}

// A percentile is drawn only where the successes measure it, and each phase has the colour of
// its place on the time line in every figure, whichever phases a figure leaves out.
func TestPercentilesBySampleSizeAndPhaseColour(t *testing.T) {
	curve := []model.CurvePoint{{Percentile: 0, MS: 1}, {Percentile: 50, MS: 2}, {Percentile: 99, MS: 3}, {Percentile: 99.9, MS: 4}, {Percentile: 99.99, MS: 5}, {Percentile: 100, MS: 6}}
	st := func(n, ok int) *model.Stats {
		return &model.Stats{Requests: n, Successes: ok, Success: model.Latency{Count: ok}, Curve: curve}
	}
	mk := func(name string, latency *model.Stats) *model.Configuration {
		return &model.Configuration{Name: name, Phases: []model.Phase{
			{Name: "baseline", Endpoints: map[string]*model.Stats{"/a": st(1000, 1000)}},
			{Name: "latency", Endpoints: map[string]*model.Stats{"/a": latency}},
			{Name: "errors", Endpoints: map[string]*model.Stats{"/a": st(600, 0)}},
		}}
	}
	p := percentilesJob("/a", []*model.Configuration{mk("shared", st(600, 600)), mk("split", st(600, 100))})
	find := func(panel int, name string) chart.Series {
		for _, s := range p.Rows[0][panel].Series {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("panel %d has no %s", panel, name)
		return chart.Series{}
	}
	if got := find(0, "baseline").X; !reflect.DeepEqual(got, []float64{0, 50, 99, 99.9, 100}) {
		t.Errorf("1000 successes draw %v, want up to p99.9 and the max", got)
	}
	if got := find(0, "latency").X; !reflect.DeepEqual(got, []float64{0, 50, 99, 100}) {
		t.Errorf("600 successes draw %v, want up to p99 and the max", got)
	}
	if got := find(1, "latency").X; !reflect.DeepEqual(got, []float64{0, 50, 99, 100}) {
		t.Errorf("100 successes draw %v, want up to p99 and the max", got)
	}
	if find(0, "latency").Color != chart.Palette[1] || find(1, "latency").Color != chart.Palette[1] || find(0, "baseline").Color != chart.Palette[0] {
		t.Error("a phase's colour is not its place on the time line's")
	}
}

// The latency plots name the client timeout as a per-call bound and add each endpoint's
// end-to-end bound where a pool can make a request wait for a slot.
func TestTimeoutLines(t *testing.T) {
	c := &model.Configuration{ClientTimeoutMS: 500, Pools: []model.PoolInfo{{Name: "shared", MaxWaitMS: 500, Dependencies: []string{"A", "B"}}, {Name: "C", Dependencies: []string{"C"}}},
		Endpoints: []model.EndpointRun{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}, {Path: "/c", Calls: []string{"C"}}, {Path: "/ac", Calls: []string{"A", "C"}}}}
	var got []string
	for _, l := range timeoutLines(c) {
		got = append(got, fmt.Sprintf("%s @%g", l.Name, l.Y[0]))
	}
	want := []string{"client timeout per dependency call: 500 ms @500", "end-to-end bound of /a, /b (slot wait + calls): 1000 ms @1000",
		"end-to-end bound of /ac (slot wait + calls): 1500 ms @1500"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lines %q\nwant %q", got, want)
	}
}

// Over several repetitions a figure is drawn as the median of each bucket with the smallest and
// largest beside it; one repetition is drawn as it is.
func TestRepSeries(t *testing.T) {
	rep := func(vals ...float64) *model.Configuration {
		var bs []model.Bucket
		for i, v := range vals {
			bs = append(bs, model.Bucket{TS: float64(i), WidthS: 1, Requests: 10, SuccessP99MS: v, Successes: 10})
		}
		return &model.Configuration{Timeline: map[string][]model.Bucket{"/b": bs}}
	}
	f := func(b model.Bucket) float64 { return b.SuccessP99MS }
	got := repSeries("/b", []*model.Configuration{rep(1, 10), rep(3, 30), rep(2, 20, 5)}, "/b", 1, f)
	if len(got) != 3 || got[0].Name != "/b" || got[1].Name != "/b min" || got[2].Name != "/b max" {
		t.Fatalf("series %v, want /b, /b min, /b max", got)
	}
	want := [][]float64{{2, 2, 20, 20, 5, 5}, {1, 1, 10, 10, 5, 5}, {3, 3, 30, 30, 5, 5}}
	for i, s := range got {
		if !reflect.DeepEqual(s.Y, want[i]) {
			t.Errorf("%s = %v, want %v", s.Name, s.Y, want[i])
		}
	}
	if one := repSeries("/b", []*model.Configuration{rep(1, 2)}, "/b", 1, f); len(one) != 1 || one[0].Name != "/b" {
		t.Errorf("one repetition: %v, want its line only", one)
	}
}

// report.html inlines the figures of one configuration run for the first repetition of each
// configuration only; the comparisons and every other output keep all of them.
func TestFirstRepetitionPlots(t *testing.T) {
	s := &model.Summary{}
	for _, cfg := range []string{"shared", "split"} {
		for rep := 1; rep <= 3; rep++ {
			s.Configurations = append(s.Configurations, model.Configuration{Name: fmt.Sprintf("%s-r%d", cfg, rep), Config: cfg, Repetition: rep})
		}
	}
	files := func(ps []Plot) (out []string) {
		for _, p := range ps {
			out = append(out, p.File)
		}
		return out
	}
	all, first := files(PlotsOf(s)), files(FirstRepetitionPlotsOf(s))
	for _, f := range []string{"shared-r1-latency", "split-r1-latency", "shared-r2-latency"} {
		if !slices.Contains(all, f) {
			t.Errorf("PlotsOf lacks %s: %v", f, all)
		}
	}
	for _, f := range first {
		if strings.Contains(f, "-r2-") || strings.Contains(f, "-r3-") {
			t.Errorf("FirstRepetitionPlotsOf has %s", f)
		}
	}
	if !slices.Contains(first, "shared-r1-latency") || !slices.Contains(first, "split-r1-latency") || len(first) >= len(all) {
		t.Errorf("first repetition's figures = %v (of %d)", first, len(all))
	}
}
