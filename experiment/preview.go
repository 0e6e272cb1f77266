package experiment

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
	"github.com/bulkheadlab/bulkhead/target"
)

// Preview is a run's plans in figures, before anything starts: what `bulkhead plan` prints
// (and writes with --json). It is read off the same plans Run executes (Plans, after the
// command line's overrides), so what it says is what a run of the same scenario does.
type Preview struct {
	Scenario string `json:"scenario"`
	Path     string `json:"path"`
	// TimelineS is one configuration run's time line; Repetitions how many times each
	// configuration runs; Runs the configuration runs in all; Parallel how many run at once.
	TimelineS   float64 `json:"timeline_s"`
	Repetitions int     `json:"repetitions"`
	Runs        int     `json:"runs"`
	Parallel    int     `json:"parallel"`
	// Configurations are the layouts compared, each as its first repetition plans it (the
	// other repetitions differ in their seeds and arrival offsets only).
	Configurations []ConfigPreview `json:"configurations"`
	// Phases are the time line, the same in every configuration: faults resolved, and the
	// requests each endpoint's plan sends in the phase (first repetition).
	Phases []PhasePreview `json:"phases"`
	// Resolved lists what the loader resolved, by field: amounts relative to the timeout, pool
	// shorthands, defaults derived from other fields.
	Resolved map[string]string `json:"resolved,omitempty"`
	// Claims are the claims the run is judged by, each with whether the planned requests can
	// bound its figures (scenarios.Feasibility).
	Claims []ClaimPreview `json:"claims,omitempty"`
}

// ConfigPreview is one configuration: its pools and their slots in all, and its system under
// test with its placeholders as they will be filled.
type ConfigPreview struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
	// Pools are the built-in service's pools, or the pools a target states it has (its
	// layout); Slots their sizes' sum, 0 when a size is unknown.
	Pools []PoolPreview `json:"pools,omitempty"`
	Slots int           `json:"slots"`
	// Target is the kind of the system under test (builtin for the built-in service), Doc what
	// the kind is; Strings the target's keys that hold placeholders, filled as far as the plan
	// knows (ports and proxy addresses chosen at start are named, not invented).
	Target  string            `json:"target"`
	Doc     string            `json:"doc,omitempty"`
	Strings map[string]string `json:"strings,omitempty"`
	// Version is the command whose output the manifest records as the target's version.
	Version []string `json:"version,omitempty"`
}

// PoolPreview is one pool of a configuration.
type PoolPreview struct {
	Name         string        `json:"name"`
	Kind         string        `json:"kind,omitempty"`
	Size         int           `json:"size"`
	Queue        int           `json:"queue,omitempty"`
	MaxWait      time.Duration `json:"max_wait_ns,omitempty"`
	Dependencies []string      `json:"dependencies"`
	Inbound      []string      `json:"inbound,omitempty"`
}

// PhasePreview is one phase of the time line.
type PhasePreview struct {
	Name   string   `json:"name"`
	StartS float64  `json:"start_s"`
	EndS   float64  `json:"end_s"`
	Faults []string `json:"faults,omitempty"`
	// Rates and Requests are per endpoint path: the rate sent at in the phase (requests per
	// second) and the requests the plan schedules in it.
	Rates    map[string]float64 `json:"rates"`
	Requests map[string]uint64  `json:"requests"`
}

// ClaimPreview is one claim and the figures of it the plan cannot bound.
type ClaimPreview struct {
	ID   string `json:"id"`
	Says string `json:"says"`
	// Test is the named test that derived the claim ("" for one written in claims:).
	Test string `json:"test,omitempty"`
	// Feasible is false when some figure cannot be bounded: the claim can then only come out
	// inconclusive; Infeasible says which and why.
	Feasible   bool     `json:"feasible"`
	Infeasible []string `json:"infeasible,omitempty"`
}

// NewPreview reads plans (as Plans returns them for sc) into a Preview, with parallel as
// Parallel resolved it. It does not block and changes nothing.
func NewPreview(sc *scenarios.Scenario, plans []*Plan, parallel int) Preview {
	pv := Preview{
		Scenario: sc.Name, Path: sc.Path, TimelineS: sc.Duration().Seconds(),
		Repetitions: max(sc.Repetitions, 1), Runs: len(plans), Parallel: parallel,
		Resolved: sc.Resolved,
	}
	seen := map[string]bool{}
	for _, p := range plans {
		if seen[p.Configuration.Name] {
			continue
		}
		seen[p.Configuration.Name] = true
		pv.Configurations = append(pv.Configurations, configPreview(sc, p))
		if len(pv.Phases) == 0 {
			pv.Phases = phasePreviews(sc, p)
		}
	}
	pv.Claims = claimPreviews(sc)
	return pv
}

