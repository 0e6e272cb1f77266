package e2e_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// partnersSmall is the built-in partners scenario scaled down: the same layouts and fault, 20
// partners instead of 499, 1 s of baseline and 1 s of walmart at 0.9x the timeout.
func partnersSmall(t *testing.T, partners int) *scenarios.Scenario {
	t.Helper()
	src, err := scenarios.Source("partners")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	for _, r := range [][2]string{
		{"count: 499", fmt.Sprintf("count: %d", partners)},
		{"  - name: baseline\n    duration: 10s", "  - name: baseline\n    duration: 1s"},
		{"  - name: slow\n    duration: 15s", "  - name: slow\n    duration: 1s"},
		{"  - name: recovery\n    duration: 5s\n", ""},
	} {
		if !strings.Contains(s, r[0]) {
			t.Fatalf("partners.yaml no longer contains %q", r[0])
		}
		s = strings.Replace(s, r[0], r[1], 1)
	}
	sc, err := scenarios.Parse("partners-small.yaml", []byte(s))
	if err != nil {
		t.Fatal(err)
	}
	// One repetition: the test reads the configurations by name (a repeated run names its
	// folders <configuration>-r<n>).
	sc.Repetitions = 1
	return sc
}

// Seed 003 in miniature, judged from the run's files: the worker layout owns 20 goroutines per
// partner that the semaphore layout does not, and walmart turning slow leaves every other
// partner served and fast under both layouts.
func TestPartnersDirection(t *testing.T) {
	testenv.Long(t, "runs 2 x 2 s of a 20-partner scenario")
	const partners = 20
	sc := partnersSmall(t, partners)
	sc.Path = "builtin:partners" // the run copies the built-in file as its scenario.yaml
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := report.Analyze(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]*model.Configuration{}
	for i := range sum.Configurations {
		cfg[sum.Configurations[i].Name] = &sum.Configurations[i]
	}
	sem, wrk := cfg["semaphores"], cfg["workers"]
	if sem == nil || wrk == nil || sem.Memory == nil || wrk.Memory == nil {
		t.Fatalf("want both configurations with a memory series, got %+v", sum.Configurations)
	}
	others := fmt.Sprintf("others (%d)", partners)

	t.Run("workers own 20 goroutines per partner", func(t *testing.T) {
		owned := 20 * (partners + 1)
		if wrk.Memory.WorkerPoolSlots != owned {
			t.Errorf("worker goroutines owned = %d, want %d", wrk.Memory.WorkerPoolSlots, owned)
		}
		// The process's other goroutines (load generator workers, proxy links) come and go by a
		// few between samples, so the means are compared against the 20 per healthy partner.
		if d := wrk.Memory.GoroutinesMean - sem.Memory.GoroutinesMean; d < 20*partners {
			t.Errorf("goroutines: workers %.0f - semaphores %.0f = %.0f, want >= %d", wrk.Memory.GoroutinesMean, sem.Memory.GoroutinesMean, d, 20*partners)
		}
		if wrk.Memory.StackBytesMean <= sem.Memory.StackBytesMean {
			t.Errorf("stacks: workers %.0f B <= semaphores %.0f B", wrk.Memory.StackBytesMean, sem.Memory.StackBytesMean)
		}
	})
	for _, c := range []*model.Configuration{sem, wrk} {
		slow := c.Phases[1]
		t.Run(c.Name+": the other partners are grouped and unaffected", func(t *testing.T) {
			if len(c.EndpointGroups) != 1 || len(c.EndpointGroups[0].Members) != partners {
				t.Fatalf("endpoint groups = %+v, want one group of %d", c.EndpointGroups, partners)
			}
			st := slow.Endpoints[others]
			if st == nil || st.Requests < partners {
				t.Fatalf("%s in the slow phase: %+v, want at least %d requests", others, st, partners)
			}
			if st.SuccessRate != 1 {
				t.Errorf("%s success rate %.3f in the slow phase, want 1 (classes %v)", others, st.SuccessRate, st.Classes)
			}
			// Their calls never wait on walmart's 450 ms: the slowest stays well under it.
			if st.MaxMS >= 0.9*c.ClientTimeoutMS {
				t.Errorf("%s max latency %.1f ms in the slow phase, want < %.0f ms", others, st.MaxMS, 0.9*c.ClientTimeoutMS)
			}
		})
		t.Run(c.Name+": walmart is slow or turned away", func(t *testing.T) {
			st := slow.Endpoints["/p/walmart"]
			if st == nil || st.Requests == 0 {
				t.Fatal("no walmart requests in the slow phase")
			}
			if st.Success.Count > 0 && st.Success.P50MS < 0.9*c.ClientTimeoutMS {
				t.Errorf("walmart successes p50 %.1f ms, want >= the 450 ms fault", st.Success.P50MS)
			}
		})
	}
}
