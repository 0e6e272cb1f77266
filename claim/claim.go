// Package claim defines a claim as data: a measured figure of a run compared with a number or
// with another measured figure. The scenario loader reads claims from a scenario file's
// `claims:` block and checks their names against the scenario; the runner records them in the
// run folder (claims.json); the report judges them on the run's numbers. This package is a leaf
// so that the report reads claims without compiling against the scenario loader.
package claim

// Claim is one claim of a seed, written as data so that every seed's claims go through the same
// engine: a measured figure (Measure) compared by Op with a number (Value) or with another
// measured figure (Than) scaled by Factor and shifted by Plus. The report judges
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
	ID string `yaml:"id" json:"id"`
	// Says is the claim in the seed's words.
	Says    string  `yaml:"says" json:"says"`
	Measure Measure `yaml:"measure" json:"measure"`
	// Op is one of ClaimOps.
	Op string `yaml:"op" json:"op"`
	// Value is the right side when it is a number. Exactly one of Value and Than is set.
	Value *float64 `yaml:"value,omitempty" json:"value,omitempty"`
	// Than is the right side when it is another measured figure.
	Than *Measure `yaml:"than,omitempty" json:"than,omitempty"`
	// Factor multiplies the right side (Value or Than). 0 means 1; when written it must be > 0.
	Factor float64 `yaml:"factor,omitempty" json:"factor,omitempty"`
	// Plus is added to the right side after Factor, in the unit of the metric (a margin for
	// noise, or an expected gap: "1.0 s after the workers filled").
	Plus float64 `yaml:"plus,omitempty" json:"plus,omitempty"`
	// Tolerance is the half-width of op "within": |left - right| <= Tolerance. Only for within.
	Tolerance float64 `yaml:"tolerance,omitempty" json:"tolerance,omitempty"`
}

// Measure names one figure of a run: a metric of one endpoint (Endpoint) or of one resource
// (Resource, as named in resources.csv) in one configuration and phase. With repetitions the
// figure is the mean over the configuration's repetitions.
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
