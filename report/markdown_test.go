package report

import (
	"fmt"
	"strings"
	"testing"
)

// The question section says what the report answers: the scenario's claims when it has them,
// and otherwise that it shows measurements only; it never guesses predictions of its own.
func TestQuestion(t *testing.T) {
	claims := VerdictBlock{Claims: []Claim{{ID: "C1", Says: "A and C fail with the shared pool"}}}
	tests := []struct {
		name    string
		s       Summary
		want    []string
		notWant []string
	}{
		{"claims are the question",
			Summary{Description: "Seed 000.", Verdict: claims},
			[]string{"Seed 000.\n\n", "they are the question", "- **C1**: A and C fail with the shared pool"},
			[]string{"measurements only"}},
		{"no claims: measurements only, whatever the roles",
			Summary{Description: "Smoke.", Roles: Roles{Shared: "shared", Affected: []string{"/a"}}},
			[]string{"Smoke.", "states no claims: the report shows the measurements only"},
			[]string{"P1", "predictions"}},
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

// The validity section says how much CPU the hypervisor took while the loads ran, from the
// manifests that record it, naming the configuration run that lost the most.
func TestStealText(t *testing.T) {
	share := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		steals []*float64
		want   string
	}{
		{"older folders", []*float64{nil, nil}, ""},
		{"none stolen", []*float64{share(0), share(0)}, "The hypervisor took no CPU time from the machine"},
		{"one measured", []*float64{nil, share(0.042)}, "took at most 4.2% of any one CPU's time while each load ran"},
		{"the same in each", []*float64{share(0.0021), share(0.0018)}, "took at most 0.2% of any one CPU's time while each load ran"},
		{"a range", []*float64{share(0.001), share(0.163), share(0.02)}, "took between 0.1% and 16.3% of any one CPU's time while each load ran (steal time, each manifest's `load.machine_steal`; most in c1)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs []Configuration
			for i, s := range tt.steals {
				cs = append(cs, Configuration{Name: fmt.Sprintf("c%d", i), MachineSteal: s})
			}
			got := stealText(cs)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("stealText = %q; want %q", got, tt.want)
			}
		})
	}
}

// The validity section says where the load generator ran when the manifests record it, and
// says nothing of it for folders from before.
func TestLoadText(t *testing.T) {
	tests := []struct {
		name  string
		loads []string
		want  string // substring; "" means no sentence
	}{
		{"older folder", []string{"", ""}, ""},
		{"in-process", []string{"inprocess", "inprocess"}, "inside the runner's process, beside"},
		{"child process", []string{"process", "process"}, "own child process (`bulkhead attack`"},
		{"mixed", []string{"process", "inprocess"}, "for some configuration runs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cs []Configuration
			for _, l := range tt.loads {
				cs = append(cs, Configuration{Load: l})
			}
			got := loadText(cs)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("loadText = %q; want %q", got, tt.want)
			}
		})
	}
}
