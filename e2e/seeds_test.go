package e2e_test

import (
	"context"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// The seed scenarios end to end, scaled down: each built-in is opened, its phases shortened (and
// for orders its timeout), run through experiment.Run on loopback, and analysed with
// report.Analyze. The assertions are the claims' directions read from the raw results (shared
// worse than capped, the pool full before the breaker opened, the workers before the queue, per
// call slower than shared), not wall-clock bounds, so a busy machine changes the numbers but not
// the verdicts. Skipped with -short: each runs for about 10 s.

// scaled opens the built-in name and sets the durations of its phases (every phase must be
// listed), scaling the timeout and every timeout-relative amount by timeout/old when timeout > 0.
func scaled(t *testing.T, name string, timeout time.Duration, phases map[string]time.Duration) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	if timeout > 0 {
		k := float64(timeout) / float64(sc.Timeout)
		scale := func(d time.Duration) time.Duration { return time.Duration(float64(d) * k) }
		sc.Timeout, sc.Load.Timeout = timeout, scale(sc.Load.Timeout)
		for i := range sc.Phases {
			for j := range sc.Phases[i].Faults {
				if l, ok := sc.Phases[i].Faults[j].Params.(*faults.Latency); ok {
					l.Latency = scale(l.Latency)
				}
			}
		}
	}
	// One repetition: these tests read directions from one run's files by configuration name
	// (a repeated run names its folders <configuration>-r<n>); the seeds' own repetitions are
	// for their claims' intervals at full scale.
	sc.Repetitions = 1
	for i := range sc.Phases {
		d, ok := phases[sc.Phases[i].Name]
		if !ok {
			t.Fatalf("%s: no duration given for phase %q", name, sc.Phases[i].Name)
		}
		sc.Phases[i].Duration = d
	}
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	return sc
}

// run runs sc into a temporary folder and returns the analysis, logging the claims' verdicts.
func run(t *testing.T, sc *scenarios.Scenario) *model.Summary {
	t.Helper()
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir()})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	s, err := report.Analyze(res.Dir)
	if err != nil {
		t.Fatalf("analyze: %v", err)
	}
	if !s.Valid {
		t.Logf("run not valid (no verdicts; the directions below are read from the raw results anyway): %v", s.Invalid)
	}
	for _, c := range s.Verdict.Claims {
		t.Logf("claim %s: %s (%s)", c.ID, c.Verdict, c.Reason)
	}
	return s
}

// stats returns the statistics of endpoint ep in configuration conf, phase phase.
func stats(t *testing.T, s *model.Summary, conf, phase, ep string) *model.Stats {
	t.Helper()
	for _, c := range s.Configurations {
		if c.Name != conf {
			continue
		}
		for _, ph := range c.Phases {
			if ph.Name == phase && ph.Endpoints[ep] != nil && ph.Endpoints[ep].Requests > 0 {
				return ph.Endpoints[ep]
			}
		}
	}
	t.Fatalf("no requests of %s in %s/%s", ep, conf, phase)
	return nil
}

// exhausted returns the account of resource res in configuration conf, phase phase.
func exhausted(t *testing.T, s *model.Summary, conf, phase, res string) model.Exhausted {
	t.Helper()
	for _, c := range s.Configurations {
		for _, ph := range c.Phases {
			if c.Name != conf || ph.Name != phase {
				continue
			}
			for _, e := range ph.Exhausted {
				if e.Resource == res {
					return e
				}
			}
		}
	}
	t.Fatalf("no samples of %s in %s/%s", res, conf, phase)
	return model.Exhausted{}
}

