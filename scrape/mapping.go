package scrape

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/prometheus/common/model"
	"go.yaml.in/yaml/v3"
)

// Mapping turns metric series into resources. With Label set, every value of that label seen on
// the InUse (or Free) metric is one resource "<Resource>:<value>", and the other series of the
// mapping are joined to it by the same label value. Label may also be a template of several
// labels, "{proxy}/{server}" (a reverse proxy names a server by its backend and its own name):
// each series' labels fill it, and the filled text names and joins the resource. Two series of
// the InUse (or Free) metric that fill the same name are an error naming both. With Label
// empty, Resource is the whole resource name and each series is summed over its samples.
//
// Values are read as floats and keep their fractions through the run folder and the report
// (outcome.Resource's levels are float64): a CPU share of 0.35 of a core against a bound of 1
// needs no scale. Scale multiplies every level and capacity read (0 means 1), so a gauge in
// seconds can be a level in milliseconds (an event loop's delay against a bound of 50 ms); a
// rejection counter is read unscaled and rounded to a whole count. A capacity series reading
// NaN or +Inf is "no limit" (capacity 0, unbounded), as exporters write an unset limit; a level
// reading NaN leaves that resource out of the sample.
//
// It is a plain struct with yaml tags, so a scenario can list its own mappings next to the
// target:
//
//	resources:
//	  - resource: pool             # kind; the label's value completes the name: pool:<name>
//	    label: name
//	    in_use: hikaricp_connections_active
//	    capacity: hikaricp_connections_max
//	  - resource: pool:db          # a whole name, no label
//	    free: {metric: db_pool_idle, match: {pool: main}}
//	    capacity_value: 20
type Mapping struct {
	// Resource is a resource kind (outcome.ResourceKinds) when Label is set, else a whole
	// resource name: "<kind>:<what>" or one of outcome.PlainResources.
	Resource string `yaml:"resource" json:"resource"`
	// Label is the label whose value names the resource and joins the series, or a template of
	// labels in braces ("{proxy}/{server}"); "" for one resource.
	Label string `yaml:"label,omitempty" json:"label,omitempty"`
	// InUse is the series of the units in use. Exactly one of InUse and Free is set.
	InUse Series `yaml:"in_use,omitempty" json:"in_use,omitempty"`
	// Free is the series of the units free; in use is then capacity - free.
	Free Series `yaml:"free,omitempty" json:"free,omitempty"`
	// Capacity is the series of the resource's capacity. When unset, CapacityValue is used (0:
	// unbounded, which a Free mapping cannot be); it may be a fraction (a bound of 0.05 s).
	Capacity Series `yaml:"capacity,omitempty" json:"capacity,omitempty"`
	// CapacityValue is a fixed capacity, for a resource whose page has no capacity series.
	CapacityValue float64 `yaml:"capacity_value,omitempty" json:"capacity_value,omitempty"`
	// Rejected is an optional counter of calls turned away because the resource was exhausted,
	// summed over its matching samples. Unset, or absent from a scrape, the rejections are
	// unknown (outcome.Resource.RejectedUnknown), not 0.
	Rejected Series `yaml:"rejected,omitempty" json:"rejected,omitempty"`
	// Scale multiplies every value the mapping reads but the rejection counter (0 means 1): 1000
	// turns seconds into milliseconds. Fractions are kept either way.
	Scale float64 `yaml:"scale,omitempty" json:"scale,omitempty"`
	// OmitZeroCapacity drops a resource whose capacity reads 0 (a pool without a waiting room
	// has no queue resource).
	OmitZeroCapacity bool `yaml:"omit_zero_capacity,omitempty" json:"omit_zero_capacity,omitempty"`
	// Optional makes a scrape without the InUse/Free metric yield no resource instead of an
	// error. Built-in mappings are optional; a scenario's are required unless they say so.
	Optional bool `yaml:"optional,omitempty" json:"optional,omitempty"`
}

