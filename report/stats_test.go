package report

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
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
			if got := quantile(tt.sorted, tt.q); got != tt.want {
				t.Errorf("quantile(%v) = %d, want %d", tt.q, got, tt.want)
			}
		})
	}
}

// oneConfig writes a single shared configuration whose /a requests are given explicitly.
func oneConfig(t *testing.T, phases []rundir.Phase, a []req, res []rundir.ResourceSample) *Configuration {
	t.Helper()
	w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "shared", mode: outcome.ModeShared,
		pools: sharedPools(10), valid: true, extra: map[string][]req{"/a": a}, resources: res}}}
	s, err := Analyze(w.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	return &s.Configurations[0]
}

func TestStatsOnKnownData(t *testing.T) {
	// /a: 90 successes at 1..90 ms and 10 failures at 91..100 ms of known classes, all in one
	// 10-s phase.
	var a []req
	classes := []string{"timeout:dependency", "timeout:client", "rejected:full", "rejected:queue-full",
		"rejected:breaker-open", "upstream:reset", "upstream:status-500", "connection:refused", "other:eof", "weird:thing"}
	for i := 1; i <= 100; i++ {
		r := req{t: time.Duration(i) * 50 * ms_, lat: time.Duration(i) * ms_, class: "ok", dep: "A"}
		if i > 90 {
			r.class = classes[i-91]
		}
		a = append(a, r)
	}
	phases := []rundir.Phase{{Name: "only", Start: 0, End: 10 * time.Second}}
	st := oneConfig(t, phases, a, nil).Phases[0].Endpoints["/a"]

	checks := []struct {
		name      string
		got, want float64
	}{
		{"requests", float64(st.Requests), 100},
		{"successes", float64(st.Successes), 90},
		{"success rate", st.SuccessRate, 0.9},
		{"p50", st.P50MS, 50},
		{"p90", st.P90MS, 90},
		{"p99", st.P99MS, 99},
		{"p99.9", st.P999MS, 100},
		{"max", st.MaxMS, 100},
		{"mean", st.MeanMS, 50.5},
		{"success p99", st.Success.P99MS, 90},
		{"success max", st.Success.MaxMS, 90},
		{"failure p50", st.Failure.P50MS, 95},
		{"failure max", st.Failure.MaxMS, 100},
		{"rejected count", float64(st.Rejected.Count), 3},
		{"rejected max", st.Rejected.MaxMS, 95},
		{"timeouts", float64(st.Errors.Timeout), 2},
		{"rejected", float64(st.Errors.Rejected), 3},
		{"upstream", float64(st.Errors.Upstream), 2},
		{"connection", float64(st.Errors.Connection), 1},
		{"other (other:eof and unknown prefix)", float64(st.Errors.Other), 2},
		{"class rejected:queue-full", float64(st.Classes["rejected:queue-full"]), 1},
		{"class ok", float64(st.Classes["ok"]), 90},
		{"throughput", st.ThroughputRPS, 9},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if math.Abs(c.got-c.want) > 1e-9 {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestPhaseAssignmentAtBoundaries(t *testing.T) {
	phases := []rundir.Phase{{Name: "p1", Start: 0, End: 10 * time.Second}, {Name: "p2", Start: 10 * time.Second, End: 20 * time.Second}}
	tests := []struct {
		name  string
		t     time.Duration
		phase int // -1: outside
	}{
		{"at zero", 0, 0},
		{"one ns before the boundary", 10*time.Second - 1, 0},
		{"exactly at the boundary", 10 * time.Second, 1},
		{"one ns before the end", 20*time.Second - 1, 1},
		{"at the end", 20 * time.Second, -1},
		{"before the start", -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := oneConfig(t, phases, []req{{t: tt.t, lat: ms_, class: "ok"}}, nil)
			for i, ph := range c.Phases {
				want := 0
				if i == tt.phase {
					want = 1
				}
				if got := ph.Endpoints["/a"].Requests; got != want {
					t.Errorf("phase %s has %d requests, want %d", ph.Name, got, want)
				}
			}
			if wantOut := map[bool]int{true: 1, false: 0}[tt.phase < 0]; c.Outside != wantOut {
				t.Errorf("outside = %d, want %d", c.Outside, wantOut)
			}
		})
	}
}

func TestTimelineBuckets(t *testing.T) {
	phases := []rundir.Phase{{Name: "p", Start: 0, End: 3 * time.Second}}
	a := []req{
		{t: 0, lat: 10 * ms_, class: "ok", lag: 200 * time.Microsecond},
		{t: 999 * ms_, lat: 30 * ms_, class: "rejected:full", lag: 3 * ms_},
		{t: 1000 * ms_, lat: 20 * ms_, class: "ok", noSched: true},
	}
	tl := oneConfig(t, phases, a, nil).Timeline["/a"]
	if len(tl) != 3 {
		t.Fatalf("got %d buckets, want 3", len(tl))
	}
	// 10 ms falls in bin 20 (10 per decade from 0.1 ms), 20 ms in bin 23, 30 ms in bin 24.
	want := []Bucket{
		{TS: 0, WidthS: 1, Requests: 2, Successes: 1, SuccessRate: 0.5, ErrorRate: 0.5, P50MS: 10, P99MS: 30, MaxMS: 30, Errors: Errors{Rejected: 1},
			SuccessP50MS: 10, SuccessP99MS: 10, FailureP50MS: 30, FailureP99MS: 30, ThroughputRPS: 1, SentRPS: 2,
			LagCount: 2, LagP50MS: 0.2, LagMaxMS: 3, SuccessHist: Hist{From: 20, Counts: []int{1}}, FailureHist: Hist{From: 24, Counts: []int{1}}},
		{TS: 1, WidthS: 1, Requests: 1, Successes: 1, SuccessRate: 1, P50MS: 20, P99MS: 20, MaxMS: 20,
			SuccessP50MS: 20, SuccessP99MS: 20, ThroughputRPS: 1, SentRPS: 1, SuccessHist: Hist{From: 23, Counts: []int{1}}},
		{TS: 2, WidthS: 1},
	}
	for i := range want {
		if !reflect.DeepEqual(tl[i], want[i]) {
			t.Errorf("bucket %d =\n%+v, want\n%+v", i, tl[i], want[i])
		}
	}
}

// Buckets never straddle a phase boundary: one that would is cut there, and the next starts at it.
func TestBucketSpans(t *testing.T) {
	s := time.Second
	tests := []struct {
		name   string
		phases []Phase
		end    time.Duration
		limit  time.Duration // 0: end
		want   [][2]time.Duration
	}{
		{"whole seconds", []Phase{{start: 0, end: 2 * s}, {start: 2 * s, end: 3 * s}}, 3 * s, 0,
			[][2]time.Duration{{0, s}, {s, 2 * s}, {2 * s, 3 * s}}},
		{"a boundary at 1.5 s cuts a bucket", []Phase{{start: 0, end: 1500 * ms_}, {start: 1500 * ms_, end: 3 * s}}, 3 * s, 0,
			[][2]time.Duration{{0, s}, {s, 1500 * ms_}, {1500 * ms_, 2500 * ms_}, {2500 * ms_, 3 * s}}},
		{"no phases", nil, 2 * s, 0, [][2]time.Duration{{0, s}, {s, 2 * s}}},
		{"a run that lived 1.2 s of 10,000 h gets two buckets", []Phase{{start: 0, end: 10000 * time.Hour}}, 10000 * time.Hour, 1200 * ms_,
			[][2]time.Duration{{0, s}, {s, 2 * s}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit := tt.limit
			if limit == 0 {
				limit = tt.end
			}
			if got := bucketSpans(tt.phases, tt.end, s, limit); !reflect.DeepEqual(got, tt.want) {
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
			if v := ms(int64(tt.lat)); v >= edges[0] && v < edges[histBins] && (v < edges[got]*(1-1e-9) || v >= edges[got+1]) {
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
			f := meanCI(tt.xs)
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

func TestRepetitionsAggregate(t *testing.T) {
	w := hypothesis()
	base := w.cfgs[0]
	w.cfgs = nil
	for i, lat := range []time.Duration{20 * ms_, 30 * ms_} {
		c := base
		c.name, c.config, c.rep = "shared-r"+string(rune('1'+i)), "shared", i+1
		c.profiles = map[string]map[string]prof{"baseline": {"/a": {lat: lat}, "/b": {lat: lat}}}
		w.cfgs = append(w.cfgs, c)
	}
	s, err := Analyze(w.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Aggregates) != 1 || s.Aggregates[0].Repetitions != 2 {
		t.Fatalf("aggregates = %+v, want one with 2 repetitions", s.Aggregates)
	}
	f := s.Aggregates[0].Phases[0].Endpoints["/a"]["p99_ms"]
	// 20 and 30 ms: mean 25, sd 7.07, half-width 12.706 * 7.07 / sqrt(2) = 63.53.
	if f.Mean != 25 || f.CI95 == nil || math.Abs(*f.CI95-63.53) > 0.01 {
		t.Errorf("p99 figure = %+v (ci %v), want mean 25, ci 63.53", f, f.CI95)
	}
}

func TestLagOf(t *testing.T) {
	tests := []struct {
		name  string
		sched string
		sent  time.Duration
		want  int32
	}{
		{"late by 1.5 ms", "1000000000", 1001500 * time.Microsecond, 1500},
		{"early counts as on time", "1000000000", 999 * ms_, 0},
		{"no schedule", "", time.Second, lagUnknown},
		{"unreadable schedule", "soon", time.Second, lagUnknown},
		{"a lag beyond 35 min is clamped", "0", 100 * time.Hour, math.MaxInt32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lagOf(tt.sched, tt.sent); got != tt.want {
				t.Errorf("lagOf(%q, %v) = %d µs, want %d", tt.sched, tt.sent, got, tt.want)
			}
		})
	}
}

// Three repetitions whose /a answers in 20, 30 and 40 ms: the aggregate gives the spread
// (min / median / max), report.md shows it, and a claim's interval resamples the repetitions:
// "p90 < 35 ms" is inconclusive although the mean is 30, where one repetition at 30 ms would hold.
func TestRepetitionsSpreadAndBootstrap(t *testing.T) {
	w := hypothesis()
	base := w.cfgs[0]
	w.cfgs = nil
	for i, lat := range []time.Duration{20 * ms_, 30 * ms_, 40 * ms_} {
		c := base
		c.name, c.config, c.rep = fmt.Sprintf("shared-r%d", i+1), "shared", i+1
		c.profiles = map[string]map[string]prof{"baseline": {"/a": {lat: lat}, "/b": {lat: lat}}}
		w.cfgs = append(w.cfgs, c)
	}
	dir := w.write(t, t.TempDir())
	writeClaims(t, dir, claimsScenario+claimYAML("p90", "{metric: p90_ms, configuration: shared, phase: baseline, endpoint: /a}", "    op: \"<\"\n    value: 35\n"))
	s, err := generate(dir, DefaultBucket, false)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Aggregates[0].Phases[0].Endpoints["/a"]["p90_ms"]
	if f.Min != 20 || f.Median != 30 || f.Max != 40 {
		t.Errorf("spread = %v / %v / %v, want 20 / 30 / 40", f.Min, f.Median, f.Max)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(20.0 / 30.0 / 40.0)") {
		t.Errorf("report.md does not show the spread of the p90 across repetitions")
	}
	c := s.Verdict.Claims[0]
	if c.Verdict != VerdictInconclusive || c.Left.Value != 30 || c.Left.Lo == nil || *c.Left.Lo >= 30 || *c.Left.Hi <= 35 {
		t.Errorf("claim over three repetitions = %s %+v, want inconclusive with an interval from below 30 to above 35", c.Verdict, c.Left)
	}
	// Each repetition alone: 20 and 30 ms hold, 40 ms does not, so the verdict depends on the
	// repetition, and both summary.json and report.md say so.
	var got []string
	for _, r := range c.ByRepetition {
		got = append(got, r.Verdict)
	}
	if want := []string{VerdictHolds, VerdictHolds, VerdictDoesNotHold}; !slices.Equal(got, want) {
		t.Errorf("by repetition = %q, want %q", got, want)
	}
	if v := s.Verdict.SameInEveryRepetition; v == nil || *v {
		t.Errorf("same in every repetition = %v, want false", v)
	}
	if !strings.Contains(string(md), "Each repetition alone") || !strings.Contains(string(md), "Some verdicts differ between repetitions") {
		t.Errorf("report.md lacks the per-repetition verdicts")
	}
	if !strings.Contains(s.Verdicts(), "verdicts differ between repetitions (arrival offsets): p90 r1 holds; p90 r2 holds; p90 r3 does not hold") {
		t.Errorf("terminal lines lack the per-repetition difference:\n%s", s.Verdicts())
	}

	// A claim every repetition satisfies: the same verdict in each.
	writeClaims(t, dir, claimsScenario+claimYAML("p90", "{metric: p90_ms, configuration: shared, phase: baseline, endpoint: /a}", "    op: \"<\"\n    value: 100\n"))
	s, err = Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Verdict.SameInEveryRepetition; v == nil || !*v || s.Verdict.Claims[0].Verdict != VerdictHolds {
		t.Errorf("same in every repetition = %v (verdict %s), want true and holds", v, s.Verdict.Claims[0].Verdict)
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
				got := selectQuantile(slices.Clone(xs), q)
				if want := quantile(sorted, q); got != want {
					t.Errorf("n=%d spread=%d q=%v: selectQuantile = %d, sorted quantile = %d", n, spread, q, got, want)
				}
			}
		}
	}
	if got := selectQuantile(nil, 0.99); got != 0 {
		t.Errorf("selectQuantile(nil) = %d, want 0", got)
	}
}
