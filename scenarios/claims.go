package scenarios

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
)

// resourceKinds are the prefixes of resource names (outcome.Resource.Name) and whether they
// name a dependency ("conns:B") or a pool ("pool:shared").
var resourceKinds = map[string]string{
	"pool": "pool", "queue": "pool", "conns": "dependency", "calls": "dependency", "breaker": "dependency",
	"inbound": "inbound", "retry": "inbound", "eventloop": "scraped", "cpu": "scraped",
}

// plainResources are the resource names without a ":" part.
var plainResources = []string{"inbound-conns", "outbound-conns", "goroutines", "heap-bytes", "stack-bytes"}

// checkNoiseFloor checks that every metric given a noise floor is one of the catalogue's.
func (s *Scenario) checkNoiseFloor(p *problems) {
	for _, name := range slices.Sorted(maps.Keys(s.NoiseFloor)) {
		if _, ok := claim.Lookup(name, true); ok {
			continue
		}
		if _, ok := claim.Lookup(name, false); !ok {
			p.add(join("noise_floor", name), "unknown metric %q (endpoint metrics: %s; resource metrics: %s)",
				name, strings.Join(claim.EndpointMetrics, ", "), strings.Join(claim.ResourceMetrics, ", "))
		}
	}
}

// checkClaims validates the claims against the rest of the scenario: unique ids, known
// operators and metrics, names (configuration, phase, endpoint, resource) that exist, and the
// phases of normal_load claims declared as normal load.
func (s *Scenario) checkClaims(p *problems) {
	ids := map[string]bool{}
	written := 0
	for _, c := range s.Claims {
		path := index("claims", written)
		if c.Test != "" {
			path = fmt.Sprintf("tests(%s).%s", c.Test, c.ID) // derived: no line of its own
		} else {
			written++
		}
		s.checkUniqueName(p, join(path, "id"), "claim", c.ID, ids)
		if strings.TrimSpace(c.Says) == "" {
			p.add(join(path, "says"), "must say what the claim is")
		}
		s.checkCondition(p, path, c.Condition)
		for j, r := range c.Require {
			s.checkCondition(p, index(join(path, "require"), j), r)
		}
		if c.NormalLoad {
			for _, m := range []*claim.Measure{&c.Measure, c.Measure.Other(), c.Than, otherOf(c.Than)} {
				if m != nil && m.Phase != "" && !slices.Contains(s.Roles.NormalLoad, m.Phase) {
					p.add(join(path, "normal_load"), "a claim about normal load may only measure phases listed in roles.normal_load (%s); %q is not",
						strings.Join(s.Roles.NormalLoad, ", "), m.Phase)
					break
				}
			}
		}
	}
}

func otherOf(m *claim.Measure) *claim.Measure {
	if m == nil {
		return nil
	}
	return m.Other()
}

// checkCondition checks one comparison at path (a claim, or one of its preconditions).
func (s *Scenario) checkCondition(p *problems, path string, c claim.Condition) {
	if !slices.Contains(claim.ClaimOps, c.Op) {
		p.add(join(path, "op"), "unknown operator %q (known: %s)", c.Op, strings.Join(claim.ClaimOps, ", "))
	}
	switch {
	case c.Value == nil && c.Than == nil:
		p.add(path, "a claim needs a right side: value or than")
	case c.Value != nil && c.Than != nil:
		p.add(join(path, "than"), "a claim takes value or than, not both")
	}
	if c.Value != nil && (math.IsNaN(*c.Value) || math.IsInf(*c.Value, 0)) {
		p.add(join(path, "value"), "must be a finite number")
	}
	if c.Factor < 0 || math.IsNaN(c.Factor) || math.IsInf(c.Factor, 0) {
		p.add(join(path, "factor"), "must be > 0 (omit it for 1), got %v", c.Factor)
	}
	switch {
	case c.Op == claim.OpWithin && (!(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 0)):
		p.add(join(path, "tolerance"), "must be >= 0, got %v", c.Tolerance)
	case c.Op != claim.OpWithin && c.Tolerance != 0:
		p.add(join(path, "tolerance"), "only op %q takes a tolerance (op is %q)", claim.OpWithin, c.Op)
	}
	s.checkFullMeasure(p, join(path, "measure"), c.Measure)
	if c.Than != nil {
		s.checkFullMeasure(p, join(path, "than"), *c.Than)
		if claim.UnitOf(c.Measure) != claim.UnitOf(*c.Than) && c.Factor == 0 {
			p.add(join(path, "than"), "compares %s with %s: different units; give a factor to say how they relate",
				c.Measure.Metric, c.Than.Metric)
		}
	}
}