// Series names a metric and, optionally, label values its samples must have. A value may list
// alternatives separated by '|' ("full|wait-timeout"). In YAML a Series is either a metric name
// or {metric: ..., match: {...}}.
type Series struct {
	// Metric is the metric's name.
	Metric string `yaml:"metric" json:"metric"`
	// Match lists label values a sample must have.
	Match map[string]string `yaml:"match,omitempty" json:"match,omitempty"`
}

// UnmarshalYAML accepts a plain metric name as well as the mapping form.
func (s *Series) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.Metric, s.Match = n.Value, nil
		return nil
	}
	type plain Series
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*s = Series(p)
	return nil
}

// IsZero reports whether s names no metric (for yaml's omitempty).
func (s Series) IsZero() bool { return s.Metric == "" && len(s.Match) == 0 }

func (s Series) String() string {
	if len(s.Match) == 0 {
		return s.Metric
	}
	keys := make([]string, 0, len(s.Match))
	for k := range s.Match {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(s.Metric + "{")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, s.Match[k])
	}
	b.WriteByte('}')
	return b.String()
}

// Validate checks every mapping of ms, naming each bad field as a path below prefix (e.g.
// "configurations[1].target.resources[0].in_use.metric"). It returns nil or one error listing
// every problem.
func Validate(prefix string, ms []Mapping) error {
	var probs []string
	for i, m := range ms {
		probs = append(probs, m.problems(fmt.Sprintf("%s[%d]", prefix, i))...)
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s", strings.Join(probs, "; "))
	}
	return nil
}

func (m Mapping) problems(path string) []string {
	var probs []string
	bad := func(field, format string, args ...any) {
		probs = append(probs, path+"."+field+": "+fmt.Sprintf(format, args...))
	}
	if m.Scale < 0 {
		bad("scale", "%v is negative", m.Scale)
	}
	if m.Label != "" {
		if !slices.Contains(outcome.ResourceKinds, m.Resource) {
			bad("resource", "%q is not a resource kind (%s); with label set, the label's value completes the name",
				m.Resource, strings.Join(outcome.ResourceKinds, ", "))
		}
		names, err := templateLabels(m.Label)
		switch {
		case err != nil:
			bad("label", "%v", err)
		case len(names) == 0 && !model.LegacyValidation.IsValidLabelName(m.Label):
			bad("label", "%q is not a label name (nor a template of labels such as {proxy}/{server})", m.Label)
		}
	} else {
		kind, what := outcome.SplitResource(m.Resource)
		switch {
		case m.Resource == "":
			bad("resource", "missing: name the resource (e.g. pool:db) or, with label, its kind")
		case what == "" && !slices.Contains(outcome.PlainResources, m.Resource):
			bad("resource", "%q is neither <kind>:<what> nor one of %s", m.Resource, strings.Join(outcome.PlainResources, ", "))
		case what != "" && !slices.Contains(outcome.ResourceKinds, kind):
			bad("resource", "kind %q of %q is not one of %s", kind, m.Resource, strings.Join(outcome.ResourceKinds, ", "))
		}
	}
	switch {
	case m.InUse.Metric == "" && m.Free.Metric == "":
		bad("in_use", "missing: set in_use or free")
	case m.InUse.Metric != "" && m.Free.Metric != "":
		bad("free", "set together with in_use: set one")
	}
	if m.Capacity.Metric != "" && m.CapacityValue != 0 {
		bad("capacity_value", "set together with capacity: set one")
	}
	switch c := m.CapacityValue; {
	case c < 0:
		bad("capacity_value", "%v is negative", c)
	case math.IsNaN(c) || math.IsInf(c, 0):
		bad("capacity_value", "%v is not a finite number (leave it out for no limit)", c)
	}
	if m.Free.Metric != "" && m.Capacity.Metric == "" && m.CapacityValue == 0 {
		bad("capacity", "missing: a free series needs a capacity (metric or capacity_value) to give in use")
	}
	for _, s := range []struct {
		field string
		s     Series
	}{{"in_use", m.InUse}, {"free", m.Free}, {"capacity", m.Capacity}, {"rejected", m.Rejected}} {
		if s.s.Metric != "" && !model.LegacyValidation.IsValidMetricName(s.s.Metric) {
			bad(s.field+".metric", "%q is not a metric name", s.s.Metric)
		}
		if s.s.Metric == "" && len(s.s.Match) > 0 {
			bad(s.field+".metric", "missing: match given without a metric")
		}
		for k := range s.s.Match {
			if !model.LegacyValidation.IsValidLabelName(k) {
				bad(s.field+".match", "%q is not a label name", k)
			}
		}
	}
	return probs
}

