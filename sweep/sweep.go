package sweep

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// Files inside a sweep folder.
const (
	SweepFile    = "sweep.json"
	ReportFile   = "sweep.md"
	ScenariosDir = "scenarios"
)

// Options tunes a sweep. The zero value runs DefaultPhaseDuration phases with the embedded
// Toxiproxy into experiment.DefaultResultsRoot, with DefaultThresholds, printing nothing.
type Options struct {
	// ResultsRoot is the folder the sweep folder is created in. "" means experiment.DefaultResultsRoot.
	ResultsRoot string
	// PhaseDuration is the length of each cell's baseline and fault phases. 0 means
	// DefaultPhaseDuration.
	PhaseDuration time.Duration
	// Thresholds judge the cells. The zero value means DefaultThresholds.
	Thresholds Thresholds
	// Progress receives one line per cell; nil means none.
	Progress io.Writer
	// LagLimit is the send lag p99 above which a cell's run is invalid. 0 means DefaultLagLimit.
	LagLimit time.Duration
	// Toxiproxy, Command, Version and Loadgen are passed to experiment.Run for every cell
	// (Loadgen after the lag limit, so it may override it).
	Toxiproxy string
	Command   string
	Version   string
	Loadgen   []loadgen.Opt
	// Now is the clock of the sweep folder's name and timings; nil means time.Now.
	Now func() time.Time
	// Parallel is how many configuration runs go at once across cells (each cell's two
	// configurations side by side, and cells side by side). 0 means experiment.DefaultParallel
	// over every cell's plans (the cores' request budget at the grid's highest rate); 1 runs
	// every configuration of every cell one after another.
	Parallel int
	// Load is where each configuration's load generator runs (experiment.Options.Load; "" the
	// default), recorded in each cell's run.json.
	Load string
}

// Sweep is what sweep.json holds: the grid, how cells were built and judged, and every cell.
type Sweep struct {
	Scenario       string     `json:"scenario"`
	SweepID        string     `json:"sweep_id"`
	Base           string     `json:"base"` // the base scenario's path ("builtin:hypothesis")
	Command        string     `json:"command,omitempty"`
	Grid           Grid       `json:"grid"`
	PhaseDurationS float64    `json:"phase_duration_s"`
	LagLimitMS     float64    `json:"lag_limit_ms"`
	Roles          Roles      `json:"roles"`
	Thresholds     Thresholds `json:"thresholds"`
	Started        time.Time  `json:"started"`
	Ended          time.Time  `json:"ended"`
	// Partial is true when the sweep was interrupted: some cells were not run.
	Partial bool `json:"partial"`
	// Parallel is how many configuration runs went at once (see Options.Parallel).
	Parallel int `json:"parallel"`
	// Cells lists every cell of the grid in run order (rate, then size, then fraction); a cell not
	// run has no RunDir.
	Cells []CellResult `json:"cells"`
}

// CellResult is one cell's run and figures.
type CellResult struct {
	Cell
	// LatencyMS is the fault delay: Fraction x the client timeout.
	LatencyMS float64 `json:"latency_ms"`
	// RunDir is the cell's run folder, relative to the sweep folder ("" when not run).
	RunDir string `json:"run_dir,omitempty"`
	// Scenario is the scenario file the cell ran, relative to the sweep folder.
	Scenario string `json:"scenario,omitempty"`
	// Valid is false when the run or its analysis failed or the run is invalid; Invalid says why.
	Valid   bool     `json:"valid"`
	Invalid []string `json:"invalid,omitempty"`
	// Shared and Split are the fault-phase figures of each configuration, nil when missing.
	Shared *Figures `json:"shared"`
	Split  *Figures `json:"split"`
	// SplitPools are the split configuration's pool sizes in this cell.
	SplitPools []int `json:"split_pools,omitempty"`
	// Verdict is VerdictMatters, VerdictCosts, VerdictNeither, or "" when not judged (invalid or
	// missing figures).
	Verdict string `json:"verdict,omitempty"`
	// WallS is how long the cell took, run and analysis.
	WallS float64 `json:"wall_s"`
}

