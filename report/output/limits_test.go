package output

import (
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// The adaptive limits section lists, per configuration, the phases in which a limit moved with
// one value per repetition, says "still moving" for a limit that had not settled, and leaves out
// what did not move; without adaptive pools there is no section.
func TestLimitsSection(t *testing.T) {
	settle := func(s float64) *float64 { return &s }
	rep := func(name string, second *float64) model.Configuration {
		return model.Configuration{Name: name, Config: "adaptive", Phases: []model.Phase{
			{Name: "baseline"},
			{Name: "latency", Limits: []model.LimitFigure{
				{Resource: "pool:A", Before: 10, Min: 8, Max: 10, Final: 9.9, Band: 1, SettleS: second},
				{Resource: "pool:B", Before: 10, Min: 10, Max: 10, Final: 10, Band: 1, SettleS: settle(0)},
			}},
		}}
	}
	s := &model.Summary{Configurations: []model.Configuration{rep("adaptive-r1", settle(8.4)), rep("adaptive-r2", nil)}}
	got := limitsSection(s)
	for _, want := range []string{"## Adaptive limits", "**adaptive**", "| A | latency (faults off) | 10, 10 | 8–10, 8–10 | 9.9, 9.9 | 8.4, still moving |"} {
		if !strings.Contains(got, want) {
			t.Errorf("section:\n%s\nwant %q", got, want)
		}
	}
	if strings.Contains(got, "| B |") {
		t.Errorf("section lists pool B, whose limit never moved:\n%s", got)
	}
	if got := limitsSection(&model.Summary{Configurations: []model.Configuration{{Name: "split", Config: "split"}}}); got != "" {
		t.Errorf("without adaptive pools: %q, want no section", got)
	}
}
