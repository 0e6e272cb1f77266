package scenarios

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/confidence"
)

// Feasibility says, before anything runs, whether the planned requests can bound one figure
// a claim uses: the same rules the verdict engine applies after the run (package confidence),
// read on the plan. A claim whose figure cannot be bounded can only come out inconclusive.
type Feasibility struct {
	// Claim is the claim's id; Figure the figure in words (claim.Measure.String).
	Claim  string `json:"claim"`
	Figure string `json:"figure"`
	// OK is false when the plan cannot bound the figure; Why says what it needs and what the
	// plan gives.
	OK  bool   `json:"ok"`
	Why string `json:"why,omitempty"`
}

// blockWidth is the width of the blocks the report cuts a phase into (report/model's
// DefaultBucket): the planned phase has its duration over it blocks.
const blockWidth = time.Second

// Feasibility checks every figure of every claim (its own and its preconditions') against the
// planned run, as s stands (after command-line overrides, so --scale and --rate count):
//
//   - a quantile q compared with another figure needs confidence.QuantileNeeds(q) requests over
//     the repetitions before its upper end is bounded in practice (a p99: 368 effective
//     requests, and the engine reads a design effect from the blocks that makes 1,472 the count
//     that is safe); one held to a number is decided through the share of values at the number,
//     which needs n/(n+1.96²) >= q (a p99: 381); successes can only be fewer than the requests
//     planned;
//   - with one repetition a figure of requests needs at least confidence.MinBlocks 1 s blocks,
//     and a maximum has no interval at all;
//   - a rate held to a bound near 0 or 1 needs enough requests that even the best outcome clears
//     it: n/(n+1.96²) >= c for "success_rate >= c" (0.99 needs 381);
//   - with one repetition a comparison between configurations needs a noise floor for its
//     metric (noise_floor:).
//
// It returns one entry per figure checked, the infeasible ones with their reason.
func (s *Scenario) Feasibility() []Feasibility {
	var out []Feasibility
	reps := max(s.Repetitions, 1)
	for _, c := range s.Claims {
		seen := map[string]bool{}
		for _, cd := range append([]claim.Condition{c.Condition}, c.Require...) {
			var ms []claim.Measure
			for _, m := range []*claim.Measure{&cd.Measure, cd.Than} {
				if m != nil {
					ms = append(ms, m.Base())
					if o := m.Other(); o != nil {
						ms = append(ms, *o)
					}
				}
			}
			for _, m := range ms {
				key := m.String()
				if seen[key] {
					continue
				}
				seen[key] = true
				f := Feasibility{Claim: c.ID, Figure: key, OK: true}
				atNumber := cd.Value != nil && cd.Than == nil && cd.Measure.Other() == nil
				if why := s.figureFeasible(m, reps, atNumber); why != "" {
					f.OK, f.Why = false, why
				}
				out = append(out, f)
			}
			if cd.Value != nil && cd.Measure.Other() == nil {
				if why := s.boundFeasible(cd, reps); why != "" {
					out = append(out, Feasibility{Claim: c.ID, Figure: cd.Measure.String(), Why: why})
				}
			}
			if why := s.comparisonFeasible(cd, reps); why != "" {
				out = append(out, Feasibility{Claim: c.ID, Figure: cd.Measure.String(), Why: why})
			}
		}
	}
	return out
}

// Infeasible returns the entries of Feasibility that cannot be bounded.
func (s *Scenario) Infeasible() []Feasibility {
	var out []Feasibility
	for _, f := range s.Feasibility() {
		if !f.OK {
			out = append(out, f)
		}
	}
	return out
}

// String writes f as the terminal prints it: "P2-b-fast: p99_ms of /b in split/baseline needs
// >= 1472 requests over the repetitions for an upper end (...), the plan gives 500 (...)".
func (f Feasibility) String() string {
	if f.OK {
		return f.Claim + ": " + f.Figure + ": can be bounded"
	}
	return f.Claim + ": " + f.Why
}

// plannedRequests returns the requests endpoint ep is planned to send in phase, per repetition,
// and the phase's duration.
func (s *Scenario) plannedRequests(ep, phase string) (float64, time.Duration, bool) {
	i := slices.IndexFunc(s.Phases, func(p Phase) bool { return p.Name == phase })
	j := slices.IndexFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == ep })
	if i < 0 || j < 0 {
		return 0, 0, false
	}
	rate := s.Endpoints[j].Rate
	if r, ok := s.Phases[i].Rates[ep]; ok {
		rate = r
	}
	return rate * s.Phases[i].Duration.Seconds(), s.Phases[i].Duration, true
}

// quantileOf returns the quantile a latency metric reads, 0 for any other metric.
var quantileOf = map[string]float64{"p50_ms": 0.5, "p90_ms": 0.9, "p95_ms": 0.95, "p99_ms": 0.99, "p999_ms": 0.999}