// Figures are one configuration's figures in a cell's fault phase (and the unaffected endpoint's
// baseline p99 for reference).
type Figures struct {
	UnaffectedP99MS         float64 `json:"unaffected_p99_ms"`
	UnaffectedSuccessRate   float64 `json:"unaffected_success_rate"`
	UnaffectedBaselineP99MS float64 `json:"unaffected_baseline_p99_ms"`
	AffectedThroughputRPS   float64 `json:"affected_success_throughput_rps"`
	AffectedSuccessRate     float64 `json:"affected_success_rate"`
	Requests                int     `json:"requests"` // both endpoints, fault phase
}

// Result says where a sweep went.
type Result struct {
	Dir   string
	Sweep *Sweep
}

// Run runs every cell of grid on base into a new sweep folder under opts.ResultsRoot, then writes
// sweep.json, the heatmaps and sweep.md. Cells run side by side as far as opts.Parallel allows
// (each with its own services, Toxiproxy and load; the default keeps the machine within the
// request budget at which runs stay valid, and every cell's validity is still checked). It
// blocks until the last file is written. sweep.json is rewritten after every cell, so an
// interrupted sweep still describes what ran.
//
// A cell whose run fails or is invalid is recorded (invalid, with the reason) and the sweep goes
// on. When ctx is cancelled the running cell is stopped (experiment.Run leaves its folder
// partial), no further cell starts, the report is written for the cells that ran, and the error
// wraps experiment.ErrInterrupted. Errors before the first cell (a grid or base that does not fit,
// a folder that cannot be created) return a nil Result.
func Run(ctx context.Context, base *scenarios.Scenario, grid Grid, opts Options) (*Result, error) {
	if err := grid.Validate(); err != nil {
		return nil, err
	}
	grid = grid.sorted()
	roles, err := FindRoles(base)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	phase := opts.PhaseDuration
	if phase <= 0 {
		phase = DefaultPhaseDuration
	}
	if opts.LagLimit <= 0 {
		opts.LagLimit = DefaultLagLimit
	}
	opts.Loadgen = append([]loadgen.Opt{loadgen.WithLagLimit(opts.LagLimit)}, opts.Loadgen...)
	th := opts.Thresholds
	if th == (Thresholds{}) {
		th = DefaultThresholds
	}
	// Derive every cell first: a grid the base cannot take fails before anything runs.
	var cells []Cell
	var derived []*scenarios.Scenario
	for _, r := range grid.Rates {
		for _, p := range grid.Sizes {
			for _, f := range grid.Fractions {
				c := Cell{Size: p, Fraction: f, Rate: r}
				sc, err := Derive(base, roles, c, phase)
				if err != nil {
					return nil, err
				}
				cells, derived = append(cells, c), append(derived, sc)
			}
		}
	}
	root := opts.ResultsRoot
	if root == "" {
		root = experiment.DefaultResultsRoot
	}
	dir, id, err := rundir.Create(root, "sweep-"+base.Name, now())
	if err != nil {
		return nil, err
	}
	sw := &Sweep{
		Scenario: base.Name, SweepID: id, Base: base.Path, Command: opts.Command, Grid: grid,
		PhaseDurationS: phase.Seconds(), LagLimitMS: float64(opts.LagLimit) / 1e6, Roles: roles, Thresholds: th, Started: now(),
	}
	for _, c := range cells {
		sw.Cells = append(sw.Cells, CellResult{Cell: c, LatencyMS: c.Fraction * float64(roles.Timeout) / 1e6})
	}
	res := &Result{Dir: dir, Sweep: sw}
	if err := rundir.WriteJSON(filepath.Join(dir, SweepFile), sw); err != nil {
		return res, err
	}
	progress := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format, args...)
		}
	}
	parallel, perCell := opts.Parallel, 2
	if parallel <= 0 {
		parallel = defaultParallel(derived, opts.Load)
	}
	if parallel < 2 {
		perCell = 1
	}
	sw.Parallel = parallel
	progress("sweep %s: %d cells (%d sizes x %d fractions x %d rates), 2 configurations x %v time line each, %d at once, into %s\n",
		base.Name, len(cells), len(grid.Sizes), len(grid.Fractions), len(grid.Rates), 2*phase, parallel, dir)

	runErr := runCells(ctx, dir, derived, roles, th, sw, max(parallel/perCell, 1), perCell, opts, progress)
	if ctx.Err() != nil {
		sw.Partial = true
		if runErr == nil {
			runErr = fmt.Errorf("sweep: %w: %v", experiment.ErrInterrupted, context.Cause(ctx))
		}
	}
	sw.Ended = now()
	werr := Write(dir, sw)
	return res, errors.Join(runErr, werr)
}