// checkFullMeasure checks a measure and the figure its minus: or over: names.
func (s *Scenario) checkFullMeasure(p *problems, path string, m claim.Measure) {
	s.checkMeasure(p, path, m.Base())
	if m.Minus != nil && m.Over != nil {
		p.add(join(path, "over"), "a measure takes minus or over, not both")
	}
	if o := m.Other(); o != nil {
		key := "minus"
		if m.Minus == nil {
			key = "over"
		}
		s.checkMeasure(p, join(path, key), *o)
		if claim.UnitOf(*o) != claim.UnitOf(m.Base()) {
			p.add(join(join(path, key), "metric"), "compares %s with %s: different units", m.Metric, o.Metric)
		}
	}
}

// checkRoles checks that the roles: block names configurations, a dependency, endpoints and
// phases that exist, and that they fit together: the affected endpoint calls the fault
// dependency and the unaffected one does not, the latency phase slows it and the error phase
// makes it fail fast.
func (s *Scenario) checkRoles(p *problems) {
	r := s.Roles
	cfg := func(key, name, mode string) {
		if name == "" {
			return
		}
		i := slices.IndexFunc(s.Configurations, func(c Configuration) bool { return c.Name == name })
		if i < 0 {
			p.add(join("roles", key), "unknown configuration %q", name)
		} else if m := s.Configurations[i].EffectiveMode(); m != mode {
			p.add(join("roles", key), "configuration %q has mode %q, not %s", name, m, mode)
		}
	}
	cfg("shared", r.Shared, "shared")
	cfg("split", r.Split, "split")
	if r.FaultDependency != "" && !slices.ContainsFunc(s.Dependencies, func(d Dependency) bool { return d.Name == r.FaultDependency }) {
		p.add(join("roles", "fault_dependency"), "unknown dependency %q (known: %s)", r.FaultDependency, s.knownList())
	}
	ep := func(key, path string, calls bool) {
		if path == "" {
			return
		}
		i := slices.IndexFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == path })
		switch {
		case i < 0:
			p.add(join("roles", key), "unknown endpoint %q", path)
		case r.FaultDependency == "":
			p.add(join("roles", key), "needs roles.fault_dependency to say what it is affected by")
		case slices.Contains(s.Endpoints[i].Calls, r.FaultDependency) != calls:
			verb := "calls"
			if calls {
				verb = "does not call"
			}
			p.add(join("roles", key), "endpoint %q %s %s", path, verb, r.FaultDependency)
		}
	}
	ep("affected", r.Affected, true)
	ep("unaffected", r.Unaffected, false)
	phase := func(key, name string, want func(faults.Fault) bool, what string) {
		if name == "" {
			return
		}
		i := slices.IndexFunc(s.Phases, func(ph Phase) bool { return ph.Name == name })
		if i < 0 {
			p.add(join("roles", key), "unknown phase %q", name)
			return
		}
		if want != nil && !slices.ContainsFunc(s.Phases[i].Faults, want) {
			p.add(join("roles", key), "phase %q has no %s", name, what)
		}
	}
	phase("baseline", r.Baseline, nil, "")
	if r.Baseline != "" {
		if i := slices.IndexFunc(s.Phases, func(ph Phase) bool { return ph.Name == r.Baseline }); i >= 0 && len(s.Phases[i].Faults) > 0 {
			p.add(join("roles", "baseline"), "phase %q has faults; a baseline has none", r.Baseline)
		}
	}
	latency := func(f faults.Fault) bool {
		_, ok := f.Params.(*faults.Latency)
		return f.Dependency == r.FaultDependency && ok
	}
	fast := func(f faults.Fault) bool { return f.Dependency == r.FaultDependency && f.Symptom().FastError }
	phase("latency_phase", r.LatencyPhase, latency, "latency fault on "+r.FaultDependency)
	phase("error_phase", r.ErrorPhase, fast, "fault on "+r.FaultDependency+" that fails calls at once (reset, down, an error status)")
	for i, name := range r.NormalLoad {
		phase(index("normal_load", i), name, nil, "")
	}
}

