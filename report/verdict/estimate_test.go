package verdict

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
)

// oneRun is a run of one configuration "c" with one 20 s phase "p" in which endpoint /x sends
// rate requests a second: every k-th request fails fast (1 ms, rejected), the others succeed
// after lat plus a jitter of up to 2 ms that repeats every 10 requests.
func oneRun(rate, k int, lat time.Duration) *model.Summary {
	kinds := []model.Kind{model.NewKind("ok", "", "", ""), model.NewKind("rejected:full", "p", "full", "X")}
	var recs []model.Record
	step := time.Second / time.Duration(rate)
	for i := range 20 * rate {
		r := model.Record{T: int64(time.Duration(i) * step), Lat: int64(lat + time.Duration(i%10)*200*time.Microsecond)}
		if k > 0 && i%k == 0 {
			r.Key, r.Lat = 1, int64(time.Millisecond)
		}
		recs = append(recs, r)
	}
	ph := model.Phase{Name: "p", EndS: 20, End: 20 * time.Second, Endpoints: map[string]*model.Stats{}}
	ph.Endpoints["/x"] = stats.Compute(recs, kinds, ph.End, &stats.Scratch{})
	c := model.Configuration{Name: "c", Config: "c", Repetition: 1, Phases: []model.Phase{ph},
		Requests: map[string][]model.Record{"/x": recs}, Kinds: kinds}
	return &model.Summary{BucketS: 1, Configurations: []model.Configuration{c}}
}

var xp99 = claim.Measure{Metric: "success_p99_ms", Configuration: "c", Phase: "p", Endpoint: "/x"}

// The latency of successes leaves the fast failures out, and its p99 has an upper end only with
// enough successes above it.
func TestEstimateSuccessLatency(t *testing.T) {
	s := oneRun(50, 5, 10*time.Millisecond)
	x := NewEstimator(s)
	iv, why := x.Estimate(xp99)
	if iv == nil {
		t.Fatalf("not measurable: %s", why)
	}
	if want := 10 + 1.8; iv.Value != want || iv.Lo == nil || iv.Hi == nil || *iv.Lo > want || *iv.Hi < want {
		t.Errorf("success_p99_ms = %v, want %v inside a closed interval", iv, want)
	}
	t.Run("half the requests fail fast: p50_ms is the successes', failure_p50_ms the failures'", func(t *testing.T) {
		x := NewEstimator(oneRun(50, 2, 10*time.Millisecond))
		ok50, _ := x.Estimate(claim.Measure{Metric: "success_p50_ms", Configuration: "c", Phase: "p", Endpoint: "/x"})
		p50, _ := x.Estimate(claim.Measure{Metric: "p50_ms", Configuration: "c", Phase: "p", Endpoint: "/x"})
		fail50, _ := x.Estimate(claim.Measure{Metric: "failure_p50_ms", Configuration: "c", Phase: "p", Endpoint: "/x"})
		if ok50 == nil || p50 == nil || fail50 == nil || ok50.Value < 10 || p50.Value != ok50.Value || fail50.Value != 1 {
			t.Errorf("success_p50_ms = %v, p50_ms = %v, failure_p50_ms = %v; want >= 10, the same, and 1", ok50, p50, fail50)
		}
	})
	t.Run("too few successes for a p99 leave its upper end open", func(t *testing.T) {
		iv, _ := NewEstimator(oneRun(10, 2, 10*time.Millisecond)).Estimate(xp99) // 100 successes < 368
		if iv == nil || iv.Hi != nil {
			t.Errorf("success_p99_ms over 100 successes = %v, want an open upper end", iv)
		}
	})
	t.Run("no success: not measurable", func(t *testing.T) {
		iv, why := NewEstimator(oneRun(10, 1, 10*time.Millisecond)).Estimate(xp99)
		if iv != nil || why == "" {
			t.Errorf("= %v, %q; want not measurable with a reason", iv, why)
		}
	})
}

