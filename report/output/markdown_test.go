package output

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// The question section says what the report answers: the scenario's claims when it has them,
// and otherwise that it shows measurements only; it never guesses predictions of its own.
func TestQuestion(t *testing.T) {
	claims := model.VerdictBlock{Claims: []model.Claim{{ID: "C1", Says: "A and C fail with the shared pool"}}}
	tests := []struct {
		name    string
		s       model.Summary
		want    []string
		notWant []string
	}{
		{"claims are the question",
			model.Summary{Description: "Seed 000.", Verdict: claims},
			[]string{"Seed 000.\n\n", "they are the question", "- **C1**: A and C fail with the shared pool"},
			[]string{"measurements only"}},
		{"no claims: measurements only, whatever the roles",
			model.Summary{Description: "Smoke.", Roles: model.Roles{Shared: "shared", Affected: []string{"/a"}}},
			[]string{"Smoke.", "states no claims: the report shows the measurements only"},
			[]string{"P1", "predictions"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := question(&tt.s)
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
		{"all successes", rate1(&model.Stats{Requests: 10, Successes: 10, SuccessRate: 1}), "100.0%"},
		{"one failure in 5000", rate1(&model.Stats{Requests: 5000, Successes: 4999, SuccessRate: 0.9998}), ">99.9%"},
		{"one success in 5000", rate1(&model.Stats{Requests: 5000, Successes: 1, SuccessRate: 0.0002}), "<0.1%"},
		{"half", rate1(&model.Stats{Requests: 10, Successes: 5, SuccessRate: 0.5}), "50.0%"},
		{"no requests", rate1(&model.Stats{}), "–"},
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
			var cs []model.Configuration
			for i, s := range tt.steals {
				cs = append(cs, model.Configuration{Name: fmt.Sprintf("c%d", i), MachineSteal: s})
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
			var cs []model.Configuration
			for _, l := range tt.loads {
				cs = append(cs, model.Configuration{Load: l})
			}
			got := loadText(cs)
			if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
				t.Errorf("loadText = %q; want %q", got, tt.want)
			}
		})
	}
}

// The report states each configuration's slots in all, so two layouts compared at "P slots"
// can be seen to hold the same (issue 22); a pool of unknown size makes the total unknown.
func TestSlotsLine(t *testing.T) {
	pools := func(sizes ...int) []model.PoolInfo {
		var out []model.PoolInfo
		for _, n := range sizes {
			out = append(out, model.PoolInfo{Size: n})
		}
		return out
	}
	confs := []*model.Configuration{
		{Config: "shared", Pools: pools(12)},
		{Config: "split", Pools: pools(6, 6, 6)},
		{Config: "none"},
		{Config: "target", Pools: pools(5, 0)},
		{Config: "many", Pools: pools(1, 1, 1, 1, 1)},
	}
	want := "Slots in all: shared 12; split 18 (6 + 6 + 6); target unknown (a pool of unknown size); many 5."
	if got := slotsLine(confs); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := slotsLine([]*model.Configuration{{Config: "none"}}); got != "" {
		t.Errorf("no pools: got %q, want nothing", got)
	}
}
