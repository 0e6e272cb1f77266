package verdicts

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/verdict"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// The A/A calibration of issue 26: two identical configurations of the hypothesis's shared pool
// (aa1, aa2) run side by side, and for every figure a claim that aa1's is larger and one that it
// is smaller. Nothing differs between them, so a difference that holds is a false verdict; an
// honest 95% interval lets one direction hold in at most 5% of the comparisons (2.5% each). The
// old engine let 38% hold: its intervals knew nothing of the variation between runs.
//
// Three kinds of comparison: the two configurations run at once (as a run does by default), one
// at a time (--parallel 1: they meet the machine at different moments), and two separate runs of
// the same scenario compared figure by figure (verdict.Delta, what bulkhead compare reports).

// aaFigures are the figures compared: latency of successes, success rate, rejected share,
// throughput (and time to level, below).
var aaFigures = []string{"p50_ms", "p90_ms", "p99_ms", "mean_ms", "success_rate", "rejected_share", "throughput"}

// aaScenario is the hypothesis with its shared configuration twice (aa1, aa2), three
// repetitions, and the two claims of every figure of every endpoint and phase.
func aaScenario(t *testing.T) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	shared := sc.Configurations[slices.IndexFunc(sc.Configurations, func(c scenarios.Configuration) bool { return c.Name == "shared" })]
	a1, a2 := shared, shared
	a1.Name, a2.Name = "aa1", "aa2"
	sc.Configurations = []scenarios.Configuration{a1, a2}
	sc.Roles, sc.Tests = claim.Roles{}, nil
	sc.Claims = nil
	zero := 0.0
	add := func(m claim.Measure) {
		m.Configuration = "aa1"
		m.Minus = &claim.Measure{Configuration: "aa2"}
		for _, op := range []string{claim.OpGreater, claim.OpLess} {
			dir := "gt"
			if op == claim.OpLess {
				dir = "lt"
			}
			id := strings.NewReplacer("/", "", "_", "-").Replace(fmt.Sprintf("%s-%s-%s-%s", m.Metric, m.Endpoint, m.Phase, dir))
			sc.Claims = append(sc.Claims, claim.Claim{ID: id, Says: "A/A: " + id,
				Condition: claim.Condition{Measure: m, Op: op, Value: &zero}})
		}
	}
	for _, ph := range []string{"baseline", "busy", "latency", "errors"} {
		for _, ep := range []string{"/a", "/b"} {
			for _, metric := range aaFigures {
				add(claim.Measure{Metric: metric, Phase: ph, Endpoint: ep})
			}
		}
		add(claim.Measure{Metric: "time_to_level_s", Phase: ph, Endpoint: "/b", LevelOf: "/a"})
	}
	sc.Repetitions = 3
	// The hypothesis's phases, the latency phase cut to 12 s and the errors phase to 8 s: every
	// figure keeps enough requests in each repetition (a p99 of /b's successes under the shared
	// pool needs ~12 s), and the six configuration runs one at a time take about five minutes.
	for i := range sc.Phases {
		switch sc.Phases[i].Name {
		case "latency":
			sc.Phases[i].Duration = 12 * time.Second
		case "errors":
			sc.Phases[i].Duration = 8 * time.Second
		}
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// aaRun runs sc (parallel configuration runs at once, 0 for the default) until valid, up to
// three tries, and returns its folder, its summary and how many configuration runs ran at once.
func aaRun(t *testing.T, sc *scenarios.Scenario, parallel int) (string, *model.Summary, int) {
	t.Helper()
	var invalid []string
	for try := 1; try <= 3; try++ {
		res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir(), Parallel: parallel, LagLimit: 10 * time.Millisecond})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		s, err := report.Analyze(res.Dir)
		if err != nil {
			t.Fatalf("analyze: %v", err)
		}
		if s.Valid {
			return res.Dir, s, res.Parallel
		}
		invalid = s.Invalid
		t.Logf("try %d is invalid: %v", try, s.Invalid)
	}
	testenv.SkipOrFail(t, "no valid A/A run in 3 tries (the machine is too busy): %v", invalid)
	return "", nil, 0
}

// lagRange is the smallest and largest send-lag p99 of the run's endpoints, in ms.
func lagRange(s *model.Summary) (lo, hi float64) {
	lo = math.Inf(1)
	for _, c := range s.Configurations {
		for _, e := range c.Endpoints {
			lo, hi = min(lo, e.LagP99MS), max(hi, e.LagP99MS)
		}
	}
	return lo, hi
}