// A delta between two runs is the first minus the second with an interval that contains the
// true difference: 0 between two equal runs, -5 ms when the second is 5 ms slower, and it
// excludes 0 then.
func TestDelta(t *testing.T) {
	a := NewRunEstimator(oneRun(50, 5, 10*time.Millisecond), "a")
	same := NewRunEstimator(oneRun(50, 5, 10*time.Millisecond), "b")
	slower := NewRunEstimator(oneRun(50, 5, 15*time.Millisecond), "c")
	d, why := Delta(a, same, xp99)
	if d == nil || d.Value != 0 || d.Lo == nil || d.Hi == nil || *d.Lo > 0 || *d.Hi < 0 {
		t.Errorf("delta of equal runs = %v (%s), want 0 inside its interval", d, why)
	}
	d, _ = Delta(a, slower, xp99)
	if d == nil || d.Value != -5 || d.Hi == nil || *d.Hi >= 0 {
		t.Errorf("delta to a run 5 ms slower = %v, want -5 with an interval below 0", d)
	}
	if d, why := Delta(a, slower, claim.Measure{Metric: "success_rate", Configuration: "nope", Phase: "p", Endpoint: "/x"}); d != nil || why == "" {
		t.Errorf("delta of an unknown configuration = %v, %q; want not measurable", d, why)
	}
}

// Two runs compared: a run's repetitions share its moment on the machine, so the shift of a
// whole run against another is what the scenario's declared floor says. A 1 ms difference in a
// p99 of 11 ms excludes zero on the runs' own noise, and not once each side may move 20%.
func TestDeltaWidenedByTheDeclaredFloor(t *testing.T) {
	a, b := oneRun(50, 5, 10*time.Millisecond), oneRun(50, 5, 11*time.Millisecond)
	d, _ := Delta(NewRunEstimator(a, "a"), NewRunEstimator(b, "b"), xp99)
	if d == nil || d.Hi == nil || *d.Hi >= 0 {
		t.Fatalf("delta without floors = %v, want below 0", d)
	}
	for _, s := range []*model.Summary{a, b} {
		s.Verdict.NoiseFloor = map[string]model.Floor{"p99_ms": {Rel: 0.2}} // success_p99_ms is its alias
	}
	d, _ = Delta(NewRunEstimator(a, "a"), NewRunEstimator(b, "b"), xp99)
	if d == nil || d.Lo == nil || d.Hi == nil || *d.Lo > 0 || *d.Hi < 0 {
		t.Errorf("delta with a 20%% floor on each side = %v, want an interval containing 0", d)
	}
}

// A latency figure is no finer than the run's timers: its interval is widened by the send-lag
// p99 its load generators measured, a rate's is not.
func TestLatencyIsNoFinerThanTheRunsTimers(t *testing.T) {
	quiet := oneRun(50, 5, 10*time.Millisecond)
	late := oneRun(50, 5, 10*time.Millisecond)
	late.Configurations[0].Endpoints = []model.EndpointRun{{Path: "/x", LagP99MS: 0.4}, {Path: "/y", LagP99MS: 3}}
	width := func(s *model.Summary, m claim.Measure) float64 {
		iv, why := NewEstimator(s).Estimate(m)
		if iv == nil || iv.Lo == nil || iv.Hi == nil {
			t.Fatalf("%s: %v (%s), want a closed interval", m.Metric, iv, why)
		}
		return *iv.Hi - *iv.Lo
	}
	q, l := width(quiet, xp99), width(late, xp99)
	// The largest lag (3 ms) as a 95% half-width, added in quadrature.
	if want := 2 * 3.0; l < want || l*l < q*q+want*want*0.99 {
		t.Errorf("p99 of successes: width %.3f ms with timers 3 ms late, %.3f ms on time; want at least %.1f ms and the two in quadrature", l, q, want)
	}
	sr := claim.Measure{Metric: "success_rate", Configuration: "c", Phase: "p", Endpoint: "/x"}
	if q, l := width(quiet, sr), width(late, sr); q != l {
		t.Errorf("success rate: width %v with late timers, %v without; want the same", l, q)
	}
}