// defaultParallel is experiment.DefaultParallel over every cell's plans, for the load layout load.
func defaultParallel(cells []*scenarios.Scenario, load string) int {
	var plans []*experiment.Plan
	for _, sc := range cells {
		ps, err := experiment.Plans(sc, 0)
		if err != nil {
			return 1
		}
		plans = append(plans, ps...)
	}
	return experiment.DefaultParallel(plans, runtime.NumCPU(), load)
}

// runCells runs the cells of sw, cellsAtOnce at a time with perCell configurations at once
// each, recording each cell's result, printing its line and rewriting sweep.json as it ends.
// After an interruption it starts no further cell. It returns the interruption, if any, or the
// first error writing sweep.json.
func runCells(ctx context.Context, dir string, derived []*scenarios.Scenario, roles Roles, th Thresholds, sw *Sweep,
	cellsAtOnce, perCell int, opts Options, progress func(string, ...any)) error {
	var (
		mu      sync.Mutex
		runErr  error
		stopped bool
		wg      sync.WaitGroup
	)
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	slots := make(chan struct{}, cellsAtOnce)
	for i := range sw.Cells {
		slots <- struct{}{}
		mu.Lock()
		stop := stopped || ctx.Err() != nil
		if stop {
			sw.Partial = true
		}
		cr := sw.Cells[i] // a copy: sw is written to sweep.json while cells run
		mu.Unlock()
		if stop {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			start := now()
			err := runCell(ctx, dir, derived[i], roles, th, &cr, perCell, opts)
			cr.WallS = now().Sub(start).Seconds()
			mu.Lock()
			defer mu.Unlock()
			sw.Cells[i] = cr
			progress("cell %d/%d %s\n", i+1, len(sw.Cells), cellLine(&cr, roles))
			if werr := rundir.WriteJSON(filepath.Join(dir, SweepFile), sw); werr != nil && runErr == nil {
				runErr, stopped = werr, true
			}
			if errors.Is(err, experiment.ErrInterrupted) || ctx.Err() != nil {
				sw.Partial, stopped = true, true
				if runErr == nil {
					runErr = err
				}
			}
		}()
	}
	wg.Wait()
	return runErr
}

// runCell runs one derived scenario and fills cr. Failures are recorded in cr; the error is
// returned only so the caller can see an interruption.
func runCell(ctx context.Context, dir string, sc *scenarios.Scenario, roles Roles, th Thresholds, cr *CellResult, parallel int, opts Options) error {
	fail := func(err error) error {
		cr.Valid = false
		cr.Invalid = append(cr.Invalid, err.Error())
		return err
	}
	loaded, err := WriteScenario(filepath.Join(dir, ScenariosDir), sc)
	if err != nil {
		return fail(err)
	}
	cr.Scenario = filepath.Join(ScenariosDir, filepath.Base(loaded.Path))
	for _, c := range loaded.Configurations {
		if c.Name == roles.Split {
			for _, p := range c.Pools {
				cr.SplitPools = append(cr.SplitPools, p.Size)
			}
		}
	}
	res, err := experiment.Run(ctx, loaded, experiment.Options{
		ResultsRoot: dir, Toxiproxy: opts.Toxiproxy, Command: opts.Command, Version: opts.Version, Loadgen: opts.Loadgen,
		Parallel: parallel, Load: opts.Load,
	})
	if res != nil {
		cr.RunDir = filepath.Base(res.Dir)
	}
	if res == nil || (err != nil && !errors.Is(err, experiment.ErrInterrupted)) {
		return fail(fmt.Errorf("run: %w", err))
	}
	aerr := analyseCell(filepath.Join(dir, cr.RunDir), roles, cr)
	if aerr != nil {
		fail(fmt.Errorf("analyse: %w", aerr))
	}
	if cr.Valid {
		cr.Verdict = th.Judge(cr)
	}
	return err
}