// falseHolds counts the comparisons of a judged A/A run (both directions measurable) and those
// where a direction holds, and lists the latter.
func falseHolds(s *model.Summary) (comparisons, holds int, which []string) {
	byID := map[string]model.Claim{}
	for _, c := range s.Verdict.Claims {
		byID[c.ID] = c
	}
	for _, c := range s.Verdict.Claims {
		base, ok := strings.CutSuffix(c.ID, "-gt")
		if !ok {
			continue
		}
		lt := byID[base+"-lt"]
		if c.Verdict == model.VerdictNotMeasurable || lt.Verdict == model.VerdictNotMeasurable {
			continue
		}
		comparisons++
		if c.Verdict == model.VerdictHolds || lt.Verdict == model.VerdictHolds {
			holds++
			which = append(which, fmt.Sprintf("%s: %s", base, c.Difference))
		}
	}
	return comparisons, holds, which
}

func TestAACalibration(t *testing.T) {
	testenv.Long(t, "runs the A/A scenario twice end to end, once one configuration run at a time (about seven minutes)")
	// Beside the negative controls, two at a time, after the positive control (which runs
	// alone): a machine shared with another run is one more moment the A/A pair must not tell
	// apart. When the one-at-a-time run also overlapped the positive control's three
	// configuration runs at once (whose own send-lag p99 rose to 4-8.5 ms there), 16 of 96
	// deltas against the at-once run excluded zero (2026-12-02 19:22 UTC, baseline p90s 2-3 ms
	// apart): moments that far apart are outside what the declared noise floor (measured between
	// two runs ten minutes apart on a machine doing nothing else) covers.
	t.Parallel()
	sc := aaScenario(t)
	type kind struct {
		name     string
		parallel int
	}
	dirs := map[string]string{}
	sums := map[string]*model.Summary{}
	for _, k := range []kind{{"at once", 0}, {"one at a time (--parallel 1)", 1}} {
		dir, s, at := aaRun(t, sc, k.parallel)
		dirs[k.name], sums[k.name] = dir, s
		// At once by default is whole repetitions: aa1 and aa2 of one repetition side by side.
		if k.parallel == 0 && at != 2 {
			t.Errorf("A/A %s: %d configuration runs at once, want 2 (one repetition of each configuration)", k.name, at)
		}
		n, h, which := falseHolds(s)
		lo, hi := lagRange(s)
		t.Logf("A/A %s (%d at once, send-lag p99 %.2f-%.2f ms): a difference holds in %d of %d comparisons (%.1f%%) %v", k.name, at, lo, hi, h, n, 100*float64(h)/float64(max(n, 1)), which)
		if n < 40 {
			t.Errorf("A/A %s: %d comparisons measurable, want at least 40", k.name, n)
		}
		if float64(h) > 0.05*float64(n) {
			t.Errorf("A/A %s: a difference holds in %d of %d comparisons, want at most 5%%", k.name, h, n)
		}
	}
	// Two separate runs of one scenario: every figure of each configuration, run against run.
	a := verdict.NewRunEstimator(sums["at once"], "at once")
	b := verdict.NewRunEstimator(sums["one at a time (--parallel 1)"], "one at a time")
	n, excl, inside, insideOf := 0, 0, 0, 0
	var which []string
	for _, c := range sc.Claims {
		m, ok := strings.CutSuffix(c.ID, "-gt")
		if !ok {
			continue
		}
		for _, cfg := range []string{"aa1", "aa2"} {
			fm := c.Measure.Base()
			fm.Configuration = cfg
			d, _ := verdict.Delta(a, b, fm)
			if d == nil || d.Lo == nil && d.Hi == nil {
				continue
			}
			n++
			if d.Lo != nil && *d.Lo > 0 || d.Hi != nil && *d.Hi < 0 {
				excl++
				which = append(which, fmt.Sprintf("%s %s: %s", cfg, m, d))
			}
			// Cross-run calibration: one run's point estimate inside the other's interval.
			ia, _ := a.Estimate(fm)
			ib, _ := b.Estimate(fm)
			for _, p := range [][2]*model.Interval{{ia, ib}, {ib, ia}} {
				if p[0] == nil || p[1] == nil {
					continue
				}
				insideOf++
				if (p[1].Lo == nil || *p[1].Lo <= p[0].Value) && (p[1].Hi == nil || p[0].Value <= *p[1].Hi) {
					inside++
				}
			}
		}
	}
	t.Logf("two runs compared: a delta's interval excludes zero in %d of %d figures (%.1f%%) %v", excl, n, 100*float64(excl)/float64(max(n, 1)), which)
	t.Logf("cross-run calibration: one run's point estimate lies in the other's 95%% interval in %d of %d (%.0f%%)", inside, insideOf, 100*float64(inside)/float64(max(insideOf, 1)))
	if n < 40 {
		t.Errorf("two runs compared: %d figures, want at least 40", n)
	}
	if float64(excl) > 0.05*float64(n) {
		t.Errorf("two runs compared: a delta excludes zero in %d of %d figures, want at most 5%%", excl, n)
	}
}

// The A/A scenario validates and makes at least 40 comparisons' worth of claims.
func TestAAScenarioBuilds(t *testing.T) {
	sc := aaScenario(t)
	if n := len(sc.Claims) / 2; n < 40 {
		t.Errorf("%d comparisons, want at least 40", n)
	}
}
