// Package claim defines a claim as data: a measured figure of a run compared with a number or
// with another measured figure, under preconditions. The scenario loader reads claims from a
// scenario file's `claims:` block (and the roles they rest on from its `roles:` block) and checks
// their names against the scenario; the runner records the claims in the run folder
// (claims.json); the report judges them on the run's numbers with 95% confidence intervals. This
// package is a leaf so that the report reads claims without compiling against the scenario
// loader.
package claim

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
	ID string `yaml:"id" json:"id" scenario:"required"`
	// Says is the claim in the seed's words.
	Says      string `yaml:"says" json:"says" scenario:"required"`
	Condition `yaml:",inline"`
	// Require lists preconditions: the claim is not measurable unless each holds (its whole
	// interval satisfies it), and the report names the figure of the first that does not.
	Require []Condition `yaml:"require,omitempty" json:"require,omitempty"`
	// NormalLoad marks a claim about normal load (the cost of isolation): every phase its
	// Measure and Than name must be declared in the scenario's roles.normal_load.
	NormalLoad bool `yaml:"normal_load,omitempty" json:"normal_load,omitempty"`
	// Source is where the claim is written, "file:line" of its scenario file, set by the loader
	// and recorded in claims.json so a report can point a CI annotation at it ("" when unknown).
	Source string `yaml:"-" json:"source,omitempty"`
	// Test names the test (a scenario's `tests:` entry, e.g. "isolation") that derived the claim
	// from the scenario's roles; "" for a claim written in its claims: block.
	Test string `yaml:"-" json:"test,omitempty"`
	// NoiseFloor holds the scenario's noise floors by metric (its `noise_floor:` block, copied
	// into every claim by the loader): how far a figure of one run may move from run to run.
	// With one repetition a claim comparing configurations is decided only beyond them.
	NoiseFloor map[string]Floor `yaml:"-" json:"noise_floor,omitempty"`
}

// Floor is a noise floor: the 95% half-width by which a figure of one run may move from run to
// run, absolute (in the metric's unit) or relative to the figure, whichever is larger.
type Floor struct {
	Abs float64 `json:"abs,omitempty"`
	Rel float64 `json:"rel,omitempty"`
}

// Of returns the floor for a figure of value v.
func (f Floor) Of(v float64) float64 {
	if v < 0 {
		v = -v
	}
	return max(f.Abs, f.Rel*v)
}

