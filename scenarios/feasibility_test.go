package scenarios

import (
	"strings"
	"testing"
)

// The feasibility check reads the engine's rules on the plan: the hypothesis at full length can
// bound every figure its claims use; at half length its p99s and one-repetition runs cannot.
func TestFeasibility(t *testing.T) {
	sc, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	if bad := sc.Infeasible(); len(bad) > 0 {
		t.Errorf("the full hypothesis cannot bound: %v", bad)
	}
	if n := len(sc.Feasibility()); n < 40 {
		t.Errorf("%d figures checked, want every figure of the 11 claims and their preconditions", n)
	}
	for _, tt := range []struct {
		name  string
		over  Overrides
		wants []string
	}{
		{"a fifth of the length: a p99 compared with another figure rests on 5 x 120 requests", Overrides{Scale: 0.2},
			[]string{"P4-p99-gap: p99_ms of /b in shared/errors needs >= 1472 requests over the repetitions for an upper end (correlated seconds count for fewer), the plan gives 600 (50/s x 2.4s x 5; lengthen errors, raise the rate or add repetitions)"}},
		{"a twentieth: a p99 held to a number (the baseline's health) rests on 5 x 30 requests", Overrides{Scale: 0.05},
			[]string{"p99_ms of /b in split/baseline held to a number needs >= 381 requests over the repetitions (a share of 0.99 at the number), the plan gives 150 (50/s x 600ms x 5; lengthen baseline, raise the rate or add repetitions)"}},
		{"one repetition: comparisons of configurations need a noise floor", Overrides{Repetitions: 1},
			[]string{"P3-cost: (throughput of /a in split/busy over throughput of /a in shared/busy) compares configurations on one repetition with no noise_floor for throughput"}},
		{"one repetition of phases scaled to a thirtieth: a 1 s latency phase", Overrides{Repetitions: 1, Scale: 1.0 / 30},
			[]string{"P2-b-fast: p99_ms of /b in split/latency needs >= 6 one-second blocks with one repetition, the phase has 1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := Open("hypothesis")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := o.Override(tt.over); err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, f := range o.Infeasible() {
				lines = append(lines, f.String())
			}
			all := strings.Join(lines, "\n")
			for _, w := range tt.wants {
				if !strings.Contains(all, w) {
					t.Errorf("infeasible:\n%s\nwant a line containing %q", all, w)
				}
			}
		})
	}
	t.Run("a rate held to 99% on 150 requests", func(t *testing.T) {
		s, err := hypothesisWith(t, "tests: []", "  - id: keeps\n    says: keeps\n    measure: {metric: success_rate, configuration: split, phase: calm, endpoint: /b}\n    op: \">=\"\n    value: 0.99\n")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Override(Overrides{Repetitions: 1}); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, f := range s.Infeasible() {
			if f.Claim == "keeps" {
				lines = append(lines, f.String())
			}
		}
		if all := strings.Join(lines, "\n"); !strings.Contains(all, "keeps: success_rate of /b in split/calm >= 0.99 needs >= 381 requests even if every one counts, the plan gives 150") ||
			!strings.Contains(all, "needs >= 6 one-second blocks with one repetition, the phase has 3") {
			t.Errorf("infeasible:\n%s", all)
		}
	})
}
