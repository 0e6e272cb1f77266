package experiment

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// Plan is one configuration run decided in full before anything starts: what to start, what to
// send where and when, which faults to switch at which offsets, and the manifest it will write.
// NewPlan computes it without touching the network, the clock or the disk; execute carries it out.
type Plan struct {
	// Folder is the configuration's folder inside the run folder: the configuration's name, with
	// "-r<N>" appended when the scenario has several repetitions.
	Folder string
	// Scenario is the scenario as run; Configuration the layout this run serves.
	Scenario      *scenarios.Scenario
	Configuration scenarios.Configuration
	// Manifest is the manifest-to-be: identity, seed, topology, resolved phases and faults, one
	// entry per endpoint (rate, arrivals, arrival offset, raw file) and the lag limit. Execution
	// adds what only running can tell: versions, host, times, fault switch times, self-checks.
	Manifest rundir.Manifest
	// Attacks are the endpoints' open-model attacks, in the order of Manifest.Endpoints.
	Attacks []PlannedAttack
	// DependencySeeds seeds each dependency's jitter, in the order of Scenario.Dependencies.
	DependencySeeds []int64
	// Duration is the whole time line; SampleEvery the resource sampling period.
	Duration    time.Duration
	SampleEvery time.Duration
	// LoadTimeout is the load generator's own request timeout.
	LoadTimeout time.Duration
	// Service is the built-in service's config for this configuration, resolved once, with
	// every dependency at its scenarios.PlaceholderURL: execution fills the proxies' addresses
	// (service.Config.WithURLs). The manifest's topology is derived from it (or from the target's
	// stated layout).
	Service service.Config
}

// PlannedAttack is one endpoint's attack: its pacer (arrival offset included) and the target
// path it sends to.
type PlannedAttack struct {
	Path  string
	Pacer loadgen.Pacer
	// Offset is how much earlier than the unshifted schedule this stream sends (see
	// arrivalOffset); 0 for Poisson arrivals.
	Offset time.Duration
}

// NewPlan plans repetition rep (1-based) of configuration conf of sc. lagLimit overrides the
// scenario's load.lag_limit when > 0 (else loadgen.DefaultLagLimit applies). It does not block
// and does not change sc. It returns an error when conf does not translate into a service
// config or an endpoint's rate or arrival process is invalid.
func NewPlan(sc *scenarios.Scenario, conf scenarios.Configuration, rep int, lagLimit time.Duration) (*Plan, error) {
	reps := max(sc.Repetitions, 1)
	p := &Plan{
		Folder:        folderName(conf.Name, rep, reps),
		Scenario:      sc,
		Configuration: conf,
		Duration:      sc.Duration(),
		SampleEvery:   sc.SampleEvery,
		LoadTimeout:   sc.Load.Timeout,
	}
	if p.SampleEvery <= 0 {
		p.SampleEvery = scenarios.DefaultSampleEvery
	}
	for i := range sc.Dependencies {
		p.DependencySeeds = append(p.DependencySeeds, repSeed(sc, rep, i))
	}
	cfg, err := sc.ServiceConfig(conf, nil)
	if err != nil {
		return nil, err
	}
	p.Service = cfg
	m := plannedManifest(sc, conf, cfg, rep, lagLimit)
	p.Manifest = *m
	for i, ep := range sc.Endpoints {
		a, e, err := planAttack(sc, i, ep, rep)
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", ep.Path, err)
		}
		e.Planned = a.Pacer.Hits(p.Duration) // what the load generator's pacer is bounded to
		p.Attacks = append(p.Attacks, a)
		p.Manifest.Endpoints = append(p.Manifest.Endpoints, e)
	}
	return p, nil
}

// Plans plans every repetition of every configuration of sc, repetitions outermost (the order
// the folders are listed in run.json).
func Plans(sc *scenarios.Scenario, lagLimit time.Duration) ([]*Plan, error) {
	var plans []*Plan
	for rep := 1; rep <= max(sc.Repetitions, 1); rep++ {
		for _, conf := range sc.Configurations {
			p, err := NewPlan(sc, conf, rep, lagLimit)
			if err != nil {
				return nil, fmt.Errorf("configuration %s: %w", conf.Name, err)
			}
			plans = append(plans, p)
		}
	}
	return plans, nil
}

func folderName(conf string, rep, reps int) string {
	if reps > 1 {
		return fmt.Sprintf("%s-r%d", conf, rep)
	}
	return conf
}

// repSeed is the seed of random source i in repetition rep: dependencies use i, attacks 100+i.
func repSeed(sc *scenarios.Scenario, rep, i int) int64 { return sc.Seed + int64(rep)*1000 + int64(i) }

