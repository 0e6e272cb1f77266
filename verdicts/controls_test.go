package verdicts

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// control is one variant of the hypothesis scenario and the claims it must not let hold.
type control struct {
	name string
	// expected says which prediction the variant breaks and how.
	expected string
	// configurations are the ones run; phases the ones kept, with their (shortened) durations.
	configurations []string
	phases         map[string]time.Duration
	change         func(*scenarios.Scenario)
	// targets are the claims judged; each must come out anything but holds.
	targets []string
}

// Phase lengths of the scaled-down time lines: 8 s at 50/s is 400 requests per endpoint, enough
// for a p99 with an upper bound (368).
const (
	long  = 8 * time.Second
	short = 6 * time.Second
	gap   = time.Second
)

var controls = []control{
	{
		name: "pool large enough to absorb the stall", expected: "P1 not measurable (the fault does not hurt /a) or does not hold",
		configurations: []string{"shared"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			s.Configurations[0].Pools[0].Size, s.Configurations[0].Pools[0].QueueCapacity = 40, 80
		},
		targets: []string{"P1-error-level", "P1-p99-level", "P1-within-5-timeouts"},
	},
	{
		name: "weak fault", expected: "P1 not measurable (the fault does not hurt /a); P2's rejections not measurable (none)",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			s.Phases[phaseIndex(s, "latency")].Faults[0] = faults.New("A", &faults.Latency{Latency: 20 * time.Millisecond})
		},
		targets: []string{"P1-error-level", "P1-p99-level", "P1-within-5-timeouts", "P2-a-rejected", "P2-a-rejected-fast"},
	},
	{
		name: "low rate (5/s per endpoint)", expected: "P1 and P4 not measurable or inconclusive: nothing starves, a p99 of 40 requests has no upper bound",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"baseline": long, "latency": long, "errors": long},
		change:  func(s *scenarios.Scenario) { setRate(s, 5) },
		targets: []string{"P1-error-level", "P1-p99-level", "P1-within-5-timeouts", "P4-success-gap", "P4-p99-gap"},
	},
	{
		name: "unaffected endpoint broken from the start", expected: "P2 not measurable: /b's baseline is unhealthy (B 200 ms behind a pool of 2)",
		configurations: []string{"split"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			s.Dependencies[1].Latency = 200 * time.Millisecond
			s.Configurations[1].Pools[1].Size = 2
		},
		targets: []string{"P2-b-served", "P2-b-fast", "P2-b-p90"},
	},
	{
		name: "a stall where fast errors should be", expected: "P4 does not hold or is inconclusive: the errors phase stalls as the latency phase does",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"latency": long, "errors": long},
		change: func(s *scenarios.Scenario) {
			s.Phases[phaseIndex(s, "errors")].Faults[0] = faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond})
		},
		targets: []string{"P4-success-gap", "P4-p99-gap"},
	},
	{
		name: "identical layouts", expected: "P3 and P4 do not hold or are not measurable: split is the shared pool",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"busy": short, "latency": long, "errors": long},
		change: func(s *scenarios.Scenario) {
			s.Configurations[1].Pools = slices.Clone(s.Configurations[0].Pools)
			s.Configurations[1].Mode = s.Configurations[0].Mode
		},
		targets: []string{"P3-cost", "P4-success-gap", "P4-p99-gap"},
	},
	{
		name: "a second stall where normal load should be", expected: "P3 not measurable: the busy phase is a stall, not normal load",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"busy": short},
		change: func(s *scenarios.Scenario) {
			s.Phases[phaseIndex(s, "busy")].Faults[0] = faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond})
		},
		targets: []string{"P3-cost"},
	},
	{
		name: "the busy phase weakened to +10 ms", expected: "P3 does not hold or is inconclusive: both layouts serve /a in full, so isolation costs nothing",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"busy": short},
		change: func(s *scenarios.Scenario) {
			s.Phases[phaseIndex(s, "busy")].Faults[0] = faults.New("A", &faults.Latency{Latency: 10 * time.Millisecond})
		},
		targets: []string{"P3-cost"},
	},
	{
		name: "three endpoints with Poisson arrivals", expected: "P1 and P4 not measurable or inconclusive: at 10/s each nothing starves, and Poisson noise must not decide",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"baseline": long, "latency": long, "errors": long},
		change: func(s *scenarios.Scenario) {
			s.Dependencies = append(s.Dependencies, scenarios.Dependency{DependencyConfig: service.DependencyConfig{Name: "C"}, Latency: 5 * time.Millisecond, Jitter: time.Millisecond})
			s.Endpoints = append(s.Endpoints, scenarios.Endpoint{EndpointConfig: service.EndpointConfig{Path: "/c", Calls: []string{"C"}}})
			s.Configurations[0].Pools[0].Dependencies = []string{"A", "B", "C"}
			s.Configurations[1].Pools = append(s.Configurations[1].Pools, scenarios.Pool{PoolConfig: service.PoolConfig{Name: "C", Kind: service.KindSemaphore, Size: 5, Dependencies: []string{"C"}}})
			s.Load.Arrivals = "poisson"
			setRate(s, 10)
		},
		targets: []string{"P1-error-level", "P1-p99-level", "P1-within-5-timeouts", "P4-success-gap", "P4-p99-gap"},
	},
}

func phaseIndex(s *scenarios.Scenario, name string) int {
	return slices.IndexFunc(s.Phases, func(p scenarios.Phase) bool { return p.Name == name })
}