// Built-in metric names: Resilience4j's, as its Micrometer binding (TaggedBulkheadMetrics,
// TaggedThreadPoolBulkheadMetrics, TaggedCircuitBreakerMetrics) names them in Prometheus. Both
// bulkhead kinds share the prefix resilience4j_bulkhead and the label "name".
const (
	R4jAvailableConcurrentCalls  = "resilience4j_bulkhead_available_concurrent_calls"
	R4jMaxAllowedConcurrentCalls = "resilience4j_bulkhead_max_allowed_concurrent_calls"
	R4jActiveThreadCount         = "resilience4j_bulkhead_active_thread_count"
	R4jAvailableThreadCount      = "resilience4j_bulkhead_available_thread_count"
	R4jThreadPoolSize            = "resilience4j_bulkhead_thread_pool_size"
	R4jCoreThreadPoolSize        = "resilience4j_bulkhead_core_thread_pool_size"
	R4jMaxThreadPoolSize         = "resilience4j_bulkhead_max_thread_pool_size"
	R4jQueueDepth                = "resilience4j_bulkhead_queue_depth"
	R4jQueueCapacity             = "resilience4j_bulkhead_queue_capacity"
	R4jCircuitBreakerState       = "resilience4j_circuitbreaker_state"
	// R4jLabel is the label naming the bulkhead (or breaker).
	R4jLabel = "name"
)

// This project's own metric names (the built-in service's /metrics), beside Resilience4j's.
const (
	OwnRejected          = "bulkhead_rejected_calls_total"
	OwnSemWaiting        = "bulkhead_semaphore_waiting_calls"
	OwnSemWaitingCap     = "bulkhead_semaphore_waiting_capacity"
	OwnDepInFlight       = "bulkhead_dependency_calls_in_flight"
	OwnDepInFlightMax    = "bulkhead_dependency_calls_in_flight_max"
	OwnDepConnsOpen      = "bulkhead_dependency_connections_open"
	OwnDepBreakerRejects = "bulkhead_dependency_breaker_rejected_calls_total"
	OwnInboundConns      = "bulkhead_process_inbound_connections"
	OwnInboundConnsMax   = "bulkhead_process_inbound_connections_max"
	OwnOutboundConns     = "bulkhead_process_outbound_connections"
	OwnOutboundConnsMax  = "bulkhead_process_outbound_connections_max"
	OwnOutboundRejected  = "bulkhead_process_outbound_connections_rejected_total"
	// GoGoroutines is the standard Go collector's goroutine count.
	GoGoroutines = "go_goroutines"
)