func plannedManifest(sc *scenarios.Scenario, conf scenarios.Configuration, cfg service.Config, rep int, lagLimit time.Duration) *rundir.Manifest {
	topo := cfg.Topology()
	if conf.Target != nil && conf.Target.Layout != nil {
		topo = conf.Target.Layout.Topology(sc) // the target's own layout, not the built-in's pools
	}
	m := &rundir.Manifest{
		Scenario:      sc.Name,
		Configuration: conf.Name,
		Repetition:    rep,
		Seed:          sc.Seed,
		ClientTimeout: sc.Timeout,
		Topology:      &topo,
		Phases:        plannedPhases(sc.Phases),
		LagLimit:      resolveLagLimit(lagLimit, sc.Load.LagLimit),
		Valid:         true,
	}
	if len(sc.Resolved) > 0 {
		m.Resolved = map[string]any{}
		for k, v := range sc.Resolved {
			m.Resolved[k] = v
		}
	}
	return m
}

// resolveLagLimit picks the first positive of the command line's, the scenario's and the load
// generator's default.
func resolveLagLimit(flag, scenario time.Duration) time.Duration {
	switch {
	case flag > 0:
		return flag
	case scenario > 0:
		return scenario
	}
	return loadgen.DefaultLagLimit
}

// plannedPhases lays the phases end to end on one time line, each fault with its amounts
// resolved and its switch times not yet measured (-1).
func plannedPhases(phases []scenarios.Phase) []rundir.Phase {
	var out []rundir.Phase
	var off time.Duration
	for _, p := range phases {
		ph := rundir.Phase{Name: p.Name, Start: off, End: off + p.Duration}
		for _, f := range p.Faults {
			f.AppliedAt, f.RemovedAt = -1, -1
			ph.Faults = append(ph.Faults, f)
		}
		out = append(out, ph)
		off += p.Duration
	}
	return out
}

// planAttack chooses endpoint i's pacer (constant or Poisson at its rate, or per-phase rates),
// shifts constant-rate streams by their arrival offset (and, with load.drift, speeds every
// stream but the first by 1/drift requests a second, so that its offset to the first sweeps a
// whole interval every drift), and describes the attack for the manifest.
func planAttack(sc *scenarios.Scenario, i int, ep scenarios.Endpoint, rep int) (PlannedAttack, rundir.Endpoint, error) {
	rate := ep.Rate
	if rate == 0 {
		rate = sc.Load.Rate
	}
	e := rundir.Endpoint{
		Path: ep.Path, RawFile: filepath.Join(rundir.RawDir, rundir.RawFileName(ep.Path)),
		Rate: rate, Timeout: sc.Load.Timeout,
	}
	arr, err := loadgen.ParseArrivals(sc.Load.Arrivals)
	if err != nil {
		return PlannedAttack{}, e, err
	}
	var pacer loadgen.Pacer
	e.Arrivals = string(arr)
	drift := 1.0 // the factor a drifting stream's rates are multiplied by
	if arr == loadgen.ArrivalsConstant && sc.Load.Drift > 0 && i >= 1 && len(sc.Endpoints) >= staggerFrom {
		e.Drift = sc.Load.Drift
		drift = 1 + 1/(rate*sc.Load.Drift.Seconds())
		e.Rate = rate * drift
	}
	if segs, ok := sc.RateSegments(ep); ok {
		// Some phase overrides this endpoint's rate (a burst, a silence): one constant-rate
		// attack across the time line still, its rate changing at the phase offsets.
		for k := range segs {
			segs[k].Rate *= drift
		}
		pacer, err = loadgen.NewPiecewisePacer(segs)
		e.Arrivals = piecewiseArrivals(segs)
	} else {
		pacer, err = loadgen.NewPacer(rate*drift, arr, repSeed(sc, rep, 100+i))
	}
	if e.Drift > 0 {
		e.Arrivals += fmt.Sprintf(", drifting one interval ahead of %s every %v", sc.Endpoints[0].Path, e.Drift)
	}
	if err != nil {
		return PlannedAttack{}, e, err
	}
	a := PlannedAttack{Path: ep.Path, Pacer: pacer}
	if arr == loadgen.ArrivalsConstant {
		if off := arrivalOffset(i, len(sc.Endpoints), rate, rep); off > 0 {
			a.Pacer, a.Offset = loadgen.Shifted{Pacer: pacer, Lead: off}, off
		}
	}
	e.Offset = a.Offset
	return a, e, nil
}

// piecewiseArrivals records a per-phase schedule in the manifest's arrivals field, e.g.
// "constant, per phase: 0s 20/s, 5s 200/s, 8s 20/s" (the manifest's rate is the endpoint's
// normal rate).
func piecewiseArrivals(segs []loadgen.Segment) string {
	parts := make([]string, len(segs))
	for i, g := range segs {
		parts[i] = fmt.Sprintf("%v %g/s", g.Start, g.Rate)
	}
	return loadgen.ArrivalsConstant.String() + ", per phase: " + strings.Join(parts, ", ")
}

// PeakRate is the highest total request rate (per second, over all endpoints) that plan p sends
// at any moment of its time line.
func (p *Plan) PeakRate() float64 {
	sc := p.Scenario
	var peak float64
	for _, ph := range sc.Phases {
		var total float64
		for _, ep := range sc.Endpoints {
			r := ep.Rate
			if r == 0 {
				r = sc.Load.Rate
			}
			if pr, ok := ph.Rates[ep.Path]; ok {
				r = pr
			}
			total += r
		}
		peak = max(peak, total)
	}
	return peak
}