func setRate(s *scenarios.Scenario, r float64) {
	s.Load.Rate = r
	for i := range s.Endpoints {
		s.Endpoints[i].Rate = r
	}
}

// build returns the hypothesis scenario changed for c: its configurations and phases cut down,
// one repetition, only the target claims (roles dropped but normal_load, which the claims check).
func build(t *testing.T, c control) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	if c.change != nil {
		c.change(sc)
	}
	var cfgs []scenarios.Configuration
	for _, cf := range sc.Configurations {
		if slices.Contains(c.configurations, cf.Name) {
			cfgs = append(cfgs, cf)
		}
	}
	sc.Configurations = cfgs
	var phases []scenarios.Phase
	for _, p := range sc.Phases {
		if d, ok := c.phases[p.Name]; ok {
			p.Duration = d
			phases = append(phases, p)
			phases = append(phases, scenarios.Phase{Name: p.Name + "-gap", Duration: gap}) // let one phase's calls drain
		}
	}
	sc.Phases = phases
	var claims []claim.Claim
	for _, cl := range sc.Claims {
		if slices.Contains(c.targets, cl.ID) {
			claims = append(claims, cl)
		}
	}
	if len(claims) != len(c.targets) {
		t.Fatalf("%d of the %d target claims are in hypothesis.yaml", len(claims), len(c.targets))
	}
	sc.Claims = claims
	var normal []string
	for _, p := range sc.Roles.NormalLoad {
		if _, ok := c.phases[p]; ok {
			normal = append(normal, p)
		}
	}
	sc.Roles = claim.Roles{NormalLoad: normal}
	sc.Repetitions = 1
	if err := sc.Validate(); err != nil {
		t.Fatalf("variant does not validate: %v", err)
	}
	return sc
}

// judge runs sc end to end and returns its summary. The run must be valid: a control that
// cannot be judged proves nothing. A run made invalid by the machine (send lag over the bound,
// which is 10 ms as the sweep's: the effects are hundreds of milliseconds) is tried again, up to
// three times in all; if the machine never allows a valid run the test is skipped with the
// reason, never passed on an unjudged run.
func judge(t *testing.T, sc *scenarios.Scenario) *report.Summary {
	t.Helper()
	const tries = 3
	var invalid []string
	for try := 1; try <= tries; try++ {
		res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir(), LagLimit: 10 * time.Millisecond})
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		s, err := report.Analyze(res.Dir)
		if err != nil {
			t.Fatalf("analyze: %v", err)
		}
		if s.Valid {
			return s
		}
		invalid = s.Invalid
		t.Logf("try %d of %d is invalid, so it cannot serve as a control: %v", try, tries, s.Invalid)
	}
	t.Skipf("no valid run in %d tries (the machine is too busy to judge): %v", tries, invalid)
	return nil
}

// TestNegativeControls runs each variant and checks that none of its target claims holds. The
// log has the table: variant, expected, got.
func TestNegativeControls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight scenario variants end to end (about five minutes)")
	}
	var table []string
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			s := judge(t, build(t, c))
			var got []string
			for _, cl := range s.Verdict.Claims {
				got = append(got, fmt.Sprintf("%s %s", cl.ID, cl.Verdict))
				t.Logf("%s %s: %s", cl.ID, cl.Verdict, cl.Reason)
				if cl.Verdict == report.VerdictHolds {
					t.Errorf("%s holds in a variant built to break it (%s): %s", cl.ID, c.expected, cl.Reason)
				}
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s |", c.name, c.expected, strings.Join(got, "; ")))
		})
	}
	t.Logf("negative controls:\n| variant | expected | got |\n|---|---|---|\n%s", strings.Join(table, "\n"))
}

// TestPositiveControl runs the hypothesis scaled down (one repetition, shorter phases): every
// claim must hold.
func TestPositiveControl(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scaled-down hypothesis end to end (about a minute)")
	}
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	// The latency phase keeps its 12 s: P2's fast rejections are a p99 of /a's rejections, about
	// 39 a second under split, and a p99 needs 368 of them.
	durations := map[string]time.Duration{"baseline": long, "busy": short, "calm": gap, "latency": 12 * time.Second, "recovery": gap, "errors": long, "recovery-2": gap}
	for i := range sc.Phases {
		sc.Phases[i].Duration = durations[sc.Phases[i].Name]
	}
	sc.Repetitions = 1
	if err := sc.Validate(); err != nil {
		t.Fatal(err)
	}
	s := judge(t, sc)
	for _, cl := range s.Verdict.Claims {
		t.Logf("%s %s: %s", cl.ID, cl.Verdict, cl.Reason)
		if cl.Verdict != report.VerdictHolds {
			t.Errorf("%s %s in the scaled-down hypothesis: %s", cl.ID, cl.Verdict, cl.Reason)
		}
	}
	if s.Verdict.Outcome != report.OutcomePass {
		t.Errorf("outcome %q, want pass", s.Verdict.Outcome)
	}
}

// Every variant is a valid scenario holding exactly its target claims (checked without running).
func TestControlsBuild(t *testing.T) {
	if len(controls) < 8 {
		t.Errorf("%d negative controls, want at least 8", len(controls))
	}
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			sc := build(t, c)
			if len(sc.Claims) == 0 || sc.Repetitions != 1 {
				t.Errorf("claims %d, repetitions %d", len(sc.Claims), sc.Repetitions)
			}
		})
	}
}
