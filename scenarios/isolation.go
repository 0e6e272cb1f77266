package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
)

// The isolation test is seed 004's: per-dependency bulkheads keep an endpoint that never calls a
// stalled dependency available, where one shared pool starves it. From the scenario's roles
// (shared and split configurations, the fault dependency, the affected and unaffected endpoints,
// the baseline, latency and error phases, and the normal-load phases) it derives P1-P4 with
// their preconditions, so that a scenario against any target states the test in one line:
//
//	tests: [isolation]
//
// P1 (shared pool, the dependency stalls: the unaffected endpoint degrades to the affected
// one's level within a few timeouts) rests on the unaffected endpoint's healthy baseline (its
// success rate and its p99), on the stall having hurt the affected endpoint, and on the
// mechanism: the unaffected endpoint's failures in the stall must be the shared pool's (the
// report's attribution blames them on it), not its own dependency's. P2 (split pools: the
// unaffected endpoint stays at its baseline; the affected one is rejected fast) rests on the
// same baseline under split. P3 (the cost of isolation under normal load) is measured in the
// normal-load phase with a fault and rests on the shared pool serving it in full. P4 (a
// dependency that fails fast makes the layouts differ less than one that stalls) rests on the
// larger difference being real and on the dependency having failed fast in the error phase.
func init() {
	registerTest(testKind{
		name:   "isolation",
		doc:    "seed 004's test: P1-P4 of per-dependency bulkheads against one shared pool, derived from roles",
		params: isolationParams,
		derive: deriveIsolation,
	})
}

var isolationParams = []TestParam{
	{"level_factor", 0.5, "P1: the unaffected endpoint's error rate and p99 reach at least this share of the affected endpoint's"},
	{"within_timeouts", 5, "P1: ... within this many client timeouts of the stall"},
	{"cost", 0.05, "P3: the smallest cost of isolation that counts: split's throughput of the affected endpoint under normal load at most 1 - cost of shared's"},
	{"p4_factor", 0.5, "P4: the layouts' gap when the dependency fails fast is less than this share of the gap when it stalls"},
	{"baseline_success", 0.99, "preconditions: the unaffected endpoint's baseline success rate (and the shared pool's under normal load) is at least this"},
	{"fast", 0.1, "preconditions and P2: 'fast' is a p99 under this share of the client timeout (the baseline's health, fast rejections, a fast failure)"},
	{"hurt", 0.1, "preconditions: the stall (and the fast failure) raised the affected endpoint's error rate by more than this over its baseline"},
	{"mechanism", 0.5, "P1 precondition: at least this share of the unaffected endpoint's failures in the stall are blamed on the shared pool"},
	{"served", 0.01, "P2: the unaffected endpoint's success rate under split stays within this of its baseline"},
	{"p90_factor", 1.5, "P2: the unaffected endpoint's p90 under split stays within this factor of its baseline"},
	{"rejected_share", 0.5, "P2: more than this share of the affected endpoint's failures under split are rejections"},
}

