package report

import (
	"strings"
	"testing"
)

// The question section says what the report answers: the scenario's claims when it has them,
// seed 004's predictions only when the run has their parts, and otherwise that neither applies.
func TestQuestion(t *testing.T) {
	roles := Roles{Shared: "shared", Split: "split", LatencyPhase: "slow", FaultDependency: "A",
		Affected: []string{"/a"}, Unaffected: []string{"/b"}, Baseline: "baseline"}
	claims := []Claim{{ID: "C1", Says: "A and C fail with the shared pool"}}
	tests := []struct {
		name    string
		s       Summary
		want    []string
		notWant []string
	}{
		{"seed 004's question when its roles are found",
			Summary{Description: "Seed 004 in small.", Roles: roles},
			[]string{"Seed 004 in small.\n\n", "Does one shared pool let a dependency"},
			[]string{"claims"}},
		{"claims are the question; seed 004 as well when it applies",
			Summary{Description: "Seed 000.", Roles: roles, Claims: claims},
			[]string{"Seed 000.", "they are the question", "- **C1**: A and C fail with the shared pool", "Seed 004 asks: Does one"},
			nil},
		{"claims alone when the predictions have no parts",
			Summary{Description: "Seed 002.", Roles: Roles{Shared: "bulkheads"}, Claims: claims},
			[]string{"they are the question", "- **C1**"},
			[]string{"Seed 004", "Does one shared pool"}},
		{"neither: says why, and shows measurements only",
			Summary{Description: "A hub.", Roles: Roles{LatencyPhase: "slow", FaultDependency: "w", Affected: []string{"/w"}}},
			[]string{"A hub.", "seed 004's predictions do not apply (no pair of affected and unaffected endpoints; no shared or split configuration)", "measurements only"},
			[]string{"Does one shared pool"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.s.question()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("question lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("question has %q:\n%s", w, got)
				}
			}
		})
	}
}

// A success rate never reads as 100.0% when a request failed, nor 0.0% when one succeeded, and a
// latency over no requests is "–", not a measured 0.0.
func TestTableNumbers(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"all successes", rate1(&Stats{Requests: 10, Successes: 10, SuccessRate: 1}), "100.0%"},
		{"one failure in 5000", rate1(&Stats{Requests: 5000, Successes: 4999, SuccessRate: 0.9998}), ">99.9%"},
		{"one success in 5000", rate1(&Stats{Requests: 5000, Successes: 1, SuccessRate: 0.0002}), "<0.1%"},
		{"half", rate1(&Stats{Requests: 10, Successes: 5, SuccessRate: 0.5}), "50.0%"},
		{"no requests", rate1(&Stats{}), "–"},
		{"latency of no requests", f1n(0, 0), "–"},
		{"latency of some", f1n(12.34, 3), "12.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %q, want %q", tt.got, tt.want)
			}
		})
	}
}