func configPreview(sc *scenarios.Scenario, p *Plan) ConfigPreview {
	c := p.Configuration
	cp := ConfigPreview{Name: c.Name, Mode: c.EffectiveMode(), Target: target.BuiltInKind}
	if c.Target != nil && c.Target.Layout != nil {
		for _, lp := range c.Target.Layout.Pools {
			cp.Pools = append(cp.Pools, PoolPreview{Name: lp.Name, Size: lp.Size, MaxWait: lp.MaxWait, Dependencies: lp.Dependencies})
		}
	} else {
		inbound := map[string][]string{}
		for _, pl := range c.Pools {
			inbound[pl.Name] = pl.Inbound
		}
		for _, pl := range p.Service.Pools {
			cp.Pools = append(cp.Pools, poolPreview(pl, inbound[pl.Name]))
		}
	}
	for _, pl := range cp.Pools {
		if pl.Size <= 0 {
			cp.Slots = 0
			break
		}
		cp.Slots += pl.Size
	}
	if t := c.TargetConfig(); t != nil {
		cp.Target = t.Kind
		if k, err := target.Of(t); err == nil {
			cp.Doc = k.Doc()
		}
		cp.Strings = plannedStrings(sc, t)
		cp.Version = t.Version
	}
	return cp
}

func poolPreview(pl service.PoolConfig, inbound []string) PoolPreview {
	return PoolPreview{Name: pl.Name, Kind: string(pl.Kind), Size: pl.Size, Queue: pl.QueueCapacity, MaxWait: pl.MaxWait,
		Dependencies: pl.Dependencies, Inbound: inbound}
}

// plannedStrings returns the target's strings that hold placeholders, each filled as far as the
// plan knows: a dependency with a fixed listen address is reached there; ports and proxy
// addresses chosen when the configuration starts are written <port>, <port:NAME> and
// <proxy of NAME>; ports the scenario fixes (target.FixedPorts: an image's) are written as they are.
func plannedStrings(sc *scenarios.Scenario, t *target.Config) map[string]string {
	ports := map[string]string{}
	strs := t.Strings()
	var fixed map[string]int
	if k, err := target.Of(t); err == nil {
		if fp, ok := k.(target.FixedPorts); ok {
			fixed = fp.Ports(t)
		}
	}
	for _, name := range target.PortNames(slices.Collect(maps.Values(strs))...) {
		switch n, ok := fixed[name]; {
		case ok && n > 0:
			ports[name] = strconv.Itoa(n)
		case name == "":
			ports[name] = "<port>"
		default:
			ports[name] = "<port:" + name + ">"
		}
	}
	deps := map[string]string{}
	for _, d := range sc.Dependencies {
		deps[d.Name] = "<proxy of " + d.Name + ">"
		if d.Listen != "" {
			deps[d.Name] = d.Listen
		}
	}
	out := map[string]string{}
	for key, s := range strs {
		if !strings.Contains(s, "{") {
			continue
		}
		v, err := target.ExpandAt(s, "<host>", ports, deps)
		if err != nil {
			v = s + " (" + err.Error() + ")" // the loader refuses this; shown as written
		}
		out[key] = v
	}
	return out
}

// phasePreviews lays out the plan's time line with each endpoint's scheduled requests per
// phase: the sends due in [start, end), as the report assigns requests to phases by send time.
func phasePreviews(sc *scenarios.Scenario, p *Plan) []PhasePreview {
	var out []PhasePreview
	for i, ph := range p.Manifest.Phases {
		pp := PhasePreview{Name: ph.Name, StartS: ph.Start.Seconds(), EndS: ph.End.Seconds(),
			Rates: map[string]float64{}, Requests: map[string]uint64{}}
		for _, f := range ph.Faults {
			pp.Faults = append(pp.Faults, f.String())
		}
		for j, a := range p.Attacks {
			ep := sc.Endpoints[j]
			rate := ep.Rate
			if r, ok := sc.Phases[i].Rates[ep.Path]; ok {
				rate = r
			}
			if ep.Rate > 0 && j < len(p.Manifest.Endpoints) {
				rate *= p.Manifest.Endpoints[j].Rate / ep.Rate // a drifting stream's (load.drift)
			}
			pp.Rates[a.Path] = rate
			pp.Requests[a.Path] = dueBefore(a, ph.End) - dueBefore(a, ph.Start)
		}
		out = append(out, pp)
	}
	return out
}

// dueBefore counts a's sends due before offset t.
func dueBefore(a PlannedAttack, t time.Duration) uint64 {
	if t <= 0 {
		return 0
	}
	return a.Pacer.Hits(t - 1)
}

func claimPreviews(sc *scenarios.Scenario) []ClaimPreview {
	bad := map[string][]string{}
	for _, f := range sc.Feasibility() {
		if !f.OK || f.Why != "" {
			bad[f.Claim] = append(bad[f.Claim], fmt.Sprintf("%s: %s", f.Figure, f.Why))
		}
	}
	var out []ClaimPreview
	for _, c := range sc.Claims {
		out = append(out, ClaimPreview{ID: c.ID, Says: c.Says, Test: c.Test, Feasible: len(bad[c.ID]) == 0, Infeasible: bad[c.ID]})
	}
	return out
}