func deriveIsolation(s *Scenario, p map[string]float64, prob *problems, path string) []claim.Claim {
	r := s.Roles
	var missing []string
	for _, need := range []struct{ key, v string }{
		{"shared", r.Shared}, {"split", r.Split}, {"fault_dependency", r.FaultDependency}, {"affected", r.Affected},
		{"unaffected", r.Unaffected}, {"baseline", r.Baseline}, {"latency_phase", r.LatencyPhase},
	} {
		if need.v == "" {
			missing = append(missing, "roles."+need.key)
		}
	}
	busy := normalLoadPhase(s) // P3 only with one, P4 only with an error phase
	pool := sharedPool(s)
	if pool == "" && r.Shared != "" {
		missing = append(missing, fmt.Sprintf("a pool of configuration %q holding %s and the unaffected endpoint's dependencies (the shared resource P1 blames)", r.Shared, r.FaultDependency))
	}
	if len(missing) > 0 {
		prob.add(path, "test isolation needs %s", strings.Join(missing, ", "))
		return nil
	}
	timeoutMS := float64(s.Timeout.Microseconds()) / 1e3
	fastMS := p["fast"] * timeoutMS
	a, b := r.Affected, r.Unaffected
	m := func(metric, config, phase, ep string) claim.Measure {
		return claim.Measure{Metric: metric, Configuration: config, Phase: phase, Endpoint: ep}
	}
	v := func(x float64) *float64 { return &x }
	cond := func(ms claim.Measure, op string, x float64) claim.Condition {
		return claim.Condition{Measure: ms, Op: op, Value: v(x)}
	}
	than := func(ms claim.Measure, op string, t claim.Measure, factor float64) claim.Condition {
		return claim.Condition{Measure: ms, Op: op, Than: &t, Factor: factor}
	}
	minus := func(ms claim.Measure, o claim.Measure) claim.Measure { ms.Minus = &o; return ms }
	over := func(ms claim.Measure, o claim.Measure) claim.Measure { ms.Over = &o; return ms }
	num := func(x float64) string { return fmt.Sprintf("%g", x) }
	pct := func(x float64) string { return fmt.Sprintf("%g%%", 100*x) }
	fast := fmt.Sprintf("%s ms (%sx the timeout)", num(fastMS), num(p["fast"]))

	healthy := func(config string) []claim.Condition {
		return []claim.Condition{
			cond(m("success_rate", config, r.Baseline, b), claim.OpGreaterEq, p["baseline_success"]),
			cond(m("p99_ms", config, r.Baseline, b), claim.OpLessEq, fastMS),
		}
	}
	hurt := func(phase string) claim.Condition {
		return cond(minus(m("error_rate", r.Shared, phase, a), claim.Measure{Phase: r.Baseline}), claim.OpGreater, p["hurt"])
	}
	blamed := m("attributed_share", r.Shared, r.LatencyPhase, b)
	blamed.Resource = "pool:" + pool
	p1 := append(healthy(r.Shared), hurt(r.LatencyPhase), cond(blamed, claim.OpGreaterEq, p["mechanism"]))
	p2 := healthy(r.Split)
	gap := func(metric, phase string) claim.Measure {
		return minus(m(metric, r.Split, phase, b), claim.Measure{Configuration: r.Shared})
	}
	penalty := func(phase string) claim.Measure {
		return over(m("p99_ms", r.Shared, phase, b), claim.Measure{Configuration: r.Split})
	}
	failedFast := []claim.Condition{
		hurt(r.ErrorPhase),
		cond(m("failure_p99_ms", r.Shared, r.ErrorPhase, a), claim.OpLessEq, fastMS),
	}
	within := p["within_timeouts"] * s.Timeout.Seconds()
	level := m("time_to_level_s", r.Shared, r.LatencyPhase, b)
	level.LevelOf = a
	lf := p["level_factor"]
	c := func(id, says string, require []claim.Condition, cd claim.Condition) claim.Claim {
		return claim.Claim{ID: id, Says: says, Require: slices.Clone(require), Condition: cd}
	}
	claims := []claim.Claim{
		c("P1-error-level", fmt.Sprintf("P1: shared pool, %s stalls: %s's error rate rises to at least %s of %s's", r.FaultDependency, b, num(lf), a),
			p1, than(m("error_rate", r.Shared, r.LatencyPhase, b), claim.OpGreaterEq, m("error_rate", r.Shared, r.LatencyPhase, a), lf)),
		c("P1-p99-level", fmt.Sprintf("P1: shared pool, %s stalls: %s's p99 of successes rises to at least %s of %s's", r.FaultDependency, b, num(lf), a),
			p1, than(m("p99_ms", r.Shared, r.LatencyPhase, b), claim.OpGreaterEq, m("p99_ms", r.Shared, r.LatencyPhase, a), lf)),
		c(fmt.Sprintf("P1-within-%s-timeouts", num(p["within_timeouts"])),
			fmt.Sprintf("P1: %s gets there within %s timeout periods (%s s) of %s stalling; never getting there within the phase does not hold", b, num(p["within_timeouts"]), num(within), r.FaultDependency),
			p1, cond(level, claim.OpLessEq, within)),
		c("P2-b-served", fmt.Sprintf("P2: split pools, %s stalls: %s's success rate stays within %s of its baseline", r.FaultDependency, b, pct(p["served"])),
			p2, cond(minus(m("success_rate", r.Split, r.LatencyPhase, b), claim.Measure{Phase: r.Baseline}), claim.OpGreaterEq, -p["served"])),
		c("P2-b-fast", fmt.Sprintf("P2: split pools, %s stalls: %s's p99 of successes stays under %s, as at its baseline; starved, it would wait a timeout", r.FaultDependency, b, fast),
			p2, cond(m("p99_ms", r.Split, r.LatencyPhase, b), claim.OpLess, fastMS)),
		c("P2-b-p90", fmt.Sprintf("P2: split pools, %s stalls: %s's p90 of successes stays within %sx its baseline p90", r.FaultDependency, b, num(p["p90_factor"])),
			p2, than(m("p90_ms", r.Split, r.LatencyPhase, b), claim.OpLessEq, m("p90_ms", r.Split, r.Baseline, b), p["p90_factor"])),
		c("P2-a-rejected", fmt.Sprintf("P2: split pools, %s stalls: more than %s of %s's failures are rejections, not timeouts", r.FaultDependency, pct(p["rejected_share"]), a),
			nil, cond(m("rejected_share", r.Split, r.LatencyPhase, a), claim.OpGreater, p["rejected_share"])),
		c("P2-a-rejected-fast", fmt.Sprintf("P2: ... and they are fast: their p99 is under %s", fast),
			nil, cond(m("rejected_p99_ms", r.Split, r.LatencyPhase, a), claim.OpLess, fastMS)),
	}
	if busy != "" {
		claims = append(claims, claim.Claim{ID: "P3-cost", Says: fmt.Sprintf("P3: under normal load (%s merely busy) %s's success throughput is at least %s lower with split pools", r.FaultDependency, a, pct(p["cost"])),
			NormalLoad: true,
			Require:    []claim.Condition{cond(m("success_rate", r.Shared, busy, a), claim.OpGreaterEq, p["baseline_success"])},
			Condition:  cond(over(m("throughput", r.Split, busy, a), claim.Measure{Configuration: r.Shared}), claim.OpLess, 1-p["cost"])})
	}
	if r.ErrorPhase != "" {
		claims = append(claims,
			c("P4-success-gap", fmt.Sprintf("P4: split's advantage in %s's success rate when %s fails fast is less than %s of that when it stalls", b, r.FaultDependency, num(p["p4_factor"])),
				append([]claim.Condition{cond(gap("success_rate", r.LatencyPhase), claim.OpGreater, 0)}, failedFast...),
				than(gap("success_rate", r.ErrorPhase), claim.OpLess, gap("success_rate", r.LatencyPhase), p["p4_factor"])),
			c("P4-p99-gap", fmt.Sprintf("P4: shared's p99 penalty on %s (shared over split) when %s fails fast is less than %s of that when it stalls", b, r.FaultDependency, num(p["p4_factor"])),
				append([]claim.Condition{cond(penalty(r.LatencyPhase), claim.OpGreater, 1)}, failedFast...),
				than(penalty(r.ErrorPhase), claim.OpLess, penalty(r.LatencyPhase), p["p4_factor"])))
	}
	return claims
}

