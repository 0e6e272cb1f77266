// Package claim defines a claim as data: a measured figure of a run compared with a number or
// with another measured figure, under preconditions. The scenario loader reads claims from a
// scenario file's `claims:` block (and the roles they rest on from its `roles:` block) and checks
// their names against the scenario; the runner records the claims in the run folder
// (claims.json); the report judges them on the run's numbers with 95% confidence intervals. This
// package is a leaf so that the report reads claims without compiling against the scenario
// loader.
package claim

// Claim is one claim of a seed, written as data so that every seed's claims go through the same
// engine: a measured figure (Measure) compared by Op with a number (Value) or with another
// measured figure (Than) scaled by Factor and shifted by Plus. Require lists preconditions, each
// a comparison of the same shape; the claim is judged only when every one of them holds.
//
// The report gives each figure a 95% confidence interval and judges the difference
// left - right: the claim holds when the whole interval satisfies Op, does not hold when the
// whole interval violates it, and is inconclusive otherwise; it is not measurable when a figure
// cannot be computed or a precondition does not hold.
//
//	claims:
//	  - id: shared-starves-a
//	    says: "With one shared pool, carrier A lookups fail while B is slow"
//	    measure: {metric: success_rate, configuration: shared, phase: slow-b, endpoint: /a}
//	    op: "<"
//	    value: 0.5
//	  - id: cap-keeps-a
//	    says: "With B capped at two slots, A stays served"
//	    require:   # the baseline it is compared with is healthy
//	      - {measure: {metric: success_rate, configuration: capped, phase: baseline, endpoint: /a}, op: ">=", value: 0.99}
//	    measure: {metric: success_rate, configuration: capped, phase: slow-b, endpoint: /a}
//	    op: ">="
//	    than: {metric: success_rate, configuration: capped, phase: baseline, endpoint: /a}
//	    factor: 0.98          # the right side is than x factor + plus
//	  - id: gap-larger-when-slow
//	    says: "split serves /b better than shared by more when A stalls than when A fails fast"
//	    measure: {metric: success_rate, configuration: split, phase: latency, endpoint: /b, minus: {configuration: shared}}
//	    op: ">"
//	    than: {metric: success_rate, configuration: split, phase: errors, endpoint: /b, minus: {configuration: shared}}
type Claim struct {
	// ID names the claim in the report; unique within the file, a plain name.
	ID string `yaml:"id" json:"id"`
	// Says is the claim in the seed's words.
	Says string `yaml:"says" json:"says"`
	// Require lists preconditions: the claim is not measurable unless each holds (its whole
	// interval satisfies it), and the report names the figure of the first that does not.
	Require []Condition `yaml:"require,omitempty" json:"require,omitempty"`
	// NormalLoad marks a claim about normal load (the cost of isolation): every phase its
	// Measure and Than name must be declared in the scenario's roles.normal_load.
	NormalLoad bool `yaml:"normal_load,omitempty" json:"normal_load,omitempty"`
	Condition  `yaml:",inline"`
}

