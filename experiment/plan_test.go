package experiment

import (
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

func open(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// seed004 is the hypothesis with seed 004's two layouts only (shared and split), as `--only
// shared,split` runs it: the tests of the planner count its configuration runs.
func seed004(t *testing.T) *scenarios.Scenario {
	t.Helper()
	sc := open(t, "hypothesis")
	if _, err := sc.Override(scenarios.Overrides{Only: []string{"shared", "split"}}); err != nil {
		t.Fatal(err)
	}
	return sc
}

// With load.drift the second stream starts at its repetition's offset and drifts through every
// offset: the hypothesis's /b (drift 10s) runs at 50.1/s, and over its 30 s stall its sends fall
// evenly over the whole 20 ms interval after /a's, a tenth of them in each tenth of it; /a keeps
// its declared 50/s.
func TestDriftSweepsTheOffset(t *testing.T) {
	sc := open(t, "hypothesis")
	p, err := NewPlan(sc, sc.Configurations[0], 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := p.Attacks[0].Pacer, p.Attacks[1].Pacer
	if m := p.Manifest.Endpoints; m[0].Rate != 50 || m[0].Drift != 0 || math.Abs(m[1].Rate-50.1) > 1e-9 || m[1].Drift != 10*time.Second {
		t.Fatalf("manifest rates %v/s and %v/s, drifts %v and %v; want 50 and 50.1, 0 and 10s", m[0].Rate, m[1].Rate, m[0].Drift, m[1].Drift)
	}
	const interval = 20 * time.Millisecond
	start, end := 23*time.Second, 53*time.Second // the latency phase
	var deciles [10]int
	n := 0
	for k := b.Hits(start); b.Scheduled(k) < end; k++ {
		tb := b.Scheduled(k)
		ta := a.Scheduled(a.Hits(tb) - 1) // /a's last send at or before it
		deciles[int(10*(tb-ta)/interval)%10]++
		n++
	}
	for d, c := range deciles {
		if c < n/10-5 || c > n/10+5 {
			t.Errorf("decile %d of the interval after /a's send holds %d of /b's %d sends in the stall, want about %d: %v", d, c, n, n/10, deciles)
			break
		}
	}
}

// A plan is computed from the scenario alone: no network, no clock, no disk. The cases pin what
// each field of the manifest-to-be and each attack is made of.
func TestNewPlan(t *testing.T) {
	hyp := open(t, "hypothesis")
	hyp.Repetitions = 1
	hyp3 := open(t, "hypothesis")
	hyp3.Repetitions = 3
	poisson := open(t, "hypothesis")
	poisson.Repetitions = 1
	poisson.Load.Arrivals, poisson.Load.Drift = "poisson", 0
	hooks := open(t, "webhooks")
	hooks.Repetitions = 1
	const ms = time.Millisecond

	tests := []struct {
		name     string
		sc       *scenarios.Scenario
		conf     int
		rep      int
		lagFlag  time.Duration
		folder   string
		offsets  []time.Duration // per endpoint, rounded to 0.1 ms
		arrivals []string
		lagLimit time.Duration
	}{
		{name: "one repetition: the configuration's name, streams half an interval apart",
			sc: hyp, conf: 0, rep: 1, folder: "shared",
			offsets: []time.Duration{0, 10 * ms}, arrivals: []string{"constant", "constant, drifting one interval ahead of /a every 10s"}, lagLimit: 10 * ms}, // the scenario's declared load.lag_limit,
		{name: "repetition 2 of 3 moves the second stream to 0.88 of the interval",
			sc: hyp3, conf: 1, rep: 2, folder: "split-r2",
			offsets: []time.Duration{0, 17600 * time.Microsecond}, arrivals: []string{"constant", "constant, drifting one interval ahead of /a every 10s"}, lagLimit: 10 * ms},
		{name: "repetition 3 of 3 to 0.26",
			sc: hyp3, conf: 0, rep: 3, folder: "shared-r3",
			offsets: []time.Duration{0, 5300 * time.Microsecond}, arrivals: []string{"constant", "constant, drifting one interval ahead of /a every 10s"}, lagLimit: 10 * ms},
		{name: "Poisson arrivals are not shifted; the command line's lag limit wins",
			sc: poisson, conf: 0, rep: 1, lagFlag: 3 * ms, folder: "shared",
			offsets: []time.Duration{0, 0}, arrivals: []string{"poisson", "poisson"}, lagLimit: 3 * ms},
		{name: "a phase's rates give a per-phase schedule; the scenario's lag limit applies",
			sc: hooks, conf: 0, rep: 1, folder: hooks.Configurations[0].Name, lagLimit: 5 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPlan(tt.sc, tt.sc.Configurations[tt.conf], tt.rep, tt.lagFlag)
			if err != nil {
				t.Fatal(err)
			}
			m := p.Manifest
			if p.Folder != tt.folder || m.Configuration != tt.sc.Configurations[tt.conf].Name || m.Repetition != tt.rep {
				t.Errorf("folder %q configuration %q repetition %d", p.Folder, m.Configuration, m.Repetition)
			}
			if m.LagLimit != tt.lagLimit {
				t.Errorf("lag limit %v, want %v", m.LagLimit, tt.lagLimit)
			}
			if len(p.Attacks) != len(tt.sc.Endpoints) || len(m.Endpoints) != len(tt.sc.Endpoints) {
				t.Fatalf("%d attacks, %d manifest endpoints, want %d", len(p.Attacks), len(m.Endpoints), len(tt.sc.Endpoints))
			}
			for i, want := range tt.offsets {
				if got := m.Endpoints[i].Offset.Round(100 * time.Microsecond); got != want || p.Attacks[i].Offset != m.Endpoints[i].Offset {
					t.Errorf("endpoint %d offset %v (attack %v), want %v", i, got, p.Attacks[i].Offset, want)
				}
			}
			for i, want := range tt.arrivals {
				if m.Endpoints[i].Arrivals != want {
					t.Errorf("endpoint %d arrivals %q, want %q", i, m.Endpoints[i].Arrivals, want)
				}
			}
			if tt.sc == hooks {
				var perPhase int
				for _, e := range m.Endpoints {
					if strings.Contains(e.Arrivals, "per phase") {
						perPhase++
					}
				}
				if perPhase != 1 {
					t.Errorf("%d endpoints with a per-phase schedule, want 1 (the burst endpoint)", perPhase)
				}
			}
			// The time line: phases end to end, faults resolved and not yet switched.
			if last := m.Phases[len(m.Phases)-1]; last.End != tt.sc.Duration() || p.Duration != tt.sc.Duration() {
				t.Errorf("time line ends at %v (plan %v), want %v", last.End, p.Duration, tt.sc.Duration())
			}
			for i, ph := range m.Phases {
				if i > 0 && ph.Start != m.Phases[i-1].End {
					t.Errorf("phase %s starts at %v, previous ended at %v", ph.Name, ph.Start, m.Phases[i-1].End)
				}
				if len(ph.Faults) != len(tt.sc.Phases[i].Faults) {
					t.Errorf("phase %s: %d faults, want %d", ph.Name, len(ph.Faults), len(tt.sc.Phases[i].Faults))
				}
				for _, f := range ph.Faults {
					if f.AppliedAt != -1 || f.RemovedAt != -1 {
						t.Errorf("phase %s: fault already switched at %v..%v", ph.Name, f.AppliedAt, f.RemovedAt)
					}
				}
			}
			if m.Topology == nil || len(m.Topology.Endpoints) != len(tt.sc.Endpoints) {
				t.Errorf("topology %+v, want one entry per endpoint", m.Topology)
			}
			if p.SampleEvery != scenarios.DefaultSampleEvery && tt.sc.SampleEvery == 0 {
				t.Errorf("sample every %v, want the default %v", p.SampleEvery, scenarios.DefaultSampleEvery)
			}
		})
	}
}

// The hypothesis' latency fault is planned resolved: 0.9x the 500 ms timeout.
func TestPlanResolvesFaults(t *testing.T) {
	sc := open(t, "hypothesis")
	p, err := NewPlan(sc, sc.Configurations[0], 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, ph := range p.Manifest.Phases {
		if ph.Name == "latency" {
			if l, ok := ph.Faults[0].Params.(*faults.Latency); len(ph.Faults) != 1 || !ok || l.Latency != 450*time.Millisecond || ph.Faults[0].Dependency != "A" {
				t.Fatalf("latency phase faults %+v, want A +450ms", ph.Faults)
			}
			return
		}
	}
	t.Fatal("no latency phase planned")
}

// Plans lists repetitions outermost and gives every configuration run its own folder; the
// configurations of one repetition share their dependencies' seeds (the same jitter for both
// layouts), repetitions do not.
func TestPlansOrderAndSeeds(t *testing.T) {
	sc := seed004(t)
	sc.Repetitions = 2
	plans, err := Plans(sc, 0)
	if err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, p := range plans {
		folders = append(folders, p.Folder)
	}
	if got := strings.Join(folders, " "); got != "shared-r1 split-r1 shared-r2 split-r2" {
		t.Errorf("folders %s", got)
	}
	same := func(a, b []int64) bool { return strings.Trim(fmt.Sprint(a), "[]") == strings.Trim(fmt.Sprint(b), "[]") }
	if !same(plans[0].DependencySeeds, plans[1].DependencySeeds) {
		t.Errorf("one repetition, different seeds: %v %v", plans[0].DependencySeeds, plans[1].DependencySeeds)
	}
	if same(plans[0].DependencySeeds, plans[2].DependencySeeds) {
		t.Errorf("two repetitions, the same seeds: %v", plans[0].DependencySeeds)
	}
}

// DefaultParallel runs as many configurations at once as the cores' request budget holds, in
// whole repetitions (every configuration equally often) when the budget holds one of each, one
// at a time when a configuration alone exceeds it or owns many worker goroutines.
func TestDefaultParallel(t *testing.T) {
	plansOf := func(sc *scenarios.Scenario) []*Plan {
		ps, err := Plans(sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	hyp := seed004(t)
	hyp.Repetitions = 1
	hyp3 := seed004(t)
	hyp3.Repetitions = 3
	hyp4 := open(t, "hypothesis") // four configurations, five repetitions
	fast := seed004(t)
	fast.Repetitions = 1
	fast.Load.Rate = 1000
	for i := range fast.Endpoints {
		fast.Endpoints[i].Rate = 1000
	}
	tests := []struct {
		name  string
		plans []*Plan
		cpus  int
		load  string
		want  int
	}{
		{"hypothesis (100/s) on 2 cores: both configurations at once", plansOf(hyp), 2, LoadInProcess, 2},
		{"three repetitions: the three the budget holds, rounded down to whole repetitions", plansOf(hyp3), 2, LoadInProcess, 2},
		{"load generators in their own processes: all six at once", plansOf(hyp3), 2, LoadProcess, 6},
		{"one core holds one", plansOf(hyp3), 1, LoadInProcess, 1},
		{"one core holds three with the load in its own processes: one repetition of each", plansOf(hyp3), 1, LoadProcess, 2},
		{"four configurations, six held: four at once (one repetition of each)", plansOf(hyp4), 2, LoadProcess, 4},
		{"four configurations, three held: three at once (none twice)", plansOf(hyp4), 2, LoadInProcess, 3},
		{"eight cores hold all six", plansOf(hyp3), 8, LoadInProcess, 6},
		{"2000/s per configuration exceeds the budget: one at a time", plansOf(fast), 2, LoadInProcess, 1},
		{"2000/s exceeds the process layout's budget too", plansOf(fast), 2, LoadProcess, 1},
		{"partners measures its worker goroutines: one at a time", plansOf(open(t, "partners")), 2, LoadProcess, 1},
		{"nothing to run", nil, 2, LoadProcess, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultParallel(tt.plans, tt.cpus, tt.load); got != tt.want {
				t.Errorf("DefaultParallel = %d, want %d", got, tt.want)
			}
		})
	}
}

// Parallel resolves --parallel as Run does: the default, capped at the plans, and one at a time
// (an error when more are asked for) where the scenario fixes its proxies' listen addresses.
func TestParallel(t *testing.T) {
	hyp3 := seed004(t)
	hyp3.Repetitions = 3
	fixed := seed004(t)
	fixed.Repetitions = 1
	fixed.Dependencies[0].Listen = "127.0.0.1:21001"
	tests := []struct {
		name      string
		sc        *scenarios.Scenario
		requested int
		load      string
		want      int
		err       string
	}{
		{"default on 2 cores: whole repetitions", hyp3, 0, LoadInProcess, 2, ""},
		{"default on 2 cores, load in its own processes", hyp3, 0, LoadProcess, 6, ""},
		{"asked for one", hyp3, 1, LoadProcess, 1, ""},
		{"asked for three: three, as asked", hyp3, 3, LoadProcess, 3, ""},
		{"asked for more than there are plans", hyp3, 9, LoadInProcess, 6, ""},
		{"fixed listen addresses, default: one at a time", fixed, 0, LoadProcess, 1, ""},
		{"fixed listen addresses, asked for two", fixed, 2, LoadProcess, 0, "fixes its dependencies' listen addresses"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plans, err := Plans(tt.sc, 0)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Parallel(tt.sc, plans, tt.requested, 2, tt.load)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Parallel = %d, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Parallel = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// The estimated wall time runs the time lines in batches of parallel, each batch as long as its
// longest, as executeAll does.
func TestMakespan(t *testing.T) {
	p := func(d time.Duration) *Plan { return &Plan{Duration: d} }
	if got, want := makespan([]*Plan{p(65 * time.Second), p(80 * time.Second), p(65 * time.Second)}, 2), 145*time.Second; got != want {
		t.Errorf("makespan(65 s, 80 s, 65 s; 2) = %v, want %v", got, want)
	}
	plans := []*Plan{p(65 * time.Second), p(65 * time.Second), p(65 * time.Second)}
	for _, tt := range []struct {
		parallel int
		want     time.Duration
	}{{1, 195 * time.Second}, {2, 130 * time.Second}, {3, 65 * time.Second}, {8, 65 * time.Second}} {
		if got := makespan(plans, tt.parallel); got != tt.want {
			t.Errorf("makespan(3 x 65 s, %d) = %v, want %v", tt.parallel, got, tt.want)
		}
	}
}

// A run with many dependencies collects garbage at leanGCPercent, unless GOGC says otherwise; a
// small one leaves the runtime's setting alone.
func TestGCPercentFor(t *testing.T) {
	plansOf := func(name string) []*Plan {
		ps, err := Plans(open(t, name), 0)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	noEnv := func(string) string { return "" }
	gogc := func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	}
	tests := []struct {
		name  string
		plans []*Plan
		env   func(string) string
		want  int
	}{
		{"partners (500 dependencies)", plansOf("partners"), noEnv, leanGCPercent},
		{"partners, GOGC set: the user's setting", plansOf("partners"), gogc, 0},
		{"hypothesis (2 dependencies): left alone", plansOf("hypothesis"), noEnv, 0},
		{"nothing to run", nil, noEnv, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcPercentFor(tt.plans, tt.env); got != tt.want {
				t.Errorf("gcPercentFor = %d, want %d", got, tt.want)
			}
		})
	}
}

// A load generator child runs at the runner's garbage collection setting, which it would not
// inherit: GOGC in its environment exactly when the runner sets one.
func TestChildEnvCarriesTheGCSetting(t *testing.T) {
	noEnv := func(string) string { return "" }
	gogc := func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	}
	for _, tt := range []struct {
		name     string
		scenario string
		env      func(string) string
		want     []string
	}{
		{"partners (500 dependencies)", "partners", noEnv, []string{"GOGC=" + strconv.Itoa(leanGCPercent)}},
		{"partners, GOGC set: inherited as it is", "partners", gogc, nil},
		{"hypothesis (2 dependencies)", "hypothesis", noEnv, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			plans, err := Plans(open(t, tt.scenario), 0)
			if err != nil {
				t.Fatal(err)
			}
			if got := childEnv(plans[0], tt.env); !slices.Equal(got, tt.want) {
				t.Errorf("childEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

// setGCPercent sets the percentage and restores the previous one; 0 changes nothing.
func TestSetGCPercentRestores(t *testing.T) {
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	restore := setGCPercent(leanGCPercent)
	if got := debug.SetGCPercent(leanGCPercent); got != leanGCPercent {
		t.Errorf("during: GOGC %d, want %d", got, leanGCPercent)
	}
	restore()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("after restore: GOGC %d, want 150", got)
	}
	setGCPercent(0)()
	if got := debug.SetGCPercent(150); got != 150 {
		t.Errorf("with percent 0: GOGC %d, want 150 unchanged", got)
	}
}
