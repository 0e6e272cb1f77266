package output

import (
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

func fp(v float64) *float64 { return &v }

func iv(v, lo, hi float64) *model.Interval { return &model.Interval{Value: v, Lo: fp(lo), Hi: fp(hi)} }

// A claim line says what the claim says and, below it, the rule with its constants and the
// figures measured; the difference that decided when it did not hold; the reason when nothing
// could be measured.
func TestEvidence(t *testing.T) {
	tests := []struct {
		name string
		c    model.Claim
		want string
	}{
		{"a constant bound shows the constant",
			model.Claim{ConditionResult: model.ConditionResult{Rule: "p99_ms of /b in split/latency < 50", Verdict: model.VerdictHolds,
				Left: iv(7.5, 6.9, 8.1), Right: iv(50, 50, 50), Difference: iv(-42.5, -43.1, -41.9)}},
			"rule: p99_ms of /b in split/latency < 50 · measured 7.5 [6.9, 8.1]"},
		{"a comparison with another figure shows both, and the difference when it did not hold",
			model.Claim{ConditionResult: model.ConditionResult{Rule: "error_rate of /b in shared/latency >= 0.5 x error_rate of /a in shared/latency",
				Verdict: model.VerdictInconclusive, Left: iv(0.3, 0.2, 0.4), Right: iv(0.31, 0.28, 0.35), Difference: iv(-0.01, -0.12, 0.1)}},
			"rule: error_rate of /b in shared/latency >= 0.5 x error_rate of /a in shared/latency · measured 0.3 [0.2, 0.4] vs 0.31 [0.28, 0.35] · left - right -0.01 [-0.12, 0.1]"},
		{"not measurable gives the reason",
			model.Claim{ConditionResult: model.ConditionResult{Rule: "first_rejection_s of /b in split/latency < 1", Verdict: model.VerdictNotMeasurable,
				Reason: "first_rejection_s of /b in split/latency: no request was rejected in split"}},
			"rule: first_rejection_s of /b in split/latency < 1 · first_rejection_s of /b in split/latency: no request was rejected in split"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := evidence(tt.c); got != tt.want {
				t.Errorf("evidence\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// The terminal lines end with the answer: the headline, then the verdict line.
func TestLinesEndWithTheAnswer(t *testing.T) {
	s := &model.Summary{Valid: true,
		Verdict: model.VerdictBlock{Outcome: model.OutcomePass, Counts: map[string]int{model.VerdictHolds: 1}, Claims: []model.Claim{{ID: "P2-b-fast",
			Says: "P2: split pools, A stalls:\n/b's p99 stays under 50 ms", ConditionResult: model.ConditionResult{Rule: "p99_ms of /b in split/latency < 50",
				Verdict: model.VerdictHolds, Left: iv(7.5, 6.9, 8.1), Right: iv(50, 50, 50), Difference: iv(-42.5, -43.1, -41.9)}}}},
		Headline: []model.Headline{{Phase: "latency", Fault: "A +450ms", Endpoint: "/b", Layouts: []model.HeadlineLayout{
			{Configuration: "shared", SuccessRate: iv(0.392, 0.351, 0.43), SuccessP99MS: &model.Interval{Value: 492, Lo: fp(470)}},
			{Configuration: "split", SuccessRate: iv(0.9999, 0.998, 1), SuccessP99MS: iv(7.5, 6.9, 8.1)},
		}}},
	}
	want := `claim P2-b-fast holds: P2: split pools, A stalls: /b's p99 stays under 50 ms
  rule: p99_ms of /b in split/latency < 50 · measured 7.5 [6.9, 8.1]

answer: /b's success rate and p99 of successes per fault phase and layout (95% intervals)
  latency (A +450ms)  shared  39.2% [35.1, 43.0]    p99 492 ms [470, ∞]
                      split   >99.9% [99.8, 100.0]  p99 7.5 ms [6.9, 8.1]
verdict: pass (1 holds)
`
	if got := Lines(s); got != want {
		t.Errorf("Lines\n got:\n%s\nwant:\n%s", got, want)
	}
	if got := Lines(&model.Summary{Valid: true}); strings.Contains(got, "answer") || strings.Contains(got, "verdict") {
		t.Errorf("a run without faults or claims: %q, want no answer and no verdict line", got)
	}
}
