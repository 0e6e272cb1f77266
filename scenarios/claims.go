package scenarios

import (
	"math"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"gopkg.in/yaml.v3"
)

// resourceKinds are the prefixes of resource names (outcome.Resource.Name) and whether they
// name a dependency ("conns:B") or a pool ("pool:shared").
var resourceKinds = map[string]string{
	"pool": "pool", "queue": "pool", "conns": "dependency", "calls": "dependency", "breaker": "dependency",
	"inbound": "inbound", "retry": "inbound",
}

// plainResources are the resource names without a ":" part.
var plainResources = []string{"inbound-conns", "outbound-conns", "goroutines", "heap-bytes", "stack-bytes"}

func (d *decoder) claim(n *yaml.Node, path string, c *claim.Claim) {
	fields := append([]field{
		{name: "id", required: true, decode: d.str(&c.ID)},
		{name: "says", required: true, decode: d.str(&c.Says)},
	}, d.conditionFields(&c.Condition, true)...)
	fields = append(fields,
		field{name: "require", decode: func(n *yaml.Node, path string) {
			c.Require = make([]claim.Condition, lenOf(n))
			d.sequence(n, path, func(i int, n *yaml.Node, p string) {
				d.mapping(n, p, d.conditionFields(&c.Require[i], true))
			})
		}},
		field{name: "normal_load", decode: func(n *yaml.Node, path string) {
			var b *bool
			d.boolPtr(&b)(n, path)
			c.NormalLoad = b != nil && *b
		}})
	d.mapping(n, path, fields)
}

// conditionFields are the fields of a comparison (a claim's, or one of its preconditions).
func (d *decoder) conditionFields(c *claim.Condition, measureRequired bool) []field {
	return []field{
		{name: "measure", required: measureRequired, decode: func(n *yaml.Node, path string) { d.measure(n, path, &c.Measure, true) }},
		{name: "op", required: true, decode: d.str(&c.Op)},
		{name: "value", decode: func(n *yaml.Node, path string) {
			var v float64
			before := len(d.list)
			d.floatField(&v)(n, path)
			if len(d.list) == before {
				c.Value = &v
			}
		}},
		{name: "than", decode: func(n *yaml.Node, path string) {
			m := &claim.Measure{}
			if d.measure(n, path, m, true) {
				c.Than = m
			}
		}},
		{name: "factor", decode: func(n *yaml.Node, path string) {
			before := len(d.list)
			d.floatField(&c.Factor)(n, path)
			if len(d.list) == before && c.Factor <= 0 {
				d.add(path, "must be > 0 when set (omit it for 1), got %v", c.Factor)
			}
		}},
		{name: "plus", decode: d.floatField(&c.Plus)},
		{name: "tolerance", decode: d.floatField(&c.Tolerance)},
	}
}

// measure decodes a measure; full is false for the partial one under minus: or over:, whose
// fields are all optional (taken from the measure around it).
func (d *decoder) measure(n *yaml.Node, path string, m *claim.Measure, full bool) bool {
	fields := []field{
		{name: "metric", required: full, decode: d.str(&m.Metric)},
		{name: "configuration", required: full, decode: d.str(&m.Configuration)},
		{name: "phase", required: full, decode: d.str(&m.Phase)},
		{name: "endpoint", decode: d.str(&m.Endpoint)},
		{name: "resource", decode: d.str(&m.Resource)},
		{name: "until", decode: d.str(&m.Until)},
		{name: "level_of", decode: d.str(&m.LevelOf)},
	}
	if full {
		fields = append(fields,
			field{name: "minus", decode: func(n *yaml.Node, path string) {
				o := &claim.Measure{}
				if d.measure(n, path, o, false) {
					m.Minus = o
				}
			}},
			field{name: "over", decode: func(n *yaml.Node, path string) {
				o := &claim.Measure{}
				if d.measure(n, path, o, false) {
					m.Over = o
				}
			}})
	}
	return d.mapping(n, path, fields)
}

// roles decodes the scenario's roles: block.
func (d *decoder) roles(n *yaml.Node, path string, r *claim.Roles) {
	d.mapping(n, path, []field{
		{name: "shared", decode: d.str(&r.Shared)},
		{name: "split", decode: d.str(&r.Split)},
		{name: "fault_dependency", decode: d.str(&r.FaultDependency)},
		{name: "affected", decode: d.str(&r.Affected)},
		{name: "unaffected", decode: d.str(&r.Unaffected)},
		{name: "baseline", decode: d.str(&r.Baseline)},
		{name: "latency_phase", decode: d.str(&r.LatencyPhase)},
		{name: "error_phase", decode: d.str(&r.ErrorPhase)},
		{name: "normal_load", decode: d.strList(&r.NormalLoad)},
	})
}

