package stats

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
)

func TestQuantileIsNearestRank(t *testing.T) {
	hundred := make([]int64, 100)
	for i := range hundred {
		hundred[i] = int64(i + 1)
	}
	tests := []struct {
		name   string
		sorted []int64
		q      float64
		want   int64
	}{
		{"empty", nil, 0.5, 0},
		{"single", []int64{7}, 0.99, 7},
		{"p0 is the minimum", hundred, 0, 1},
		{"p50 of 1..100", hundred, 0.5, 50},
		{"p90 of 1..100", hundred, 0.9, 90},
		{"p99 of 1..100", hundred, 0.99, 99},
		{"p99.9 of 1..100 is the maximum", hundred, 0.999, 100},
		{"p50 of four rounds up the rank", []int64{10, 20, 30, 40}, 0.5, 20},
		{"p51 of four", []int64{10, 20, 30, 40}, 0.51, 30},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("Quantile(%v) = %d, want %d", tt.q, got, tt.want)
			}
		})
	}
}

// Buckets never straddle a phase boundary: one that would is cut there, and the next starts at it.
func TestBucketSpans(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		phases []model.Phase
		end    time.Duration
		limit  time.Duration // 0: end
		want   [][2]time.Duration
	}{
		{"whole seconds", []model.Phase{{Start: 0, End: 2 * s}, {Start: 2 * s, End: 3 * s}}, 3 * s, 0,
			[][2]time.Duration{{0, s}, {s, 2 * s}, {2 * s, 3 * s}}},
		{"a boundary at 1.5 s cuts a bucket", []model.Phase{{Start: 0, End: 1500 * ms_}, {Start: 1500 * ms_, End: 3 * s}}, 3 * s, 0,
			[][2]time.Duration{{0, s}, {s, 1500 * ms_}, {1500 * ms_, 2500 * ms_}, {2500 * ms_, 3 * s}}},
		{"no phases", nil, 2 * s, 0, [][2]time.Duration{{0, s}, {s, 2 * s}}},
		{"a run that lived 1.2 s of 10,000 h gets two buckets", []model.Phase{{Start: 0, End: 10000 * time.Hour}}, 10000 * time.Hour, 1200 * ms_,
			[][2]time.Duration{{0, s}, {s, 2 * s}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = tt.end
			}
			if got := BucketSpans(tt.phases, tt.end, s, limit); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("bucketSpans = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHistBin(t *testing.T) {
	tests := []struct {
		name string
		lat  time.Duration
		want int
	}{
		{"faster than the floor goes to bin 0", 10 * time.Microsecond, 0},
		{"the floor itself", 100 * time.Microsecond, 0},
		{"1 ms starts bin 10", ms_, 10},
		{"150 ms", 150 * ms_, 31},
		{"slower than 100 s goes to the last bin", 1000 * time.Second, histBins - 1},
	}
	edges := HistogramEdgesMS()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := histBin(int64(tt.lat))
			if got != tt.want {
				t.Errorf("histBin(%v) = %d, want %d", tt.lat, got, tt.want)
			}
			if v := MS(int64(tt.lat)); v >= edges[0] && v < edges[histBins] && (v < edges[got]*(1-1e-9) || v >= edges[got+1]) {
				t.Errorf("%v ms outside its bin [%g, %g)", v, edges[got], edges[got+1])
			}
		})
	}
}

func TestMeanCI(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		mean     float64
		ci       float64 // -1: nil
		tolerane float64
	}{
		{"one value has no interval", []float64{3}, 3, -1, 0},
		{"two values use t(1) = 12.706", []float64{1, 3}, 2, 12.706 * math.Sqrt2 / math.Sqrt2, 1e-9},
		{"identical values have zero width", []float64{5, 5, 5}, 5, 0, 1e-12},
		{"three values use t(2) = 4.303", []float64{1, 2, 3}, 2, 4.303 / math.Sqrt(3), 1e-9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := MeanCI(tt.xs)
			if f.Mean != tt.mean || f.N != len(tt.xs) {
				t.Errorf("mean %v n %d, want %v n %d", f.Mean, f.N, tt.mean, len(tt.xs))
			}
			switch {
			case tt.ci < 0 && f.CI95 != nil:
				t.Errorf("ci = %v, want nil", *f.CI95)
			case tt.ci >= 0 && (f.CI95 == nil || math.Abs(*f.CI95-tt.ci) > tt.tolerane):
				t.Errorf("ci = %v, want %v", f.CI95, tt.ci)
			}
		})
	}
}

// selectQuantile picks the same nearest-rank quantile as sorting and indexing does, on inputs
// with and without runs of equal values, for every rank from the smallest to the largest.
func TestSelectQuantileMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 10, 101, 1000} {
		for _, spread := range []int64{1, 3, 1000, 1 << 40} {
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = rng.Int64N(spread)
			}
			sorted := slices.Clone(xs)
			slices.Sort(sorted)
			for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 0.999, 1} {
				got := SelectQuantile(slices.Clone(xs), q)
				if want := Quantile(sorted, q); got != want {
					t.Errorf("n=%d spread=%d q=%v: selectQuantile = %d, sorted quantile = %d", n, spread, q, got, want)
				}
			}
		}
	}
	if got := SelectQuantile(nil, 0.99); got != 0 {
		t.Errorf("SelectQuantile(nil) = %d, want 0", got)
	}
}

const ms_ = time.Millisecond

// A rejection after waiting for a slot and one at once are counted apart, and both as rejections.
func TestComputeSplitsRejectionKinds(t *testing.T) {
	kinds := []model.Kind{
		model.NewKind("rejected:full", "A", "full", "A"),
		model.NewKind("rejected:wait-timeout", "shared", "wait-timeout", "B"),
		model.NewKind("rejected:queue-full", "shared", "queue-full", "B"),
		model.NewKind("ok", "", "", ""),
	}
	recs := []model.Record{{T: 1, Lat: 2e5, Key: 0}, {T: 2, Lat: 5e8, Key: 1}, {T: 3, Lat: 5e8, Key: 1}, {T: 4, Lat: 1e6, Key: 2}, {T: 5, Lat: 1e6, Key: 3}}
	var s Scratch
	st := Compute(recs, kinds, time.Second, &s)
	if e := st.Errors; e.Rejected != 4 || e.RejectedRefused != 2 || e.RejectedWaited != 2 {
		t.Errorf("errors = %+v, want 4 rejected: 2 at once, 2 after waiting", e)
	}
}
