package sweep

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
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

func TestFindRoles(t *testing.T) {
	r, err := FindRoles(open(t, "hypothesis"))
	if err != nil {
		t.Fatal(err)
	}
	want := Roles{Shared: "shared", Split: "split", FaultDependency: "A", Affected: "/a", Unaffected: "/b",
		BaseSize: 10, Timeout: 500 * time.Millisecond}
	if r != want {
		t.Errorf("roles = %+v, want %+v", r, want)
	}

	tests := []struct {
		name   string
		change func(*scenarios.Scenario)
		want   string
	}{
		{"no split configuration", func(s *scenarios.Scenario) { s.Configurations = s.Configurations[:1] }, `roles.split "split" to be a configuration of mode split`},
		{"no latency fault", func(s *scenarios.Scenario) { s.Phases = s.Phases[:1] }, "latency fault"},
		{"no unaffected endpoint", func(s *scenarios.Scenario) { s.Endpoints = s.Endpoints[:1] }, `roles.unaffected "/b" to be an endpoint not calling A`},
		{"no roles declared: nothing is guessed", func(s *scenarios.Scenario) { s.Roles = claim.Roles{} }, "roles.shared"},
		{"roles that swap the endpoints", func(s *scenarios.Scenario) { s.Roles.Affected, s.Roles.Unaffected = "/b", "/a" }, `roles.affected "/b" to be an endpoint calling A`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := open(t, "hypothesis")
			tt.change(sc)
			_, err := FindRoles(sc)
			if !errors.Is(err, ErrBase) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrBase mentioning %q", err, tt.want)
			}
		})
	}
}

func TestDeriveScalesPoolsAndFault(t *testing.T) {
	base := open(t, "hypothesis")
	roles, err := FindRoles(base)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cell                    Cell
		sharedSize, sharedQueue int
		splitSize               int
		latency                 time.Duration
		name                    string
	}{
		{Cell{Size: 10, Fraction: 0.9, Rate: 50}, 10, 20, 5, 450 * time.Millisecond, "hypothesis-p10-f0.9-r50"},
		{Cell{Size: 4, Fraction: 0.5, Rate: 20}, 4, 8, 2, 250 * time.Millisecond, "hypothesis-p4-f0.5-r20"},
		{Cell{Size: 1, Fraction: 1, Rate: 12.5}, 1, 2, 1, 500 * time.Millisecond, "hypothesis-p1-f1.0-r12.5"}, // split never below 1
		{Cell{Size: 20, Fraction: 0.7, Rate: 20}, 20, 40, 10, 350 * time.Millisecond, "hypothesis-p20-f0.7-r20"},
	}
	for _, tt := range tests {
		t.Run(tt.cell.Name(), func(t *testing.T) {
			sc, err := Derive(base, roles, tt.cell, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != tt.name {
				t.Errorf("name %q, want %q", sc.Name, tt.name)
			}
			if len(sc.Configurations) != 2 {
				t.Fatalf("%d configurations, want 2", len(sc.Configurations))
			}
			sh, sp := sc.Configurations[0], sc.Configurations[1]
			if p := sh.Pools[0]; p.Size != tt.sharedSize || p.QueueCapacity != tt.sharedQueue || p.Kind != "workers" || p.MaxWait != 500*time.Millisecond {
				t.Errorf("shared pool %v, want workers size %d queue %d max_wait 500ms", p, tt.sharedSize, tt.sharedQueue)
			}
			for _, p := range sp.Pools {
				if p.Size != tt.splitSize || p.QueueCapacity != 0 {
					t.Errorf("split pool %v, want size %d queue 0", p, tt.splitSize)
				}
			}
			if len(sc.Phases) != 2 || sc.Phases[0].Name != PhaseBaseline || len(sc.Phases[0].Faults) != 0 {
				t.Fatalf("phases %+v, want a fault-free baseline then the fault", sc.Phases)
			}
			f := sc.Phases[1].Faults
			if len(f) != 1 || f[0].Dependency != "A" || f[0].Type != "latency" || f[0].Params.(*faults.Latency).Latency != tt.latency {
				t.Errorf("fault %+v, want latency %v on A", f, tt.latency)
			}
			if sc.Duration() != 4*time.Second {
				t.Errorf("time line %v, want 4s", sc.Duration())
			}
			for _, e := range sc.Endpoints {
				if e.Rate != tt.cell.Rate {
					t.Errorf("%s rate %v, want %v", e.Path, e.Rate, tt.cell.Rate)
				}
			}
			// The file a cell runs from loads back to the same scenario.
			loaded, err := WriteScenario(t.TempDir(), sc)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Duration() != sc.Duration() || loaded.Configurations[1].Pools[0].Size != tt.splitSize ||
				loaded.Phases[1].Faults[0].Params.(*faults.Latency).Latency != tt.latency || loaded.Endpoints[1].Rate != tt.cell.Rate {
				t.Errorf("loaded back differently: %+v", loaded)
			}
		})
	}
	t.Run("base unchanged", func(t *testing.T) {
		if base.Configurations[0].Pools[0].Size != 10 || len(base.Phases) != 7 || base.Endpoints[0].Rate != 50 {
			t.Error("Derive changed the base scenario")
		}
	})
}

