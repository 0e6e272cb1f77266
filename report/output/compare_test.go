package output

import (
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// lagRun is a run whose every endpoint's load generator kept the given send-lag p99s (ms).
func lagRun(id string, lags ...float64) Run {
	s := &model.Summary{RunID: id}
	for _, l := range lags {
		s.Configurations = append(s.Configurations, model.Configuration{Endpoints: []model.EndpointRun{{Path: "/b", LagP99MS: l}}})
	}
	return Run{S: s}
}

// Two runs whose load generators lagged by amounts far apart met the machine at different
// moments: compare.md says so, naming the busier run, and stays silent when the runs are alike or
// every lag is within the machine's own timer noise.
func TestMachineMoments(t *testing.T) {
	tests := []struct {
		name string
		runs []Run
		want string // "" for silence
	}{
		{"a busy run beside a quiet one", []Run{lagRun("r1", 0.4, 0.5), lagRun("r2", 8.5, 0.6)},
			"The machine was busier in run 2 than in run 1: its load generator's send lag reached 8.50 ms at p99 against 0.50 ms."},
		{"alike", []Run{lagRun("r1", 0.4), lagRun("r2", 0.9)}, ""},
		{"far apart but all under a millisecond", []Run{lagRun("r1", 0.1), lagRun("r2", 0.8)}, ""},
		{"busy alike", []Run{lagRun("r1", 5), lagRun("r2", 7)}, ""},
		{"one run", []Run{lagRun("r1", 9)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := machineMoments(tt.runs)
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("machineMoments:\n got %q\nwant prefix %q", got, tt.want)
			}
		})
	}
	md := compareMarkdown([]Run{lagRun("r1", 0.5), lagRun("r2", 8.5)}, nil)
	if !strings.Contains(md, "| run 2 | r2 |") || !strings.Contains(md, "| 8.50 |") || !strings.Contains(md, "busier in run 2") {
		t.Errorf("compare.md does not show each run's send lag and the warning:\n%s", md)
	}
}