// claim returns the claim id of the summary.
func claim(t *testing.T, s *model.Summary, id string) model.Claim {
	t.Helper()
	for _, c := range s.Verdict.Claims {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no claim %q in the summary", id)
	return model.Claim{}
}

func TestCarriersScaledDown(t *testing.T) {
	testenv.Long(t, "runs the carriers scenario for ~10 s")
	// 0.5 s baseline, 3 s of B at 0.9x the 1 s timeout (the breaker needs ten slow calls, ~2 s).
	s := run(t, scaled(t, "carriers", 0, map[string]time.Duration{
		"baseline": 500 * time.Millisecond, "slow-b": 3 * time.Second, "recovery": 200 * time.Millisecond}))

	for _, ep := range []string{"/a", "/c"} {
		t.Run("A and C fail with the shared pool and are served with B capped: "+ep, func(t *testing.T) {
			sh, cp := stats(t, s, "shared", "slow-b", ep), stats(t, s, "capped", "slow-b", ep)
			if !(sh.SuccessRate < cp.SuccessRate) {
				t.Errorf("%s success rate: shared %.2f, capped %.2f; want shared < capped", ep, sh.SuccessRate, cp.SuccessRate)
			}
		})
	}
	t.Run("B never holds more than its two slots when capped", func(t *testing.T) {
		if e := exhausted(t, s, "capped", "slow-b", "calls:B"); e.Capacity != 2 || e.MaxInUse > 2 || e.MaxInUse == 0 {
			t.Errorf("calls:B = %v of %v at most, want 1..2 of 2", e.MaxInUse, e.Capacity)
		}
	})
	t.Run("with the breaker alone B filled the shared pool before the breaker opened", func(t *testing.T) {
		pool := exhausted(t, s, "breaker", "slow-b", "pool:shared")
		if !pool.Saturated {
			t.Fatalf("pool:shared never full (max %v of %v)", pool.MaxInUse, pool.Capacity)
		}
		// calls:B has no capacity of its own in a shared pool, so it is not in the Exhausted
		// list; the claim measures it (its figures are computed even when the run is invalid).
		if held := claim(t, s, "breaker-b-took-all-slots").Left; held == nil || held.Value < pool.Capacity {
			t.Errorf("B held at most %v of the %v slots before the breaker opened, want all of them", held, pool.Capacity)
		}
		if br := exhausted(t, s, "breaker", "slow-b", "breaker:B"); br.Saturated && !(*pool.FirstSaturatedS < *br.FirstSaturatedS) {
			t.Errorf("pool full at %.2f s, breaker open at %.2f s; want the pool first", *pool.FirstSaturatedS, *br.FirstSaturatedS)
		}
	})
	t.Run("with the breaker alone A loses lookups the cap keeps", func(t *testing.T) {
		br, cp := stats(t, s, "breaker", "slow-b", "/a"), stats(t, s, "capped", "slow-b", "/a")
		if !(br.SuccessRate < cp.SuccessRate) {
			t.Errorf("/a success rate: breaker %.2f, capped %.2f; want breaker < capped", br.SuccessRate, cp.SuccessRate)
		}
	})
}

func TestOrdersScaledDown(t *testing.T) {
	testenv.Long(t, "runs the orders scenario for ~9 s")
	// Timeout 2 s instead of 5 s: the stall phase (2 s) still ends before the first stalled call
	// times out, and the deadline budget becomes 2 s (inventory2 1.8 s, shipping2 3.6 s).
	s := run(t, scaled(t, "orders", 2*time.Second, map[string]time.Duration{
		"baseline": 500 * time.Millisecond, "stall": 2 * time.Second, "recovery": 500 * time.Millisecond,
		"both-slow": 5 * time.Second, "after": 200 * time.Millisecond}))

	t.Run("the workers fill before the queue, and the queue fills", func(t *testing.T) {
		pool := exhausted(t, s, "bulkheads", "stall", "pool:inventory")
		queue := exhausted(t, s, "bulkheads", "stall", "queue:inventory")
		if !pool.Saturated || !queue.Saturated {
			t.Fatalf("pool saturated %t, queue saturated %t; want both", pool.Saturated, queue.Saturated)
		}
		if !(*pool.FirstSaturatedS < *queue.FirstSaturatedS) {
			t.Errorf("workers full at %.2f s, queue at %.2f s; want the workers first", *pool.FirstSaturatedS, *queue.FirstSaturatedS)
		}
	})
	t.Run("orders are rejected once the workers are full, shipping is not", func(t *testing.T) {
		order, ship := stats(t, s, "bulkheads", "stall", "/order"), stats(t, s, "bulkheads", "stall", "/ship")
		pool := exhausted(t, s, "bulkheads", "stall", "pool:inventory")
		if order.FirstRejectionS == nil || !(*order.FirstRejectionS > *pool.FirstSaturatedS) {
			t.Errorf("first rejected order at %v s, workers full at %.2f s; want rejections, after", order.FirstRejectionS, *pool.FirstSaturatedS)
		}
		if ship.Errors.Rejected != 0 || !(ship.SuccessRate > order.SuccessRate) {
			t.Errorf("/ship: %d rejected, success %.2f vs /order %.2f; want none rejected and better", ship.Errors.Rejected, ship.SuccessRate, order.SuccessRate)
		}
	})
	t.Run("per-call budgets let the caller wait longer than one shared deadline", func(t *testing.T) {
		per, shared := stats(t, s, "bulkheads", "both-slow", "/order-percall"), stats(t, s, "bulkheads", "both-slow", "/order-shared")
		if !(per.MaxMS > shared.MaxMS) || !(per.P99MS > shared.P99MS) {
			t.Errorf("per-call max %.0f ms p99 %.0f ms, shared max %.0f ms p99 %.0f ms; want per-call above shared",
				per.MaxMS, per.P99MS, shared.MaxMS, shared.P99MS)
		}
	})
}

// 1 s of baseline, a 1 s burst at 15x, 6 s to drain (at full speed it drains in about 3 s; the
// margin is for -race on a busy 2-core machine). The directions, read from the run's files:
// every webhook acknowledged, A served as in its baseline with the inbound bulkhead and worse with
// webhooks in the lookups' pool, the backlog built and drained, and nothing given up.
func TestWebhooksScaledDown(t *testing.T) {
	testenv.Long(t, "runs the webhooks scenario for ~12 s")
	s := run(t, scaled(t, "webhooks", 0, map[string]time.Duration{
		"baseline": time.Second, "burst": time.Second, "drain": 6 * time.Second}))

	t.Run("every webhook of the burst is acknowledged", func(t *testing.T) {
		for _, conf := range []string{"shared", "capped"} {
			if st := stats(t, s, conf, "burst", "/webhooks/c"); st.SuccessRate != 1 {
				t.Errorf("%s: %.3f of the burst acknowledged, want all", conf, st.SuccessRate)
			}
		}
	})
	t.Run("A keeps its baseline with the inbound bulkhead, and loses lookups without it", func(t *testing.T) {
		base, capped := stats(t, s, "capped", "baseline", "/a"), stats(t, s, "capped", "burst", "/a")
		shared := stats(t, s, "shared", "burst", "/a")
		if capped.SuccessRate < base.SuccessRate {
			t.Errorf("/a with the inbound bulkhead: %.2f in the burst, %.2f in the baseline", capped.SuccessRate, base.SuccessRate)
		}
		if !(shared.SuccessRate < capped.SuccessRate) {
			t.Errorf("/a in the burst: shared %.2f, capped %.2f; want shared < capped", shared.SuccessRate, capped.SuccessRate)
		}
	})
	t.Run("the backlog built, drained, and nothing was given up", func(t *testing.T) {
		if e := exhausted(t, s, "capped", "burst", "inbound:/webhooks/c"); e.MaxInUse < 20 {
			t.Errorf("backlog peaked at %v, want the burst to outrun two slots", e.MaxInUse)
		}
		if d := claim(t, s, "capped-drained").Left; d == nil {
			t.Errorf("the backlog never drained, want it empty within the run")
		} else if d.Value >= 7 {
			t.Errorf("drained %.2f s after the burst began, want within the run (7 s)", d.Value)
		}
		for _, id := range []string{"capped-none-given-up", "shared-none-given-up"} {
			if g := claim(t, s, id).Left; g == nil || g.Value != 0 {
				t.Errorf("%s: %v given up, want 0", id, g)
			}
		}
	})
}