// checkClaims validates the claims against the rest of the scenario: unique ids, known
// operators and metrics, names (configuration, phase, endpoint, resource) that exist, and the
// phases of normal_load claims declared as normal load.
func (s *Scenario) checkClaims(p *problems) {
	ids := map[string]bool{}
	for i, c := range s.Claims {
		path := index("claims", i)
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
		if unitOfMeasure(c.Measure) != unitOfMeasure(*c.Than) && c.Factor == 0 {
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
		if unitOf(o.Metric) != unitOf(m.Metric) {
			p.add(join(join(path, key), "metric"), "compares %s with %s: different units", m.Metric, o.Metric)
		}
	}
}

// unitOfMeasure is the unit of a measure's value: a ratio (over:) has none.
func unitOfMeasure(m claim.Measure) string {
	if m.Over != nil {
		return "ratio"
	}
	return unitOf(m.Metric)
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
		} else if s.Configurations[i].Mode != mode {
			p.add(join("roles", key), "configuration %q has mode %q, not %s", name, s.Configurations[i].Mode, mode)
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
		phase(index(join("roles", "normal_load"), i), name, nil, "")
	}
}

// unitOf groups metrics whose values can be compared directly.
func unitOf(metric string) string {
	switch {
	case strings.HasSuffix(metric, "_s"):
		return "s"
	case strings.HasSuffix(metric, "_ms"):
		return "ms"
	case strings.HasSuffix(metric, "_rate"), metric == "saturated_share":
		return "share"
	}
	return "count"
}

func (s *Scenario) checkMeasure(p *problems, path string, m claim.Measure) {
	// "rejected" is both: an endpoint's rejected requests, or a resource's rejection counter.
	isEndpoint := slices.Contains(claim.EndpointMetrics, m.Metric) && (m.Resource == "" || !slices.Contains(claim.ResourceMetrics, m.Metric))
	isResource := slices.Contains(claim.ResourceMetrics, m.Metric) && !isEndpoint
	if !isEndpoint && !isResource {
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
	switch {
	case isEndpoint:
		if m.Resource != "" {
			p.add(join(path, "resource"), "%s is an endpoint metric: name an endpoint, not a resource", m.Metric)
		}
		if m.Until != "" {
			p.add(join(path, "until"), "until applies to resource metrics only")
		}
		switch {
		case m.Metric == "time_to_level_s" && m.LevelOf == "":
			p.add(join(path, "level_of"), "time_to_level_s needs level_of: the endpoint whose level is reached")
		case m.Metric == "time_to_level_s" && !slices.ContainsFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == m.LevelOf }):
			p.add(join(path, "level_of"), "unknown endpoint %q", m.LevelOf)
		case m.Metric != "time_to_level_s" && m.LevelOf != "":
			p.add(join(path, "level_of"), "level_of applies to time_to_level_s only")
		}
		if m.Endpoint == "" {
			p.add(join(path, "endpoint"), "%s is an endpoint metric: name the endpoint", m.Metric)
		} else if !slices.ContainsFunc(s.Endpoints, func(e Endpoint) bool { return e.Path == m.Endpoint }) {
			var paths []string
			for _, e := range s.Endpoints {
				paths = append(paths, e.Path)
			}
			p.add(join(path, "endpoint"), "unknown endpoint %q (known: %s)", m.Endpoint, strings.Join(paths, ", "))
		}
	case isResource:
		if m.Endpoint != "" {
			p.add(join(path, "endpoint"), "%s is a resource metric: name a resource, not an endpoint", m.Metric)
		}
		if m.Resource == "" {
			p.add(join(path, "resource"), "%s is a resource metric: name the resource (pool:<name>, queue:<pool>, conns:<dep>, calls:<dep>, breaker:<dep>, inbound:<path>, retry:<path>, %s)",
				m.Metric, strings.Join(plainResources, ", "))
		} else {
			s.checkResource(p, join(path, "resource"), m.Resource, conf)
		}
		if (m.Metric == "given_up" || m.Metric == "drained_s") && !strings.HasPrefix(m.Resource, "inbound:") {
			p.add(join(path, "metric"), "%s is a metric of an inbound endpoint's backlog (inbound:<path>), got resource %q", m.Metric, m.Resource)
		}
		if m.Metric == "first_open_s" && !strings.HasPrefix(m.Resource, "breaker:") {
			p.add(join(path, "metric"), "first_open_s is the first_saturated_s of a breaker:<dep>, got resource %q", m.Resource)
		}
		if m.Until != "" {
			s.checkResource(p, join(path, "until"), m.Until, conf)
		}
	}
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
	if conf == nil {
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