func (s *Scenario) checkMeasure(p *problems, path string, m claim.Measure) {
	// The subject decides which entry of the catalogue a name is ("rejected" is both): an
	// endpoint metric when the measure names an endpoint, a resource metric when it names only
	// a resource, and either (endpoint first) when it names neither.
	entry, ok := claim.MetricOf(m)
	if !ok && m.Endpoint == "" && m.Resource == "" {
		entry, ok = claim.Lookup(m.Metric, true)
	}
	if !ok {
		if other, found := claim.Lookup(m.Metric, m.Endpoint == ""); found {
			entry, ok = other, true // the wrong subject: said below
		}
	}
	if !ok {
		p.add(join(path, "metric"), "unknown metric %q (endpoint metrics: %s; resource metrics: %s)",
			m.Metric, strings.Join(claim.EndpointMetrics, ", "), strings.Join(claim.ResourceMetrics, ", "))
	}
	var conf *Configuration
	for i := range s.Configurations {
		if s.Configurations[i].Name == m.Configuration {
			conf = &s.Configurations[i]
		}
	}
	if conf == nil {
		var names []string
		for _, c := range s.Configurations {
			names = append(names, c.Name)
		}
		p.add(join(path, "configuration"), "unknown configuration %q (known: %s)", m.Configuration, strings.Join(names, ", "))
	}
	if !slices.ContainsFunc(s.Phases, func(ph Phase) bool { return ph.Name == m.Phase }) {
		var names []string
		for _, ph := range s.Phases {
			names = append(names, ph.Name)
		}
		p.add(join(path, "phase"), "unknown phase %q (known: %s)", m.Phase, strings.Join(names, ", "))
	}
	if !ok {
		return
	}
	for _, k := range entry.Keys {
		if (k == "level_of" && m.LevelOf == "") || (k == "resource" && entry.Subject == claim.OfEndpoint && m.Resource == "") {
			p.add(join(path, k), "%s needs %s: (%s)", m.Metric, k, entry.Doc)
		}
	}
	if m.LevelOf != "" && !entry.Takes("level_of") {
		p.add(join(path, "level_of"), "%s takes no level_of (only time_to_level_s does)", m.Metric)
	}
	if m.Until != "" && !entry.Takes("until") {
		p.add(join(path, "until"), "%s takes no until (resource metrics of a window do)", m.Metric)
	}
	if m.LevelOf != "" && !slices.ContainsFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == m.LevelOf }) {
		p.add(join(path, "level_of"), "unknown endpoint %q", m.LevelOf)
	}
	switch entry.Subject {
	case claim.OfEndpoint:
		if m.Resource != "" && !entry.Takes("resource") {
			p.add(join(path, "resource"), "%s is an endpoint metric: name an endpoint, not a resource", m.Metric)
		} else if m.Resource != "" {
			s.checkResource(p, join(path, "resource"), m.Resource, conf)
		}
		if m.Endpoint == claim.Others {
			if n := len(s.othersEndpoints()); len(s.Endpoints) <= othersFrom || n < 2 {
				p.add(join(path, "endpoint"), "%q pools the endpoints that call no faulted dependency, in a scenario of more than %d endpoints; this one has %d endpoints, %d of them unfaulted",
					claim.Others, othersFrom, len(s.Endpoints), n)
			}
		} else if m.Endpoint == "" {
			p.add(join(path, "endpoint"), "%s is an endpoint metric: name the endpoint", m.Metric)
		} else if !slices.ContainsFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == m.Endpoint }) {
			var paths []string
			for _, e := range s.Endpoints {
				paths = append(paths, e.Path)
			}
			p.add(join(path, "endpoint"), "unknown endpoint %q (known: %s)", m.Endpoint, strings.Join(paths, ", "))
		}
	case claim.OfResource:
		if m.Endpoint != "" {
			p.add(join(path, "endpoint"), "%s is a resource metric: name a resource, not an endpoint", m.Metric)
		}
		if m.Resource == "" {
			p.add(join(path, "resource"), "%s is a resource metric: name the resource (pool:<name>, queue:<pool>, conns:<dep>, calls:<dep>, breaker:<dep>, inbound:<path>, retry:<path>, %s)",
				m.Metric, strings.Join(plainResources, ", "))
		} else {
			s.checkResource(p, join(path, "resource"), m.Resource, conf)
		}
		if entry.ResourcePrefix != "" && !strings.HasPrefix(m.Resource, entry.ResourcePrefix) {
			p.add(join(path, "metric"), "%s is a metric of %s<...> resources (%s), got resource %q", m.Metric, entry.ResourcePrefix, entry.Doc, m.Resource)
		}
		if m.Until != "" {
			s.checkResource(p, join(path, "until"), m.Until, conf)
		}
	}
}