// Condition is one comparison: Measure Op (Value or Than) x Factor + Plus. A claim is one, and
// so is each of its preconditions.
type Condition struct {
	Measure Measure `yaml:"measure" json:"measure" scenario:"required"`
	// Op is one of ClaimOps.
	Op string `yaml:"op" json:"op" scenario:"required"`
	// Value is the right side when it is a number. Exactly one of Value and Than is set.
	Value *float64 `yaml:"value,omitempty" json:"value,omitempty"`
	// Than is the right side when it is another measured figure.
	Than *Measure `yaml:"than,omitempty" json:"than,omitempty"`
	// Factor multiplies the right side (Value or Than). 0 means 1; when written it must be > 0.
	Factor float64 `yaml:"factor,omitempty" json:"factor,omitempty" scenario:"nonzero,default=1"`
	// Plus is added to the right side after Factor, in the unit of the metric: an expected gap
	// ("1.0 s after the workers filled"), never a margin for noise (the interval is that).
	Plus float64 `yaml:"plus,omitempty" json:"plus,omitempty"`
	// Tolerance is the half-width of op "within": |left - right| <= Tolerance. Only for within.
	Tolerance float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// Measure names one figure of a run: a metric (see Catalogue) of one endpoint (Endpoint) or of
// one resource (Resource, as named in resources.csv) in one configuration and phase; a metric
// of an endpoint that takes the key resource (attributed_share) names both. With repetitions the
// figure is the mean over the configuration's repetitions.
//
// Minus or Over turn it into a comparison between two figures: the figure minus (or divided by)
// another one, written as the fields that differ ({configuration: shared}); the others are taken
// from this Measure.
type Measure struct {
	// Metric names the figure: one of Catalogue.
	Metric string `yaml:"metric" json:"metric" scenario:"required"`
	// Configuration and Phase name where it is measured.
	Configuration string `yaml:"configuration" json:"configuration" scenario:"required"`
	Phase         string `yaml:"phase" json:"phase" scenario:"required"`
	// Endpoint names the endpoint of an endpoint metric (a path, or "others": the endpoints
	// calling no faulted dependency, pooled).
	Endpoint string `yaml:"endpoint,omitempty" json:"endpoint,omitempty"`
	// Resource names the resource of a resource metric, as resources.csv does ("pool:shared").
	Resource string `yaml:"resource,omitempty" json:"resource,omitempty"`
	// Until, for resource metrics, ends the window at the first sample where this resource is at
	// capacity ("until: breaker:B" = before the breaker opened). When it never is, the window is
	// the whole phase (the report says so).
	Until string `yaml:"until,omitempty" json:"until,omitempty"`
	// LevelOf names the endpoint whose level time_to_level_s waits for (only for that metric).
	LevelOf string `yaml:"level_of,omitempty" json:"level_of,omitempty"`
	// Minus subtracts another figure; Over divides by it. At most one, and not nested.
	Minus *Measure `yaml:"minus,omitempty" json:"minus,omitempty" scenario:"partial"`
	Over  *Measure `yaml:"over,omitempty" json:"over,omitempty" scenario:"partial"`
}

// Others is the endpoint name a measure gives for the endpoints that call no faulted dependency,
// pooled: in a scenario of many endpoints (a hub of 500 partners) the report pools them into one
// group whose figures are over all their requests together, and a claim about "the other 499"
// measures that group.
const Others = "others"

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

// String writes m in words: "success_rate of /a in shared/slow-b", "max_in_use of calls:B in
// breaker/slow-b until breaker:B reached capacity", "(p99_ms of /b in shared/latency over p99_ms
// of /b in split/latency)". The report's reasons and the feasibility check both use it.
func (m Measure) String() string {
	what := m.Endpoint
	if m.Resource != "" && m.Endpoint == "" {
		what = m.Resource
	}
	s := fmt.Sprintf("%s of %s in %s/%s", m.Metric, what, m.Configuration, m.Phase)
	if m.Endpoint != "" && m.Resource != "" {
		s = fmt.Sprintf("%s of %s to %s in %s/%s", m.Metric, m.Endpoint, m.Resource, m.Configuration, m.Phase)
	}
	if m.LevelOf != "" {
		s = fmt.Sprintf("%s of %s to %s's level in %s/%s", m.Metric, what, m.LevelOf, m.Configuration, m.Phase)
	}
	if m.Until != "" {
		s += " until " + m.Until + " reached capacity"
	}
	if o := m.Other(); o != nil {
		op := "minus"
		if m.Over != nil {
			op = "over"
		}
		return fmt.Sprintf("(%s %s %s)", s, op, o.String())
	}
	return s
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

// EndpointMetrics and ResourceMetrics are the names of the catalogue's endpoint and resource
// metrics (see Catalogue for what each is).
var (
	EndpointMetrics = Names(OfEndpoint)
	ResourceMetrics = Names(OfResource)
)

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

// ParseFloor reads a noise floor as a scenario writes it: "10%" (relative to the figure) or a
// number in the metric's unit ("0.01" of a rate, "2" ms).
func ParseFloor(s string) (Floor, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return Floor{}, fmt.Errorf("expected a percentage > 0 such as 10%%, got %q", s)
		}
		return Floor{Rel: v / 100}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v > 0) || math.IsInf(v, 0) {
		return Floor{}, fmt.Errorf("expected a number > 0 in the metric's unit or a percentage such as 10%%, got %q", s)
	}
	return Floor{Abs: v}, nil
}

// String writes f as ParseFloor reads it.
func (f Floor) String() string {
	if f.Rel > 0 {
		return strconv.FormatFloat(100*f.Rel, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(f.Abs, 'f', -1, 64)
}

// MarshalYAML writes f as ParseFloor reads it ("10%", "0.01").
func (f Floor) MarshalYAML() (any, error) { return f.String(), nil }

// UnmarshalYAML reads f with ParseFloor.
func (f *Floor) UnmarshalYAML(unmarshal func(any) error) error {
	var s string
	if err := unmarshal(&s); err != nil {
		return err
	}
	v, err := ParseFloor(s)
	if err != nil {
		return err
	}
	*f = v
	return nil
}
