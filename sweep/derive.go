package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// ErrBase is wrapped by FindRoles when the base scenario lacks what a sweep varies.
var ErrBase = errors.New("base scenario does not fit a sizing sweep")

// Phase names of every derived scenario's time line.
const (
	PhaseBaseline = "baseline"
	PhaseFault    = "fault"
)

// Roles are the parts of the base scenario a sweep varies and reads.
type Roles struct {
	// Shared and Split name the base's shared-mode and split-mode configurations (its roles).
	Shared string `json:"shared"`
	Split  string `json:"split"`
	// FaultDependency is the dependency the base declares its faults hit (roles.fault_dependency).
	FaultDependency string `json:"fault_dependency"`
	// Affected calls FaultDependency, Unaffected does not (roles.affected, roles.unaffected).
	Affected   string `json:"affected"`
	Unaffected string `json:"unaffected"`
	// BaseSize is the size of the base's shared pool: pools are scaled by P / BaseSize.
	BaseSize int `json:"base_size"`
	// Timeout is the base's client timeout; a cell's fault delay is fraction x Timeout.
	Timeout time.Duration `json:"timeout_ns"`
	// Jitter is the base latency fault's jitter, kept in every cell.
	Jitter time.Duration `json:"jitter_ns,omitempty"`
}

// FindRoles reads the roles base declares in its roles: block (shared, split, fault_dependency,
// affected, unaffected, latency_phase); nothing is guessed from modes or faults. The shared
// configuration must have one pool (its size is P), and the latency phase's latency fault on the
// fault dependency gives the jitter every cell keeps. It fails, wrapping ErrBase, naming every
// role that is missing or does not fit.
func FindRoles(base *scenarios.Scenario) (Roles, error) {
	d := base.Roles
	r := Roles{Shared: d.Shared, Split: d.Split, FaultDependency: d.FaultDependency, Affected: d.Affected,
		Unaffected: d.Unaffected, Timeout: base.Timeout}
	var miss []string
	byName := func(name string) *scenarios.Configuration {
		for i := range base.Configurations {
			if base.Configurations[i].Name == name {
				return &base.Configurations[i]
			}
		}
		return nil
	}
	switch c := byName(d.Shared); {
	case d.Shared == "":
		miss = append(miss, "roles.shared (a configuration of mode shared with one pool)")
	case c == nil || c.Mode != string(service.ModeShared) || len(c.Pools) != 1:
		miss = append(miss, fmt.Sprintf("roles.shared %q to be a configuration of mode shared with one pool", d.Shared))
	default:
		r.BaseSize = c.Pools[0].Size
	}
	switch c := byName(d.Split); {
	case d.Split == "":
		miss = append(miss, "roles.split (a configuration of mode split)")
	case c == nil || c.Mode != string(service.ModeSplit):
		miss = append(miss, fmt.Sprintf("roles.split %q to be a configuration of mode split", d.Split))
	}
	if d.FaultDependency == "" {
		miss = append(miss, "roles.fault_dependency (the dependency the sweep slows down)")
	}
	found := false
	for _, ph := range base.Phases {
		if ph.Name != d.LatencyPhase {
			continue
		}
		for _, f := range ph.Faults {
			if l, ok := f.Params.(*faults.Latency); ok && f.Dependency == d.FaultDependency && !found {
				r.Jitter, found = l.Jitter, true
			}
		}
	}
	if !found {
		miss = append(miss, fmt.Sprintf("roles.latency_phase naming a phase with a latency fault on %q", d.FaultDependency))
	}
	endpoint := func(key, path string, calls bool) {
		i := slices.IndexFunc(base.Endpoints, func(e scenarios.Endpoint) bool { return e.Path == path })
		switch {
		case path == "":
			miss = append(miss, "roles."+key)
		case i < 0 || slices.Contains(base.Endpoints[i].Calls, d.FaultDependency) != calls:
			verb := "calling"
			if !calls {
				verb = "not calling"
			}
			miss = append(miss, fmt.Sprintf("roles.%s %q to be an endpoint %s %s", key, path, verb, d.FaultDependency))
		}
	}
	endpoint("affected", d.Affected, true)
	endpoint("unaffected", d.Unaffected, false)
	if len(miss) > 0 {
		return r, fmt.Errorf("%w: %s needs %s", ErrBase, base.Name, strings.Join(miss, ", "))
	}
	return r, nil
}

// Cell is one point of the grid.
type Cell struct {
	Size     int     `json:"size"`
	Fraction float64 `json:"fraction"`
	Rate     float64 `json:"rate"`
}

// Name is the cell's part of scenario and folder names: "p10-f0.9-r20".
func (c Cell) Name() string {
	return fmt.Sprintf("p%d-f%s-r%s", c.Size, fracLabel(c.Fraction), rateLabel(c.Rate))
}

// scalePool returns p with its size and queue scaled by size/base (integer division, at least
// one slot), so the base's kinds, waits and proportions are kept.
func scalePool(p scenarios.Pool, size, base int) scenarios.Pool {
	q := p
	q.Size = max(1, p.Size*size/base)
	q.QueueCapacity = p.QueueCapacity * size / base
	q.Dependencies = slices.Clone(p.Dependencies)
	return q
}

