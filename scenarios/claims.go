package scenarios

import (
	"math"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// Claim is one claim of a seed, written as data so that every seed's claims go through the same
// engine: a measured figure (Measure) compared by Op with a number (Value) or with another
// measured figure (Than) scaled by Factor and shifted by Plus. The report (package report) judges
// it on a run's numbers: holds, does not hold, or not measurable with the reason.
//
//	claims:
//	  - id: shared-starves-a
//	    says: "With one shared pool, carrier A lookups fail while B is slow"
//	    measure: {metric: success_rate, configuration: shared, phase: slow-b, endpoint: /a}
//	    op: "<"
//	    value: 0.5
//	  - id: cap-keeps-a
//	    says: "With B capped at two slots, A stays served"
//	    measure: {metric: success_rate, configuration: capped, phase: slow-b, endpoint: /a}
//	    op: ">="
//	    than: {metric: success_rate, configuration: capped, phase: baseline, endpoint: /a}
//	    factor: 0.98          # the right side is than x factor + plus
//	  - id: queue-full-at-1.5s
//	    says: "The inventory queue is full 1.5 s after the stall began"
//	    measure: {metric: first_saturated_s, configuration: bulkheads, phase: stall, resource: queue:inventory}
//	    op: within            # |left - right| <= tolerance
//	    value: 1.5
//	    tolerance: 0.1
type Claim struct {
	// ID names the claim in the report; unique within the file, a plain name.
	ID string `yaml:"id"`
	// Says is the claim in the seed's words.
	Says    string  `yaml:"says"`
	Measure Measure `yaml:"measure"`
	// Op is one of ClaimOps.
	Op string `yaml:"op"`
	// Value is the right side when it is a number. Exactly one of Value and Than is set.
	Value *float64 `yaml:"value,omitempty"`
	// Than is the right side when it is another measured figure.
	Than *Measure `yaml:"than,omitempty"`
	// Factor multiplies the right side (Value or Than). 0 means 1; when written it must be > 0.
	Factor float64 `yaml:"factor,omitempty"`
	// Plus is added to the right side after Factor, in the unit of the metric (a margin for
	// noise, or an expected gap: "1.0 s after the workers filled").
	Plus float64 `yaml:"plus,omitempty"`
	// Tolerance is the half-width of op "within": |left - right| <= Tolerance. Only for within.
	Tolerance float64 `yaml:"tolerance,omitempty"`
}

// Measure names one figure of a run: a metric of one endpoint (Endpoint) or of one resource
// (Resource, as named in resources.csv) in one configuration and phase. With repetitions the
// figure is the mean over the configuration's repetitions.
type Measure struct {
	Metric        string `yaml:"metric"`
	Configuration string `yaml:"configuration"`
	Phase         string `yaml:"phase"`
	Endpoint      string `yaml:"endpoint,omitempty"`
	Resource      string `yaml:"resource,omitempty"`
	// Until, for resource metrics, ends the window at the first sample where this resource is at
	// capacity ("until: breaker:B" = before the breaker opened). When it never is, the window is
	// the whole phase (the report says so).
	Until string `yaml:"until,omitempty"`
}

// Claim comparison operators.
const (
	OpLess      = "<"
	OpLessEq    = "<="
	OpGreater   = ">"
	OpGreaterEq = ">="
	// OpWithin holds when |left - right| <= Tolerance.
	OpWithin = "within"
)

// ClaimOps lists the operators a claim may use.
var ClaimOps = []string{OpLess, OpLessEq, OpGreater, OpGreaterEq, OpWithin}

// EndpointMetrics are the metrics of an endpoint in a configuration x phase. Rates are shares in
// [0, 1]; *_ms are exact quantiles over every request (successes and failures) in ms;
// throughput is successes per second; timeouts .. connection count failures by type;
// first_failure_s and first_rejection_s are the seconds from the phase start to the send time of
// the first failed (rejected) request, none when there was none.
var EndpointMetrics = []string{
	"success_rate", "error_rate", "requests", "successes", "failures",
	"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "rejected_p99_ms",
	"throughput", "timeouts", "rejected", "upstream", "connection",
	"first_failure_s", "first_rejection_s",
}

// ResourceMetrics are the metrics of a resource over the samples of a configuration x phase
// (up to Until). saturated_share is the share of samples at capacity, saturated_s that share of
// the window in seconds; first_saturated_s the seconds from the phase start to the first sample
// at capacity, first_open_s the same for a breaker:<dep> (open = at capacity);
// first_rejected_s the seconds to the first sample whose rejection counter grew; rejected that
// growth; max_in_use, mean_in_use and capacity as sampled. For an inbound endpoint's backlog
// (inbound:<path>): given_up is its rejection counter (items given up) at the last sample of the
// run, whenever they were given up, and drained_s the seconds from the phase start to the first
// sample, after the backlog's peak in the phase, at which the backlog is empty again (searched to
// the end of the run).
var ResourceMetrics = []string{
	"saturated_share", "saturated_s", "first_saturated_s", "first_open_s", "first_rejected_s",
	"rejected", "max_in_use", "mean_in_use", "capacity", "given_up", "drained_s",
}

// resourceKinds are the prefixes of resource names (service.Resource.Name) and whether they
// name a dependency ("conns:B") or a pool ("pool:shared").
var resourceKinds = map[string]string{
	"pool": "pool", "queue": "pool", "conns": "dependency", "calls": "dependency", "breaker": "dependency",
	"inbound": "inbound", "retry": "inbound",
}

// plainResources are the resource names without a ":" part.
var plainResources = []string{"inbound-conns", "outbound-conns", "goroutines", "heap-bytes", "stack-bytes"}

func (d *decoder) claim(n *yaml.Node, path string, c *Claim) {
	d.mapping(n, path, []field{
		{name: "id", required: true, decode: d.str(&c.ID)},
		{name: "says", required: true, decode: d.str(&c.Says)},
		{name: "measure", required: true, decode: func(n *yaml.Node, path string) { d.measure(n, path, &c.Measure) }},
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
			m := &Measure{}
			if d.measure(n, path, m) {
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
	})
}

func (d *decoder) measure(n *yaml.Node, path string, m *Measure) bool {
	return d.mapping(n, path, []field{
		{name: "metric", required: true, decode: d.str(&m.Metric)},
		{name: "configuration", required: true, decode: d.str(&m.Configuration)},
		{name: "phase", required: true, decode: d.str(&m.Phase)},
		{name: "endpoint", decode: d.str(&m.Endpoint)},
		{name: "resource", decode: d.str(&m.Resource)},
		{name: "until", decode: d.str(&m.Until)},
	})
}

// checkClaims validates the claims against the rest of the scenario: unique ids, known
// operators and metrics, and names (configuration, phase, endpoint, resource) that exist.
func (s *Scenario) checkClaims(p *problems) {
	ids := map[string]bool{}
	for i, c := range s.Claims {
		path := index("claims", i)
		s.checkUniqueName(p, join(path, "id"), "claim", c.ID, ids)
		if strings.TrimSpace(c.Says) == "" {
			p.add(join(path, "says"), "must say what the claim is")
		}
		if !slices.Contains(ClaimOps, c.Op) {
			p.add(join(path, "op"), "unknown operator %q (known: %s)", c.Op, strings.Join(ClaimOps, ", "))
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
		case c.Op == OpWithin && (!(c.Tolerance >= 0) || math.IsInf(c.Tolerance, 0)):
			p.add(join(path, "tolerance"), "must be >= 0, got %v", c.Tolerance)
		case c.Op != OpWithin && c.Tolerance != 0:
			p.add(join(path, "tolerance"), "only op %q takes a tolerance (op is %q)", OpWithin, c.Op)
		}
		s.checkMeasure(p, join(path, "measure"), c.Measure)
		if c.Than != nil {
			s.checkMeasure(p, join(path, "than"), *c.Than)
			if unitOf(c.Measure.Metric) != unitOf(c.Than.Metric) && c.Factor == 0 {
				p.add(join(path, "than"), "compares %s with %s: different units; give a factor to say how they relate",
					c.Measure.Metric, c.Than.Metric)
			}
		}
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

func (s *Scenario) checkMeasure(p *problems, path string, m Measure) {
	// "rejected" is both: an endpoint's rejected requests, or a resource's rejection counter.
	isEndpoint := slices.Contains(EndpointMetrics, m.Metric) && (m.Resource == "" || !slices.Contains(ResourceMetrics, m.Metric))
	isResource := slices.Contains(ResourceMetrics, m.Metric) && !isEndpoint
	if !isEndpoint && !isResource {
		p.add(join(path, "metric"), "unknown metric %q (endpoint metrics: %s; resource metrics: %s)",
			m.Metric, strings.Join(EndpointMetrics, ", "), strings.Join(ResourceMetrics, ", "))
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
	case kind == "queue" && conf.Pools[i].Queue == 0:
		p.add(path, "%q: pool %q of configuration %q has no queue", name, what, conf.Name)
	}
}