// othersFrom is the number of endpoints above which the report pools the unfaulted ones into one
// group (report/ingest's groupFrom): what a measure of claim.Others measures.
const othersFrom = 8

// othersEndpoints returns the endpoints that call no dependency any phase faults.
func (s *Scenario) othersEndpoints() []string {
	faulted := map[string]bool{}
	for _, ph := range s.Phases {
		for _, f := range ph.Faults {
			faulted[f.Dependency] = true
		}
	}
	var out []string
	for _, e := range s.Endpoints {
		if !slices.ContainsFunc(e.Calls, func(d string) bool { return faulted[d] }) {
			out = append(out, e.Path)
		}
	}
	return out
}

// checkResource checks that a resource name can appear in resources.csv for configuration conf
// (nil when the configuration is unknown: then only the dependency names are checked).
func (s *Scenario) checkResource(p *problems, path, name string, conf *Configuration) {
	if slices.Contains(plainResources, name) {
		return
	}
	kind, what, ok := strings.Cut(name, ":")
	role, known := resourceKinds[kind]
	if !ok || !known || what == "" {
		p.add(path, "unknown resource %q (pool:<name>, queue:<pool>, conns:<dep>, calls:<dep>, breaker:<dep>, inbound:<path>, retry:<path>, %s)",
			name, strings.Join(plainResources, ", "))
		return
	}
	if role == "inbound" {
		if !slices.ContainsFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == what && e.Inbound != nil }) {
			p.add(path, "%q: %q is not an inbound endpoint", name, what)
		}
		return
	}
	if role == "dependency" {
		i := slices.IndexFunc(s.Dependencies, func(d Dependency) bool { return d.Name == what })
		switch {
		case i < 0:
			p.add(path, "%q: unknown dependency %q (known: %s)", name, what, s.knownList())
		case kind == "breaker" && s.Dependencies[i].Breaker == nil:
			p.add(path, "%q: dependency %q declares no breaker", name, what)
		case kind == "breaker" && conf != nil && conf.Breakers != nil && !*conf.Breakers:
			p.add(path, "%q: configuration %q turns breakers off", name, conf.Name)
		}
		return
	}
	// A target that is not the built-in service has the resources its /metrics gives: a claim
	// may name one directly, pool and queue included, whatever pools it declares.
	if conf == nil || conf.Target != nil || role == "scraped" {
		return
	}
	i := slices.IndexFunc(conf.Pools, func(pl Pool) bool { return pl.Name == what })
	switch {
	case i < 0:
		var names []string
		for _, pl := range conf.Pools {
			names = append(names, pl.Name)
		}
		p.add(path, "%q: configuration %q has no pool %q (pools: %s)", name, conf.Name, what, strings.Join(names, ", "))
	case kind == "queue" && conf.Pools[i].QueueCapacity == 0:
		p.add(path, "%q: pool %q of configuration %q has no queue", name, what, conf.Name)
	}
}