// figureFeasible checks one figure; atNumber says it is a lone figure held to a number, which
// the engine decides for a quantile through the share of values at the number (a rate).
func (s *Scenario) figureFeasible(m claim.Measure, reps int, atNumber bool) string {
	entry, ok := claim.MetricOf(m)
	if !ok || entry.Subject != claim.OfEndpoint || entry.Interval == claim.IntervalPoint {
		return ""
	}
	n, d, ok := s.plannedRequests(m.Endpoint, m.Phase)
	if !ok {
		return ""
	}
	blocks := int(math.Ceil(d.Seconds() / blockWidth.Seconds()))
	switch {
	case reps == 1 && entry.Interval == claim.IntervalMaximum:
		return fmt.Sprintf("%s is a maximum: one repetition gives it no interval (run 2 or more repetitions)", m)
	case reps == 1 && blocks < confidence.MinBlocks:
		return fmt.Sprintf("%s needs >= %d one-second blocks with one repetition, the phase has %d (lengthen %s or run 2 or more repetitions)",
			m, confidence.MinBlocks, blocks, m.Phase)
	}
	name := entry.Canonical()
	for _, prefix := range []string{"failure_", "rejected_"} {
		if len(name) > len(prefix) && name[:len(prefix)] == prefix {
			name = name[len(prefix):]
		}
	}
	if q, ok := quantileOf[name]; ok && atNumber {
		// "p99 <= c" holds when the share of values <= c is at least q by its interval: even if
		// every value is under c, Wilson's lower end n/(n+1.96²) must reach q.
		z2 := math.Pow(confidence.Critical(math.Inf(1)), 2)
		if need, total := math.Ceil(z2*q/(1-q)), n*float64(reps); total < need {
			return fmt.Sprintf("%s held to a number needs >= %.0f requests over the repetitions (a share of %s at the number), the plan gives %.0f (%s/s x %s x %d; lengthen %s, raise the rate or add repetitions)",
				m, need, num(q), total, num(n/d.Seconds()), d, reps, m.Phase)
		}
	} else if ok {
		if need, total := confidence.QuantileNeeds(q), n*float64(reps); total < need {
			return fmt.Sprintf("%s needs >= %.0f requests over the repetitions for an upper end (correlated seconds count for fewer), the plan gives %.0f (%s/s x %s x %d; lengthen %s, raise the rate or add repetitions)",
				m, need, total, num(n/d.Seconds()), d, reps, m.Phase)
		}
	}
	return ""
}

// boundFeasible checks a lone rate held to a number: can even the best outcome clear it?
func (s *Scenario) boundFeasible(c claim.Condition, reps int) string {
	entry, ok := claim.MetricOf(c.Measure)
	if !ok || entry.Interval != claim.IntervalRate || entry.Canonical() == "rejected_share" || entry.Canonical() == "attributed_share" {
		return "" // a share of failures has no planned denominator
	}
	n, _, ok := s.plannedRequests(c.Measure.Endpoint, c.Measure.Phase)
	if !ok {
		return ""
	}
	n *= float64(reps)
	bound := *c.Value*factorOf(c) + c.Plus
	z2 := math.Pow(confidence.Critical(math.Inf(1)), 2)
	var best float64 // the bound even the best outcome reaches
	switch c.Op {
	case claim.OpGreaterEq, claim.OpGreater:
		best = n / (n + z2) // every request on the rate's side: Wilson's lower end
		if best < bound || (c.Op == claim.OpGreater && best == bound) {
			return fmt.Sprintf("%s %s %s needs >= %.0f requests even if every one counts, the plan gives %.0f", c.Measure, c.Op, num(bound), math.Ceil(z2*bound/(1-bound)), n)
		}
	case claim.OpLessEq, claim.OpLess:
		best = z2 / (n + z2)
		if best > bound {
			return fmt.Sprintf("%s %s %s needs >= %.0f requests even if none counts, the plan gives %.0f", c.Measure, c.Op, num(bound), math.Ceil(z2*(1-bound)/bound), n)
		}
	}
	return ""
}

// comparisonFeasible checks a comparison between configurations on one repetition: it needs a
// noise floor for each metric it compares.
func (s *Scenario) comparisonFeasible(c claim.Condition, reps int) string {
	if reps > 1 {
		return ""
	}
	configs := map[string]bool{}
	var metrics []string
	for _, m := range []*claim.Measure{&c.Measure, c.Than} {
		if m == nil {
			continue
		}
		for _, x := range []*claim.Measure{m, m.Other()} {
			if x != nil {
				configs[x.Configuration] = true
				metrics = append(metrics, x.Metric)
			}
		}
	}
	if len(configs) < 2 {
		return ""
	}
	for _, name := range metrics {
		if _, ok := s.NoiseFloor[name]; !ok {
			return fmt.Sprintf("%s compares configurations on one repetition with no noise_floor for %s: it can only be inconclusive (run 2 or more repetitions or declare the floor)", c.Measure, name)
		}
	}
	return ""
}

func factorOf(c claim.Condition) float64 {
	if c.Factor == 0 {
		return 1
	}
	return c.Factor
}

func num(v float64) string { return fmt.Sprintf("%g", math.Round(v*1000)/1000) }