// analyseCell reads the cell's run folder and fills its figures and validity.
func analyseCell(runDir string, roles Roles, cr *CellResult) error {
	s, err := report.Analyze(runDir)
	if err != nil {
		return err
	}
	cr.Valid = s.Valid
	cr.Invalid = append(cr.Invalid, s.Invalid...)
	for _, c := range s.Configurations {
		if c.Repetition > 1 {
			continue
		}
		f := figuresOf(c, roles)
		switch c.Config {
		case roles.Shared:
			cr.Shared = f
		case roles.Split:
			cr.Split = f
		}
	}
	if cr.Shared == nil || cr.Split == nil {
		cr.Valid = false
		cr.Invalid = append(cr.Invalid, "a configuration has no fault-phase figures")
	}
	return nil
}

// figuresOf returns a configuration's figures, nil when its fault phase has no requests.
func figuresOf(c model.Configuration, roles Roles) *Figures {
	var f Figures
	found := false
	for _, ph := range c.Phases {
		u, a := ph.Endpoints[roles.Unaffected], ph.Endpoints[roles.Affected]
		switch ph.Name {
		case PhaseBaseline:
			if u != nil {
				f.UnaffectedBaselineP99MS = u.P99MS
			}
		case PhaseFault:
			if u == nil || a == nil || u.Requests == 0 || a.Requests == 0 {
				return nil
			}
			found = true
			f.UnaffectedP99MS, f.UnaffectedSuccessRate = u.P99MS, u.SuccessRate
			f.AffectedThroughputRPS, f.AffectedSuccessRate = a.ThroughputRPS, a.SuccessRate
			f.Requests = u.Requests + a.Requests
		}
	}
	if !found {
		return nil
	}
	return &f
}

// cellLine is a cell's progress line.
func cellLine(cr *CellResult, roles Roles) string {
	var b strings.Builder
	fmt.Fprintf(&b, "P=%-3d %s +%sx timeout (%.0fms), %s/s: ", cr.Size, roles.FaultDependency, fracLabel(cr.Fraction), cr.LatencyMS, rateLabel(cr.Rate))
	if cr.Shared != nil && cr.Split != nil {
		fmt.Fprintf(&b, "%s success shared %s split %s, p99 %s vs %s ms; %s throughput %.1f vs %.1f/s",
			roles.Unaffected, pctS(cr.Shared.UnaffectedSuccessRate), pctS(cr.Split.UnaffectedSuccessRate),
			msS(cr.Shared.UnaffectedP99MS), msS(cr.Split.UnaffectedP99MS),
			roles.Affected, cr.Shared.AffectedThroughputRPS, cr.Split.AffectedThroughputRPS)
	} else {
		b.WriteString("no figures")
	}
	if cr.Verdict != "" {
		fmt.Fprintf(&b, " [%s]", cr.Verdict)
	}
	if !cr.Valid {
		fmt.Fprintf(&b, " INVALID: %s", strings.Join(cr.Invalid, "; "))
	}
	fmt.Fprintf(&b, " (%.1fs)", cr.WallS)
	return b.String()
}

func pctS(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	s := fmt.Sprintf("%.1f%%", 100*v)
	if v < 1 && s == "100.0%" {
		s = "99.9%"
	}
	return s
}

func msS(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
