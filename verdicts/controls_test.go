package verdicts

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
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
	// extra are claims of the variant itself, beyond hypothesis.yaml's.
	extra []claim.Claim
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
		name: "a stall where fast errors should be", expected: "P4 not measurable (A did not fail fast), does not hold or is inconclusive: the errors phase stalls as the latency phase does",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"baseline": short, "latency": long, "errors": long},
		change: func(s *scenarios.Scenario) {
			s.Phases[phaseIndex(s, "errors")].Faults[0] = faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond})
		},
		targets: []string{"P4-success-gap", "P4-p99-gap"},
	},
	{
		name: "identical layouts", expected: "P3 and P4 do not hold or are not measurable: split is the shared pool",
		configurations: []string{"shared", "split"}, phases: map[string]time.Duration{"baseline": short, "busy": short, "latency": long, "errors": long},
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
			s.Load.Arrivals, s.Load.Drift = "poisson", 0 // Poisson streams have no offset to drift
			setRate(s, 10)
		},
		targets: []string{"P1-error-level", "P1-p99-level", "P1-within-5-timeouts", "P4-success-gap", "P4-p99-gap"},
	},
	// The adaptive layout's claims (A1-A3), each broken by the one thing it rests on.
	{
		name: "one adaptive limit where one per dependency is claimed", expected: "A1 does not hold: A's slow calls take the shared limit's slots from /b",
		configurations: []string{"adaptive-split"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			c := &s.Configurations[configIndex(s, "adaptive-split")]
			c.Pools = slices.Clone(s.Configurations[configIndex(s, "adaptive-shared")].Pools)
			c.Mode = "shared"
		},
		targets: []string{"A1-b-served"},
	},
	{
		name: "adaptive limits per dependency where one for the service is claimed", expected: "A2 does not hold: /b keeps a limit of its own",
		configurations: []string{"adaptive-shared"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			c := &s.Configurations[configIndex(s, "adaptive-shared")]
			c.Pools = slices.Clone(s.Configurations[configIndex(s, "adaptive-split")].Pools)
			c.Mode = "split"
		},
		targets: []string{"A2-shared-limit-hurts-b"},
	},
	{
		name: "adaptive limits capped at P/2", expected: "A3 does not hold: a limit that cannot grow past 5 turns /a away in the busy phase as split does",
		configurations: []string{"shared", "adaptive-split"}, phases: map[string]time.Duration{"busy": short},
		change: func(s *scenarios.Scenario) {
			c := &s.Configurations[configIndex(s, "adaptive-split")]
			for i := range c.Pools {
				c.Pools[i].Size = 5
			}
		},
		targets: []string{"A3-cost"},
	},
	// The three of issue 26: fast failures read as fast, a phase too short to resample, and a
	// rate at 1 on too few requests for the bound it is held to.
	{
		name: "the unaffected dependency fails fast where a claim asks fast", expected: "P2's /b claims not measurable (no successes) or do not hold: /b fails at once, which is not fast service",
		configurations: []string{"split"}, phases: map[string]time.Duration{"baseline": long, "latency": long},
		change: func(s *scenarios.Scenario) {
			ph := &s.Phases[phaseIndex(s, "latency")]
			ph.Faults = append(ph.Faults, faults.New("B", &faults.Reset{}))
		},
		targets: []string{"P2-b-fast", "P2-b-p90", "P2-b-served"},
	},
	{
		name: "a 1 s phase", expected: "P2's /b claims inconclusive: one block of 50 requests bounds no p99, p90 or one-point rate",
		configurations: []string{"split"}, phases: map[string]time.Duration{"baseline": long, "latency": time.Second},
		targets: []string{"P2-b-fast", "P2-b-p90", "P2-b-served"},
	},
	{
		name: "150 requests all served against a one-point bound", expected: "inconclusive: 150 of 150 bound the failure rate only below 2.5%, not 1%",
		configurations: []string{"split"}, phases: map[string]time.Duration{"baseline": 3 * time.Second},
		extra: []claim.Claim{{ID: "b-keeps-99", Says: "split: /b keeps at least 99% of its requests served at baseline",
			Condition: claim.Condition{Measure: claim.Measure{Metric: "success_rate", Configuration: "split", Phase: "baseline", Endpoint: "/b"}, Op: claim.OpGreaterEq, Value: ptr(0.99)}}},
		targets: []string{"b-keeps-99"},
	},
}

func configIndex(s *scenarios.Scenario, name string) int {
	return slices.IndexFunc(s.Configurations, func(c scenarios.Configuration) bool { return c.Name == name })
}

