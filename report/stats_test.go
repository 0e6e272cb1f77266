package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

// oneConfig writes a single shared configuration whose /a requests are given explicitly.
func oneConfig(t *testing.T, phases []rundir.Phase, a []req, res []rundir.ResourceSample) *model.Configuration {
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
		// The phase's latency figures are of the successes (1..90 ms), not of every request.
		{"p50", st.P50MS, 45},
		{"p90", st.P90MS, 81},
		{"p99", st.P99MS, 90},
		{"p99.9", st.P999MS, 90},
		{"max", st.MaxMS, 90},
		{"mean", st.MeanMS, 45.5},
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
	want := []model.Bucket{
		{TS: 0, WidthS: 1, Requests: 2, Successes: 1, SuccessRate: 0.5, ErrorRate: 0.5, P50MS: 10, P99MS: 30, MaxMS: 30, Errors: model.Errors{Rejected: 1, RejectedRefused: 1},
			SuccessP50MS: 10, SuccessP99MS: 10, FailureP50MS: 30, FailureP99MS: 30, ThroughputRPS: 1, SentRPS: 2,
			LagCount: 2, LagP50MS: 0.2, LagMaxMS: 3, SuccessHist: model.Hist{From: 20, Counts: []int{1}}, FailureHist: model.Hist{From: 24, Counts: []int{1}}},
		{TS: 1, WidthS: 1, Requests: 1, Successes: 1, SuccessRate: 1, P50MS: 20, P99MS: 20, MaxMS: 20,
			SuccessP50MS: 20, SuccessP99MS: 20, ThroughputRPS: 1, SentRPS: 1, SuccessHist: model.Hist{From: 23, Counts: []int{1}}},
		{TS: 2, WidthS: 1},
	}
	for i := range want {
		if !reflect.DeepEqual(tl[i], want[i]) {
			t.Errorf("bucket %d =\n%+v, want\n%+v", i, tl[i], want[i])
		}
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

// Three repetitions whose /a answers in 20, 30 and 40 ms: the aggregate gives the spread
// (min / median / max), report.md shows it, and a claim's interval resamples the repetitions:
// "p90 < 35 ms" is inconclusive although the mean is 30, where one repetition at 30 ms would hold.
func TestRepetitionsSpreadAndBootstrap(t *testing.T) {
	w := hypothesis()
	base := w.cfgs[0]
	w.cfgs = nil
	for i, lat := range []time.Duration{20 * ms_, 21 * ms_, 22 * ms_} {
		c := base
		c.name, c.config, c.rep = fmt.Sprintf("shared-r%d", i+1), "shared", i+1
		c.profiles = map[string]map[string]prof{"baseline": {"/a": {lat: lat}, "/b": {lat: lat}}}
		w.cfgs = append(w.cfgs, c)
	}
	dir := w.write(t, t.TempDir())
	writeClaims(t, dir, claimsScenario+claimYAML("p90", "{metric: p90_ms, configuration: shared, phase: baseline, endpoint: /a}", "    op: \"<\"\n    value: 23.5\n"))
	s, err := generate(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	f := s.Aggregates[0].Phases[0].Endpoints["/a"]["p90_ms"]
	if f.Min != 20 || f.Median != 21 || f.Max != 22 {
		t.Errorf("spread = %v / %v / %v, want 20 / 21 / 22", f.Min, f.Median, f.Max)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "(20.0 / 21.0 / 22.0)") {
		t.Errorf("report.md does not show the spread of the p90 across repetitions")
	}
	// Over the three repetitions: 21 ± t(2 df) x 1/sqrt(3) = [18.516, 23.484], below 23.5. Every
	// second of a repetition is alike here, so the spread between repetitions is all the noise.
	c := s.Verdict.Claims[0]
	if c.Verdict != model.VerdictHolds || c.Left.Value != 21 || c.Left.Lo == nil || c.Left.Hi == nil ||
		model.Round3(*c.Left.Lo) != 18.516 || model.Round3(*c.Left.Hi) != 23.484 || c.Left.Basis != model.BasisRepetitions {
		t.Errorf("claim over three repetitions = %s %+v, want holds with [18.516, 23.484] from the repetitions", c.Verdict, c.Left)
	}
	// Each repetition alone, with the spread the run measured (sd 1 ms) as its noise floor:
	// 20 ± 1.96 and 21 ± 1.96 stay below 23.5, 22 ± 1.96 does not, so the verdict depends on the
	// repetition, and both summary.json and report.md say so.
	var got []string
	for _, r := range c.ByRepetition {
		got = append(got, r.Verdict)
	}
	if want := []string{model.VerdictHolds, model.VerdictHolds, model.VerdictInconclusive}; !slices.Equal(got, want) {
		t.Errorf("by repetition = %q, want %q", got, want)
	}
	if v := s.Verdict.SameInEveryRepetition; v == nil || *v {
		t.Errorf("same in every repetition = %v, want false", v)
	}
	if !strings.Contains(string(md), "Each repetition alone") || !strings.Contains(string(md), "Some verdicts differ between repetitions") {
		t.Errorf("report.md lacks the per-repetition verdicts")
	}
	if !strings.Contains(output.Lines(s), "verdicts differ between repetitions (their arrival offsets, too little data in one, or a busier machine in one: see each one's send lag): p90 r3 inconclusive") {
		t.Errorf("terminal lines lack the per-repetition difference:\n%s", output.Lines(s))
	}

	// A claim every repetition satisfies: the same verdict in each.
	writeClaims(t, dir, claimsScenario+claimYAML("p90", "{metric: p90_ms, configuration: shared, phase: baseline, endpoint: /a}", "    op: \"<\"\n    value: 100\n"))
	rundirtest.Seal(t, dir)
	s, err = Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if v := s.Verdict.SameInEveryRepetition; v == nil || !*v || s.Verdict.Claims[0].Verdict != model.VerdictHolds {
		t.Errorf("same in every repetition = %v (verdict %s), want true and holds", v, s.Verdict.Claims[0].Verdict)
	}
}