// Condition is one comparison: Measure Op (Value or Than) x Factor + Plus. A claim is one, and
// so is each of its preconditions.
type Condition struct {
	Measure Measure `yaml:"measure" json:"measure"`
	// Op is one of ClaimOps.
	Op string `yaml:"op" json:"op"`
	// Value is the right side when it is a number. Exactly one of Value and Than is set.
	Value *float64 `yaml:"value,omitempty" json:"value,omitempty"`
	// Than is the right side when it is another measured figure.
	Than *Measure `yaml:"than,omitempty" json:"than,omitempty"`
	// Factor multiplies the right side (Value or Than). 0 means 1; when written it must be > 0.
	Factor float64 `yaml:"factor,omitempty" json:"factor,omitempty"`
	// Plus is added to the right side after Factor, in the unit of the metric: an expected gap
	// ("1.0 s after the workers filled"), never a margin for noise (the interval is that).
	Plus float64 `yaml:"plus,omitempty" json:"plus,omitempty"`
	// Tolerance is the half-width of op "within": |left - right| <= Tolerance. Only for within.
	Tolerance float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// Measure names one figure of a run: a metric of one endpoint (Endpoint) or of one resource
// (Resource, as named in resources.csv) in one configuration and phase. With repetitions the
// figure is the mean over the configuration's repetitions.
//
// Minus or Over turn it into a comparison between two figures: the figure minus (or divided by)
// another one, written as the fields that differ ({configuration: shared}); the others are taken
// from this Measure.
type Measure struct {
	Metric        string `yaml:"metric" json:"metric"`
	Configuration string `yaml:"configuration" json:"configuration"`
	Phase         string `yaml:"phase" json:"phase"`
	Endpoint      string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	Resource      string `yaml:"resource,omitempty" json:"resource,omitempty"`
	// Until, for resource metrics, ends the window at the first sample where this resource is at
	// capacity ("until: breaker:B" = before the breaker opened). When it never is, the window is
	// the whole phase (the report says so).
	Until string `yaml:"until,omitempty" json:"until,omitempty"`
	// LevelOf names the endpoint whose level time_to_level_s waits for (only for that metric).
	LevelOf string `yaml:"level_of,omitempty" json:"level_of,omitempty"`
	// Minus subtracts another figure; Over divides by it. At most one, and not nested.
	Minus *Measure `yaml:"minus,omitempty" json:"minus,omitempty"`
	Over  *Measure `yaml:"over,omitempty" json:"over,omitempty"`
}

// Other returns the figure that Minus or Over names, its empty fields filled from m, and nil
// when m has neither.
func (m Measure) Other() *Measure {
	o := m.Minus
	if o == nil {
		o = m.Over
	}
	if o == nil {
		return nil
	}
	r := *o
	fill := func(dst *string, src string) {
		if *dst == "" {
			*dst = src
		}
	}
	fill(&r.Metric, m.Metric)
	fill(&r.Configuration, m.Configuration)
	fill(&r.Phase, m.Phase)
	if r.Resource == "" && r.Endpoint == "" {
		r.Endpoint, r.Resource = m.Endpoint, m.Resource
	}
	fill(&r.Until, m.Until)
	fill(&r.LevelOf, m.LevelOf)
	r.Minus, r.Over = nil, nil
	return &r
}

// Base returns m without Minus and Over.
func (m Measure) Base() Measure {
	m.Minus, m.Over = nil, nil
	return m
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
// rejected_share is the share of the failures that were rejections (none without failures);
// first_failure_s and first_rejection_s are the seconds from the phase start to the send time of
// the first failed (rejected) request, none when there was none; time_to_level_s is the seconds
// from the phase's first fault to the end of the first 1 s block of the phase in which the
// endpoint's error rate is at least half of LevelOf's error rate over the whole phase (none when
// LevelOf did not fail or the endpoint never got there).
var EndpointMetrics = []string{
	"success_rate", "error_rate", "requests", "successes", "failures",
	"p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "rejected_p99_ms",
	"throughput", "timeouts", "rejected", "upstream", "connection", "rejected_share",
	"first_failure_s", "first_rejection_s", "time_to_level_s",
}

// ResourceMetrics are the metrics of a resource over the samples of a configuration x phase
// (up to Until). saturated_share is the share of the window at capacity, saturated_s that time
// in seconds; first_saturated_s the seconds from the phase start to the first instant at
// capacity, first_open_s the same for a breaker:<dep> (open = at capacity);
// first_rejected_s the seconds to the first sample whose rejection counter grew; rejected that
// growth; max_in_use and mean_in_use the highest and the time-weighted mean level; capacity the
// highest capacity. These are exact, from the resource's own transitions, where resources.csv
// has the interval columns; over a folder with point samples only they are shares and values of
// the samples (and breaker:<dep>, a point sample in every folder, is judged by samples). For an inbound endpoint's backlog
// (inbound:<path>): given_up is its rejection counter (items given up) at the last sample of the
// run, whenever they were given up, and drained_s the seconds from the phase start to the first
// sample, after the backlog's peak in the phase, at which the backlog is empty again (searched to
// the end of the run).
var ResourceMetrics = []string{
	"saturated_share", "saturated_s", "first_saturated_s", "first_open_s", "first_rejected_s",
	"rejected", "max_in_use", "mean_in_use", "capacity", "given_up", "drained_s",
}

// Roles name the parts of a scenario that seed 004's comparison and the sizing sweep rest on,
// written in the scenario's `roles:` block instead of guessed from faults and modes.
type Roles struct {
	// Shared and Split name the shared-pool and the per-dependency configurations.
	Shared string `yaml:"shared,omitempty" json:"shared,omitempty"`
	Split  string `yaml:"split,omitempty" json:"split,omitempty"`
	// FaultDependency is the dependency the faults hit; Affected calls it, Unaffected does not.
	FaultDependency string `yaml:"fault_dependency,omitempty" json:"fault_dependency,omitempty"`
	Affected        string `yaml:"affected,omitempty" json:"affected,omitempty"`
	Unaffected      string `yaml:"unaffected,omitempty" json:"unaffected,omitempty"`
	// Baseline is the phase without faults figures are compared with; LatencyPhase the phase
	// where FaultDependency stalls (a latency fault), ErrorPhase where it fails fast.
	Baseline     string `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	LatencyPhase string `yaml:"latency_phase,omitempty" json:"latency_phase,omitempty"`
	ErrorPhase   string `yaml:"error_phase,omitempty" json:"error_phase,omitempty"`
	// NormalLoad lists the phases that count as normal load: the only phases a claim marked
	// normal_load (the cost of isolation) may measure.
	NormalLoad []string `yaml:"normal_load,omitempty" json:"normal_load,omitempty"`
}

// Configurations returns every configuration the claim names: in its measure and than, their
// minus: and over:, and in its preconditions (with repeats). A runner that leaves out
// configurations must leave out the claims naming any of them.
func (c Claim) Configurations() []string {
	var out []string
	add := func(m *Measure) {
		if m == nil {
			return
		}
		out = append(out, m.Configuration)
		if o := m.Other(); o != nil {
			out = append(out, o.Configuration)
		}
	}
	for _, q := range append([]Condition{c.Condition}, c.Require...) {
		add(&q.Measure)
		add(q.Than)
	}
	return out
}

// Keep returns the roles with Shared and Split blanked when kept says their configuration will
// not run.
func (r Roles) Keep(kept func(configuration string) bool) Roles {
	if r.Shared != "" && !kept(r.Shared) {
		r.Shared = ""
	}
	if r.Split != "" && !kept(r.Split) {
		r.Split = ""
	}
	return r
}
