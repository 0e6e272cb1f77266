package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
)

// bulkhead plan prints the resolved plan and starts nothing: per configuration its pools and
// slots in all, the time line with each endpoint's requests and the faults resolved, what the
// loader resolved, and each claim's feasibility. The override flags are run's, applied the same
// way.
func TestPlan(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		notWant []string
		wantErr string
	}{
		{"smoke", []string{"plan", "smoke"}, []string{
			"2 configurations x 1 repetition = 2 configuration runs",
			"shared: mode shared, 10 slots in all, system under test: the built-in service",
			"pool shared  workers  size 10  queue 20  max wait 500ms  dependencies A, B",
			"split: mode split, 10 slots in all",
			"latency   1s    3s  40 (20/s)  40 (20/s)  latency 450ms on A",
			"phases[1].faults[0].latency: 0.9x timeout = 450ms",
			"no claims",
			"estimate: 240 requests",
		}, nil, ""},
		{"overrides as run takes them", []string{"plan", "smoke", "--rate", "40/s", "--scale", "0.5", "--only", "split"}, []string{
			"1 configuration x 1 repetition = 1 configuration run",
			"time line 1.5s each",
			"latency   500ms  1.5s   40 (40/s)  40 (40/s)  latency 450ms on A",
			"configurations[0].pools: default split P=10",
		}, []string{"shared:", "default shared"}, ""},
		{"a claim the plan cannot decide", []string{"plan", "hypothesis", "--scale", "0.2", "--repetitions", "1"}, []string{
			"NO  P1-p99-level (test isolation)",
			"cannot bound p99_ms of /b in shared/baseline",
			"adaptive-split: mode split, 20 slots in all",
		}, nil, ""},
		{"a bad override is run's usage error", []string{"plan", "smoke", "--only", "nope"}, nil, nil, "--only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := executeCommand(t, tt.args...)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || exitCode(t.Context(), err, true) != ExitUsage {
					t.Fatalf("err = %v, want a usage error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
		})
	}
}

// plan --json writes the experiment.Preview alone on stdout.
func TestPlanJSON(t *testing.T) {
	out, err := executeCommand(t, "plan", "--json", "webhooks", "--repetitions", "1")
	if err != nil {
		t.Fatal(err)
	}
	var pv experiment.Preview
	if err := json.Unmarshal([]byte(out), &pv); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if pv.Scenario != "webhooks" || pv.Runs != 2 || len(pv.Phases) != 3 || pv.Phases[1].Rates["/webhooks/c"] != 150 || len(pv.Claims) == 0 {
		t.Errorf("preview %+v", pv)
	}
}

// A target's strings are listed in the order a person reads them: command[6] before
// command[10], as the runner sees the arguments.
func TestNaturalCompare(t *testing.T) {
	keys := []string{"url", "command[10]", "command[6]", "command[8]", "command[1]", "env.PORT2", "env.PORT10", "metrics"}
	slices.SortFunc(keys, naturalCompare)
	want := []string{"command[1]", "command[6]", "command[8]", "command[10]", "env.PORT2", "env.PORT10", "metrics", "url"}
	if !slices.Equal(keys, want) {
		t.Errorf("sorted %v, want %v", keys, want)
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"a", "a", 0}, {"a01", "a1", -1}, {"a2", "a10", -1}, {"b1", "a2", 1}, {"a", "a1", -1}} {
		if got := naturalCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