func ptr(v float64) *float64 { return &v }

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
	for _, cl := range append(sc.Claims, c.extra...) {
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
// reason on a developer's machine and fails in CI (testenv.SkipOrFail), never passed on an
// unjudged run.
func judge(t *testing.T, sc *scenarios.Scenario) *model.Summary {
	t.Helper()
	s, _ := judgeWith(t, sc, experiment.Options{})
	return s
}

// judgeWith is judge with the run's options (its load layout, its executable); the results root
// and the lag limit are judge's. It also returns how many configuration runs ran at once.
func judgeWith(t *testing.T, sc *scenarios.Scenario, opts experiment.Options) (*model.Summary, int) {
	t.Helper()
	const tries = 3
	var invalid []string
	for try := 1; try <= tries; try++ {
		opts.ResultsRoot, opts.LagLimit = t.TempDir(), 10*time.Millisecond
		res, err := experiment.Run(context.Background(), sc, opts)
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		s, err := report.Analyze(res.Dir)
		if err != nil {
			t.Fatalf("analyze: %v", err)
		}
		if s.Valid {
			return s, res.Parallel
		}
		invalid = s.Invalid
		t.Logf("try %d of %d is invalid, so it cannot serve as a control: %v", try, tries, s.Invalid)
	}
	testenv.SkipOrFail(t, "no valid run in %d tries (the machine is too busy to judge): %v", tries, invalid)
	return nil, 0
}

// TestNegativeControls runs each variant and checks that none of its target claims holds. The
// log has the table: variant, expected, got.
func TestNegativeControls(t *testing.T) {
	testenv.Long(t, "runs fifteen scenario variants end to end (about eight minutes)")
	t.Parallel() // beside TestAACalibration: a busy machine moves figures by milliseconds, the controls by hundreds
	var table []string
	for _, c := range controls {
		t.Run(c.name, func(t *testing.T) {
			s := judge(t, build(t, c))
			var got []string
			for _, cl := range s.Verdict.Claims {
				got = append(got, fmt.Sprintf("%s %s", cl.ID, cl.Verdict))
				t.Logf("%s %s: %s", cl.ID, cl.Verdict, cl.Reason)
				if cl.Verdict == model.VerdictHolds {
					t.Errorf("%s holds in a variant built to break it (%s): %s", cl.ID, c.expected, cl.Reason)
				}
			}
			table = append(table, fmt.Sprintf("| %s | %s | %s |", c.name, c.expected, strings.Join(got, "; ")))
		})
	}
	t.Logf("negative controls:\n| variant | expected | got |\n|---|---|---|\n%s", strings.Join(table, "\n"))
}

// TestPositiveControl runs seed 004's two layouts of the hypothesis as `make run` does (full
// length, five repetitions; the adaptive layouts have controls of their own): every claim must
// hold, and hold in each repetition judged alone too (issue 26's "every claim the same in each
// repetition alone"). That rests on load.drift: held at one arrival offset per repetition, the
// repetition whose /b led /a by 0.6 ms gave P1's effects a third of the others' and was
// undecided alone; drifting, every repetition sweeps every offset, and alone each one held P1's
// error level at 0.30-0.34 (lower ends 0.23-0.27) in the run of 2026-12-02 07:58 UTC.
//
// It runs alone (not in parallel with the A/A runs and the negative controls, which wait for
// it): a repetition judged alone has a fifth of the data, and its ms-scale claims (/b's p90
// within 1.5x of a 6 ms baseline, fast failures under 50 ms) are decided only on a machine as
// quiet as make run's. Beside the A/A runs (2026-12-02 19:22 UTC, this machine) the three
// repetitions that overlapped them had send-lag p99s of 4-8.5 ms (max 28 ms); the first alone
// left P2-b-p90 and P4's fast-failure precondition undecided, and the spread between
// repetitions, which floors each one judged alone, widened the other four until P2-b-p90 (in the
// two that ran after, at lag p99 0.4-0.7 ms) and P4-p99-gap's precondition were undecided too.
// Run alone, all five held every claim (19:33 and 19:47 UTC). Beside other work the run is still
// valid (lag under 10 ms) and its verdict over all five held every claim.
//
// Its load layout is make run's too: each configuration's load generator a child process of a
// built bulkhead (`bulkhead attack`), so the runner starts six configuration runs at once, three
// repetitions of each layout (experiment.DefaultParallel), where the in-process layout starts two.
func TestPositiveControl(t *testing.T) {
	testenv.Long(t, "builds bulkhead and runs the hypothesis's shared and split layouts end to end (about three minutes)")
	bin := filepath.Join(t.TempDir(), "bulkhead")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/bulkheadlab/bulkhead/cmd/bulkhead").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Override(scenarios.Overrides{Only: []string{"shared", "split"}}); err != nil {
		t.Fatal(err)
	}
	s, parallel := judgeWith(t, sc, experiment.Options{Load: experiment.LoadProcess, Executable: bin})
	if want := 6; parallel != want {
		t.Errorf("ran %d configuration runs at once, want the process layout's %d (three repetitions of each layout)", parallel, want)
	}
	lo, hi := lagRange(s)
	t.Logf("%d configuration runs, %d at once; send-lag p99 %.2f-%.2f ms", len(s.Configurations), parallel, lo, hi)
	for _, cl := range s.Verdict.Claims {
		t.Logf("%s %s: %s", cl.ID, cl.Verdict, cl.Reason)
		if cl.Verdict != model.VerdictHolds {
			t.Errorf("%s %s in the hypothesis: %s", cl.ID, cl.Verdict, cl.Reason)
		}
		for _, r := range cl.ByRepetition {
			if r.Verdict != cl.Verdict {
				t.Errorf("%s: repetition %d alone %s (%v), all of them %s; the precondition that decided it: %q", cl.ID, r.Repetition, r.Says(), r.Difference, cl.Verdict, r.PreconditionReason)
			}
		}
	}
	if s.Verdict.Outcome != model.OutcomePass {
		t.Errorf("outcome %q, want pass", s.Verdict.Outcome)
	}
}

// Every variant is a valid scenario holding exactly its target claims (checked without running).
func TestControlsBuild(t *testing.T) {
	if len(controls) < 15 {
		t.Errorf("%d negative controls, want the 15 (the nine, the adaptive layout's three and issue 26's three)", len(controls))
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