// Derive returns the scenario of one cell, built from base: only the shared and split
// configurations, their pools scaled by cell.Size / roles.BaseSize; a time line of a baseline and
// a fault phase of phase each, the fault delaying roles.FaultDependency by cell.Fraction x the
// timeout (with the base fault's jitter); every endpoint at cell.Rate; one repetition. The
// scenario is named "<base>-<cell>" and is validated; base is not changed. The returned scenario
// has no Path: WriteScenario gives it one.
func Derive(base *scenarios.Scenario, roles Roles, cell Cell, phase time.Duration) (*scenarios.Scenario, error) {
	if phase <= 0 {
		return nil, fmt.Errorf("derive %s: phase duration %v must be > 0", cell.Name(), phase)
	}
	if roles.BaseSize < 1 {
		return nil, fmt.Errorf("derive %s: %w: no shared pool size", cell.Name(), ErrBase)
	}
	sc := &scenarios.Scenario{
		Name:         base.Name + "-" + cell.Name(),
		Description:  fmt.Sprintf("sizing sweep cell of %s: P=%d, %s delayed by %sx the timeout, %s/s per endpoint", base.Name, cell.Size, roles.FaultDependency, fracLabel(cell.Fraction), rateLabel(cell.Rate)),
		Seed:         base.Seed,
		Timeout:      base.Timeout,
		Dependencies: slices.Clone(base.Dependencies),
		Repetitions:  1,
		Limits:       base.Limits,
		SampleEvery:  base.SampleEvery,
		Load:         scenarios.LoadSpec{Rate: cell.Rate, Arrivals: base.Load.Arrivals, Drift: base.Load.Drift, Timeout: base.Load.Timeout},
		Resolved:     map[string]string{},
	}
	for _, e := range base.Endpoints {
		e.Calls = slices.Clone(e.Calls)
		e.Rate = cell.Rate
		sc.Endpoints = append(sc.Endpoints, e)
	}
	for i, c := range base.Configurations {
		if c.Name != roles.Shared && c.Name != roles.Split {
			continue
		}
		d := scenarios.Configuration{Name: c.Name, Mode: c.Mode, Breakers: c.Breakers, Size: cell.Size}
		var parts []string
		for _, p := range c.Pools {
			q := scalePool(p, cell.Size, roles.BaseSize)
			d.Pools = append(d.Pools, q)
			parts = append(parts, fmt.Sprintf("%s %d->%d", p.Name, p.Size, q.Size))
		}
		sc.Configurations = append(sc.Configurations, d)
		sc.Resolved[fmt.Sprintf("configurations[%d].pools", len(sc.Configurations)-1)] = fmt.Sprintf(
			"sweep: base configurations[%d] scaled by P/%d = %d/%d: %s", i, roles.BaseSize, cell.Size, roles.BaseSize, strings.Join(parts, ", "))
	}
	latency := time.Duration(cell.Fraction * float64(base.Timeout))
	sc.Phases = []scenarios.Phase{
		{Name: PhaseBaseline, Duration: phase},
		{Name: PhaseFault, Duration: phase, Faults: []faults.Fault{
			faults.New(roles.FaultDependency, &faults.Latency{Latency: latency, Jitter: roles.Jitter}),
		}},
	}
	sc.Resolved["phases[1].faults[0].latency"] = fmt.Sprintf("sweep: %sx timeout = %v (timeout %v)", fracLabel(cell.Fraction), latency, base.Timeout)
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("derive %s: %w", cell.Name(), err)
	}
	return sc, nil
}

// WriteScenario writes sc as YAML to dir/<sc.Name>.yaml (creating dir), loads the file back and
// returns the loaded scenario, whose Path is that file: what a run copies into its folder is then
// exactly what it ran. It fails if the file exists, cannot be written, or does not load back;
// Resolved notes of sc are carried over.
func WriteScenario(dir string, sc *scenarios.Scenario) (*scenarios.Scenario, error) {
	data, err := yaml.Marshal(sc)
	if err != nil {
		return nil, fmt.Errorf("encode scenario %s: %w", sc.Name, err)
	}
	header := fmt.Sprintf("# %s\n# Written by bulkhead sweep; every default and relative amount is resolved.\n", sc.Description)
	data = append([]byte(header), data...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("write scenario %s: %w", sc.Name, err)
	}
	path := filepath.Join(dir, sc.Name+".yaml")
	if _, err := os.Stat(path); err == nil {
		return nil, fmt.Errorf("write scenario %s: %w", path, os.ErrExist)
	}
	if err := rundir.WriteFile(path, data); err != nil {
		return nil, err
	}
	loaded, err := scenarios.Load(path)
	if err != nil {
		return nil, fmt.Errorf("written scenario does not load back: %w", err)
	}
	for k, v := range sc.Resolved {
		if _, ok := loaded.Resolved[k]; !ok {
			loaded.Resolved[k] = v
		}
	}
	return loaded, nil
}