func TestGridParsing(t *testing.T) {
	tests := []struct {
		name string
		run  func() (any, error)
		want string // fmt of the value, or "" for an error
	}{
		{"sizes", func() (any, error) { return ParseSizes("4, 10,20") }, "[4 10 20]"},
		{"size zero", func() (any, error) { return ParseSizes("0,4") }, ""},
		{"fractions with x", func() (any, error) { return ParseFractions("0.5,0.9x,1") }, "[0.5 0.9 1]"},
		{"fraction too large", func() (any, error) { return ParseFractions("2.5") }, ""},
		{"rates", func() (any, error) { return ParseRates("20/s,600/1m,5") }, "[20 10 5]"},
		{"bad rate", func() (any, error) { return ParseRates("fast") }, ""},
		{"empty", func() (any, error) { return ParseSizes(" , ") }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := tt.run()
			if tt.want == "" {
				if !errors.Is(err, ErrBadGrid) {
					t.Errorf("err = %v, want ErrBadGrid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(v); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("validate", func(t *testing.T) {
		if err := DefaultGrid.Validate(); err != nil {
			t.Errorf("default grid: %v", err)
		}
		if err := (Grid{Sizes: []int{4, 4}, Fractions: []float64{0.5}, Rates: []float64{20}}).Validate(); !errors.Is(err, ErrBadGrid) {
			t.Errorf("duplicate size: %v, want ErrBadGrid", err)
		}
		if err := (Grid{Sizes: []int{4}}).Validate(); !errors.Is(err, ErrBadGrid) {
			t.Errorf("empty dimension: %v, want ErrBadGrid", err)
		}
	})
}

// TestJudge pins the verdict rules on figures.
func TestJudge(t *testing.T) {
	th := DefaultThresholds
	cell := func(shB, spB, shA, spA float64) *CellResult {
		return &CellResult{
			Cell:   Cell{Rate: 20},
			Shared: &Figures{UnaffectedSuccessRate: shB, AffectedThroughputRPS: shA},
			Split:  &Figures{UnaffectedSuccessRate: spB, AffectedThroughputRPS: spA},
		}
	}
	tests := []struct {
		name string
		cr   *CellResult
		want string
	}{
		{"shared starves /b, split keeps it", cell(0.5, 1, 10, 5), VerdictMatters},
		{"split keeps 99% exactly, shared 89.9%", cell(0.899, 0.99, 10, 5), VerdictMatters},
		{"shared at 90% is not a drop below 90%", cell(0.90, 1, 10, 10), VerdictNeither},
		{"split costs /a 40% of the rate and /b gains nothing", cell(1, 1, 20, 12), VerdictCosts},
		{"split costs /a 10% of the rate exactly: not more than the threshold", cell(1, 1, 20, 18), VerdictNeither},
		{"both fail /a: 3.0 vs 2.7/s is 1.5% of the rate", cell(1, 1, 3, 2.7), VerdictNeither},
		{"split costs /a but /b gains 5 points", cell(0.95, 1, 20, 12), VerdictNeither},
		{"missing figures", &CellResult{Shared: &Figures{}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := th.Judge(tt.cr); got != tt.want {
				t.Errorf("Judge = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestFindingsAndWrite builds a sweep by hand and checks the sentences, the files written and
// that invalid cells are left out of the findings.
func TestFindingsAndWrite(t *testing.T) {
	sw := &Sweep{
		Scenario: "hypothesis", SweepID: "x", Base: "builtin:hypothesis",
		Grid:       Grid{Sizes: []int{4, 20}, Fractions: []float64{0.5, 1}, Rates: []float64{20}},
		Roles:      Roles{Shared: "shared", Split: "split", FaultDependency: "A", Affected: "/a", Unaffected: "/b", BaseSize: 10, Timeout: 500 * time.Millisecond},
		Thresholds: DefaultThresholds, PhaseDurationS: 3, LagLimitMS: 10,
		Started: time.Unix(0, 0), Ended: time.Unix(100, 0),
	}
	add := func(p int, f float64, valid bool, shB, spB, shA, spA float64) {
		cr := CellResult{Cell: Cell{Size: p, Fraction: f, Rate: 20}, RunDir: "run", Valid: valid, SplitPools: []int{p / 2, p / 2},
			Shared: &Figures{UnaffectedSuccessRate: shB, AffectedThroughputRPS: shA, UnaffectedP99MS: 400},
			Split:  &Figures{UnaffectedSuccessRate: spB, AffectedThroughputRPS: spA, UnaffectedP99MS: 8}}
		if valid {
			cr.Verdict = sw.Thresholds.Judge(&cr)
		} else {
			cr.Invalid = []string{"shared: /a: send lag p99 12ms exceeds the 10ms limit"}
		}
		sw.Cells = append(sw.Cells, cr)
	}
	add(4, 0.5, true, 0.95, 1, 20, 10) // neither: /b gains 5 points
	add(4, 1, true, 0.5, 1, 10, 5)     // matters
	add(20, 0.5, true, 1, 1, 20, 15)   // costs
	add(20, 1, false, 0.2, 1, 10, 10)  // would matter, but invalid

	fs := Findings(sw)
	if len(fs) != 1 {
		t.Fatalf("%d findings, want 1 per rate", len(fs))
	}
	text := strings.Join(fs[0].Sentences, " ")
	for _, want := range []string{"P=4 from 1.0x", "costs more than it saves at P=20 at 0.5x", "Not judged", "P=20 1.0x (invalid)"} {
		if !strings.Contains(text, want) {
			t.Errorf("findings %q lack %q", text, want)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, sw); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{SweepFile, ReportFile, "plots/unaffected-success-r20.png", "plots/unaffected-p99-r20.svg", "plots/affected-throughput-r20.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	for _, want := range []string{"![/b success rate in the fault phase, 20/s per endpoint](plots/unaffected-success-r20.png)\n\n[SVG](plots/unaffected-success-r20.svg)", ">= 99.0%", "below 90.0%", "Grid: P in 4, 20;", "bulkhead sweep --report <this folder>", "more than 10.0%", "invalid: shared: /a: send lag"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("sweep.md lacks %q", want)
		}
	}
	var back Sweep
	if err := rundir.ReadJSON(filepath.Join(dir, SweepFile), &back); err != nil || len(back.Cells) != 4 {
		t.Errorf("sweep.json read back: %v, %d cells", err, len(back.Cells))
	}
}

// TestTinySweep runs a 2x2 sweep end to end through experiment.Run: a 100 ms timeout, 0.5 s
// phases, 40/s. It checks the grid's shape, that every cell ran and has figures for both
// configurations, and the direction at the smallest pool and the longest delay: /a needs
// 40/s x 0.1 s = 4 slots there against a shared pool of 2, so shared starves /b and split (one
// permit per dependency) does not.
func TestTinySweep(t *testing.T) {
	testenv.Long(t, "runs 8 time lines of 1 s")
	base, err := scenarios.Parse("tiny.yaml", []byte(`
name: tiny
seed: 7
timeout: 100ms
dependencies:
  - {name: A, latency: 2ms}
  - {name: B, latency: 2ms}
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load: {rate: 40/s}
configurations:
  - {name: shared, mode: shared, size: 10, pools: default}
  - {name: split, mode: split, size: 10, pools: default}
phases:
  - {name: baseline, duration: 1s}
  - {name: slow, duration: 1s, faults: [{dependency: A, type: latency, latency: 0.9x timeout}]}
roles: {shared: shared, split: split, fault_dependency: A, affected: /a, unaffected: /b, baseline: baseline, latency_phase: slow}
`))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	grid := Grid{Sizes: []int{10, 2}, Fractions: []float64{1, 0.3}, Rates: []float64{40}}
	res, err := Run(context.Background(), base, grid, Options{
		ResultsRoot: root, PhaseDuration: 500 * time.Millisecond,
		// Under -race on a busy machine the send lag says nothing about 100 ms effects.
		Loadgen: []loadgen.Opt{loadgen.WithLagLimit(time.Second)},
		// Each cell's two configurations side by side, the cells one after another: -race costs
		// several times the CPU the default's request budget assumes.
		Parallel: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	sw := res.Sweep
	if len(sw.Cells) != 4 || sw.Partial || sw.Parallel != 2 {
		t.Fatalf("%d cells (partial %v, parallel %d), want 4 (parallel 2)", len(sw.Cells), sw.Partial, sw.Parallel)
	}
	if sw.Grid.Sizes[0] != 2 || sw.Grid.Fractions[0] != 0.3 {
		t.Errorf("grid not sorted: %+v", sw.Grid)
	}
	for _, cr := range sw.Cells {
		if cr.RunDir == "" || cr.Shared == nil || cr.Split == nil {
			t.Fatalf("cell %s has no result: %+v", cr.Name(), cr)
		}
		if _, err := os.Stat(filepath.Join(res.Dir, cr.RunDir, "shared", "manifest.json")); err != nil {
			t.Errorf("cell %s: %v", cr.Name(), err)
		}
		if cr.Shared.Requests == 0 || cr.Split.Requests == 0 {
			t.Errorf("cell %s: no requests in the fault phase", cr.Name())
		}
	}
	worst := sw.find(Cell{Size: 2, Fraction: 1, Rate: 40})
	if sh, sp := worst.Shared.UnaffectedSuccessRate, worst.Split.UnaffectedSuccessRate; !(sh < sp) {
		t.Errorf("P=2, 1.0x: /b success shared %.3f, split %.3f; want shared < split", sh, sp)
	}
	for _, f := range []string{SweepFile, ReportFile, "plots/unaffected-p99-r40.png"} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(filepath.Base(res.Dir), "-sweep-tiny") {
		t.Errorf("sweep folder %s, want <timestamp>-sweep-tiny", res.Dir)
	}
}