// normalLoadPhase returns the first phase of roles.normal_load with a fault on the fault
// dependency: where the cost of isolation shows (A merely busy), or "".
func normalLoadPhase(s *Scenario) string {
	for _, name := range s.Roles.NormalLoad {
		i := slices.IndexFunc(s.Phases, func(ph Phase) bool { return ph.Name == name })
		if i >= 0 && slices.ContainsFunc(s.Phases[i].Faults, func(f faults.Fault) bool { return f.Dependency == s.Roles.FaultDependency }) {
			return name
		}
	}
	return ""
}

// sharedPool returns the pool of the shared configuration that holds the fault dependency and
// every dependency of the unaffected endpoint: the resource P1 says is shared, or "". A target
// that states its layout (target.layout) is read by it; else the configuration's pools.
func sharedPool(s *Scenario) string {
	ci := slices.IndexFunc(s.Configurations, func(c Configuration) bool { return c.Name == s.Roles.Shared })
	ei := slices.IndexFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == s.Roles.Unaffected })
	if ci < 0 || ei < 0 {
		return ""
	}
	type pool struct {
		name string
		deps []string
	}
	var pools []pool
	if c := s.Configurations[ci]; c.Target != nil && c.Target.Layout != nil {
		for _, pl := range c.Target.Layout.Pools { // the layout a target states of itself
			pools = append(pools, pool{pl.Name, pl.Dependencies})
		}
	} else {
		for _, pl := range c.Pools {
			pools = append(pools, pool{pl.Name, pl.Dependencies})
		}
	}
	for _, pl := range pools {
		if slices.Contains(pl.deps, s.Roles.FaultDependency) &&
			!slices.ContainsFunc(s.Endpoints[ei].Calls, func(d string) bool { return !slices.Contains(pl.deps, d) }) {
			return pl.name
		}
	}
	return ""
}