// Builtin returns the mappings every scrape applies before a scenario's own, all optional:
//
//   - pool:<name> of a Resilience4j semaphore bulkhead: capacity
//     resilience4j_bulkhead_max_allowed_concurrent_calls, in use capacity minus
//     resilience4j_bulkhead_available_concurrent_calls;
//   - pool:<name> of a Resilience4j thread-pool bulkhead: in use
//     resilience4j_bulkhead_active_thread_count, capacity resilience4j_bulkhead_max_thread_pool_size;
//   - queue:<name>: resilience4j_bulkhead_queue_depth of resilience4j_bulkhead_queue_capacity,
//     omitted when the capacity is 0;
//   - breaker:<name>: resilience4j_circuitbreaker_state{state="open"}, capacity 1;
//   - this project's own: the pools' and queues' rejections (bulkhead_rejected_calls_total by
//     reason), a semaphore's waiting room as queue:<name> (bulkhead_semaphore_waiting_calls of
//     bulkhead_semaphore_waiting_capacity, omitted when 0), calls:<dep> (of
//     bulkhead_dependency_calls_in_flight_max), conns:<dep>,
//     breaker:<dep>, inbound-conns and outbound-conns;
//   - goroutines from the Go collector's go_goroutines.
//
// A resource name produced twice keeps its first mapping's row.
func Builtin() []Mapping {
	own := func(reasons string) Series {
		return Series{Metric: OwnRejected, Match: map[string]string{"reason": reasons}}
	}
	return []Mapping{
		{Resource: outcome.ResourcePool, Label: R4jLabel, Optional: true,
			Free:     Series{Metric: R4jAvailableConcurrentCalls},
			Capacity: Series{Metric: R4jMaxAllowedConcurrentCalls},
			Rejected: own(outcome.ReasonFull + "|" + outcome.ReasonWaitTimeout)},
		{Resource: outcome.ResourcePool, Label: R4jLabel, Optional: true,
			InUse:    Series{Metric: R4jActiveThreadCount},
			Capacity: Series{Metric: R4jMaxThreadPoolSize},
			Rejected: own(outcome.ReasonFull + "|" + outcome.ReasonWaitTimeout)},
		{Resource: outcome.ResourceQueue, Label: R4jLabel, Optional: true, OmitZeroCapacity: true,
			InUse:    Series{Metric: R4jQueueDepth},
			Capacity: Series{Metric: R4jQueueCapacity},
			Rejected: own(outcome.ReasonQueueFull)},
		{Resource: outcome.ResourceQueue, Label: R4jLabel, Optional: true, OmitZeroCapacity: true,
			InUse:    Series{Metric: OwnSemWaiting},
			Capacity: Series{Metric: OwnSemWaitingCap},
			Rejected: own(outcome.ReasonQueueFull)},
		{Resource: outcome.ResourceBreaker, Label: R4jLabel, Optional: true, CapacityValue: 1,
			InUse: Series{Metric: R4jCircuitBreakerState, Match: map[string]string{"state": "open|forced_open"}}},
		{Resource: outcome.ResourceConns, Label: "dependency", Optional: true,
			InUse: Series{Metric: OwnDepConnsOpen}},
		{Resource: outcome.ResourceCalls, Label: "dependency", Optional: true,
			InUse: Series{Metric: OwnDepInFlight}, Capacity: Series{Metric: OwnDepInFlightMax}},
		{Resource: outcome.ResourceBreaker, Label: "dependency", Optional: true, CapacityValue: 1,
			InUse:    Series{Metric: "bulkhead_dependency_breaker_state", Match: map[string]string{"state": "open"}},
			Rejected: Series{Metric: OwnDepBreakerRejects}},
		{Resource: outcome.ResourceInboundConns, Optional: true,
			InUse: Series{Metric: OwnInboundConns}, Capacity: Series{Metric: OwnInboundConnsMax}},
		{Resource: outcome.ResourceOutboundConns, Optional: true,
			InUse: Series{Metric: OwnOutboundConns}, Capacity: Series{Metric: OwnOutboundConnsMax},
			Rejected: Series{Metric: OwnOutboundRejected}},
		{Resource: outcome.ResourceGoroutines, Optional: true, InUse: Series{Metric: GoGoroutines}},
	}
}

// templateLabels returns the label names a template such as "{proxy}/{server}" reads, nil for a
// plain label name, and an error for braces that do not enclose a label name.
func templateLabels(t string) ([]string, error) {
	if !strings.ContainsAny(t, "{}") {
		return nil, nil
	}
	var names []string
	rest := t
	for {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			if strings.Contains(rest, "}") {
				return nil, fmt.Errorf("template %q: a } without its {", t)
			}
			break
		}
		if strings.Contains(rest[:i], "}") {
			return nil, fmt.Errorf("template %q: a } without its {", t)
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			return nil, fmt.Errorf("template %q: a { without its }", t)
		}
		name := rest[i+1 : i+j]
		if !model.LegacyValidation.IsValidLabelName(name) {
			return nil, fmt.Errorf("template %q: %q is not a label name", t, name)
		}
		names = append(names, name)
		rest = rest[i+j+1:]
	}
	return names, nil
}
