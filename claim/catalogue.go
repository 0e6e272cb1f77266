package claim

import (
	"slices"
	"strings"
)

// The metric catalogue: every figure a claim can measure, as data. The scenario loader checks a
// claim's metric, keys and units against it; the verdict engine registers, for every entry, the
// function that computes the figure on a repetition and the one that gives its variance within
// a repetition (a table test in report/verdict fails when an entry lacks either); the metric
// list of docs/verdicts.md is generated from it (a test fails when it is stale).
//
// Why the functions are not here: claim is the leaf contract between the scenario loader
// (which must not import the report) and the report. The functions need the report's model of
// a run (its requests cut into blocks, its resource samples), which a leaf cannot import without
// dragging the report's internals into the loader. So the catalogue says what a metric is
// (name, unit, subject, keys, which interval method it takes) and the engine says how it is
// computed, keyed by the catalogue's names; nothing else lists metrics.

// Subject is what a metric is a figure of.
type Subject string

// Subjects.
const (
	// OfEndpoint: the requests of one endpoint (measure.endpoint) in a configuration x phase.
	OfEndpoint Subject = "endpoint"
	// OfResource: the samples of one resource (measure.resource, as named in resources.csv).
	OfResource Subject = "resource"
)

// Unit is the unit of a metric's values. Two figures are compared directly (minus:, than:
// without factor) only in the same unit.
type Unit string

// Units.
const (
	UnitShare   Unit = "share" // in [0, 1]
	UnitMS      Unit = "ms"
	UnitSeconds Unit = "s"
	UnitCount   Unit = "count"
	UnitPerS    Unit = "1/s"
	UnitSlots   Unit = "slots"
)

// Interval names how a metric's 95% interval is computed (package confidence; the engine
// implements one per metric).
type Interval string

// Interval methods.
const (
	// IntervalRate: a share of requests; Wilson on the effective sample size, never zero-width.
	IntervalRate Interval = "rate"
	// IntervalQuantile: a nearest-rank quantile; Woodruff's block scores; no upper end when too
	// few (effective) requests lie above it.
	IntervalQuantile Interval = "quantile"
	// IntervalMean: a mean over requests (a ratio of sums); block scores.
	IntervalMean Interval = "mean"
	// IntervalCount: a count of requests; block scores of the count.
	IntervalCount Interval = "count"
	// IntervalMaximum: the largest value; no variance within a repetition (only repetitions
	// bound it: with one its interval is open).
	IntervalMaximum Interval = "maximum"
	// IntervalPoint: read once from a repetition's time line (an event time, a resource
	// figure); with one repetition it decides nothing finer than its resolution.
	IntervalPoint Interval = "point"
)

// Metric is one entry of the catalogue.
type Metric struct {
	Name    string
	Subject Subject
	Unit    Unit
	// Interval is the method of its 95% interval.
	Interval Interval
	// Keys are the measure keys the metric requires besides metric, configuration, phase and
	// its subject ("level_of", "resource"); Optional those it may take ("until").
	Keys     []string
	Optional []string
	// ResourcePrefix, for a resource metric, is the kind of resource it applies to
	// ("inbound:", "breaker:"); "" for any.
	ResourcePrefix string
	// AliasOf names the metric this one is another name of ("" for none).
	AliasOf string
	// Doc says what the figure is, in one sentence.
	Doc string
}

// endpointLatency are the latency metrics of an endpoint's requests, for one of three sets of
// requests: successes (no prefix), failures (failure_) and rejections (rejected_).
func endpointLatency(prefix, of string) []Metric {
	q := func(name, doc string) Metric {
		return Metric{Name: prefix + name, Subject: OfEndpoint, Unit: UnitMS, Interval: IntervalQuantile, Doc: doc + " " + of + ", ms"}
	}
	return []Metric{
		q("p50_ms", "median latency of the"),
		q("p90_ms", "90th percentile latency of the"),
		q("p95_ms", "95th percentile latency of the"),
		q("p99_ms", "99th percentile latency of the"),
		q("p999_ms", "99.9th percentile latency of the"),
		{Name: prefix + "mean_ms", Subject: OfEndpoint, Unit: UnitMS, Interval: IntervalMean, Doc: "mean latency of the " + of + ", ms"},
		{Name: prefix + "max_ms", Subject: OfEndpoint, Unit: UnitMS, Interval: IntervalMaximum, Doc: "largest latency of the " + of + ", ms"},
	}
}

// Catalogue lists every metric, endpoint metrics first. Latency figures are of successes by
// default: a failure that returns at once is not fast service (fast failures read as fast was
// issue 26's second finding); failures and rejections have their own figures.
var Catalogue = func() []Metric {
	ep := func(name string, u Unit, iv Interval, doc string) Metric {
		return Metric{Name: name, Subject: OfEndpoint, Unit: u, Interval: iv, Doc: doc}
	}
	var c []Metric
	c = append(c,
		ep("success_rate", UnitShare, IntervalRate, "share of the requests that succeeded"),
		ep("error_rate", UnitShare, IntervalRate, "share of the requests that failed (1 - success_rate)"),
		ep("requests", UnitCount, IntervalCount, "requests sent"),
		ep("successes", UnitCount, IntervalCount, "requests that succeeded"),
		ep("failures", UnitCount, IntervalCount, "requests that failed, of any type"),
		ep("timeouts", UnitCount, IntervalCount, "failures that were timeouts"),
		ep("rejected", UnitCount, IntervalCount, "failures that were rejections (a full bulkhead, a queue, an open breaker)"),
		ep("rejected_refused", UnitCount, IntervalCount, "rejections at once (a full bulkhead or queue, an open breaker)"),
		ep("rejected_waited", UnitCount, IntervalCount, "rejections after waiting in a queue for a slot until the wait ran out"),
		ep("upstream", UnitCount, IntervalCount, "failures the dependency answered with an error"),
		ep("connection", UnitCount, IntervalCount, "failures of the connection (reset, refused)"),
		ep("other", UnitCount, IntervalCount, "failures of no other type"),
		ep("rejected_share", UnitShare, IntervalRate, "share of the failures that were rejections (not measurable without failures)"),
		ep("throughput", UnitPerS, IntervalMean, "successes per second of the phase"),
	)
	c = append(c, endpointLatency("", "successes")...)
	c = append(c, endpointLatency("failure_", "failures")...)
	c = append(c, endpointLatency("rejected_", "rejections")...)
	c = append(c,
		Metric{Name: "success_p50_ms", Subject: OfEndpoint, Unit: UnitMS, Interval: IntervalQuantile, AliasOf: "p50_ms", Doc: "p50_ms, by the name the headline uses"},
		Metric{Name: "success_p99_ms", Subject: OfEndpoint, Unit: UnitMS, Interval: IntervalQuantile, AliasOf: "p99_ms", Doc: "p99_ms, by the name the headline uses"},
		ep("first_failure_s", UnitSeconds, IntervalPoint, "seconds from the phase start to the send time of the first failed request"),
		ep("first_rejection_s", UnitSeconds, IntervalPoint, "seconds from the phase start to the send time of the first rejected request"),
		Metric{Name: "time_to_level_s", Subject: OfEndpoint, Unit: UnitSeconds, Interval: IntervalPoint, Keys: []string{"level_of"},
			Doc: "seconds from the phase's first fault to the end of the first 1 s block in which the endpoint's error rate is at least half of level_of's over the phase; a level never reached within the phase makes a claim that it is reached not hold"},
		Metric{Name: "attributed_share", Subject: OfEndpoint, Unit: UnitShare, Interval: IntervalRate, Keys: []string{"resource"},
			Doc: "share of the endpoint's failures that the report's attribution blames on the resource named by resource: (a pool, pool:<name>, counts its queue too)"},
	)
	res := func(name string, u Unit, doc string) Metric {
		return Metric{Name: name, Subject: OfResource, Unit: u, Interval: IntervalPoint, Optional: []string{"until"}, Doc: doc}
	}
	c = append(c,
		res("saturated_share", UnitShare, "share of the window the resource was at capacity"),
		res("saturated_s", UnitSeconds, "seconds of the window the resource was at capacity"),
		res("first_saturated_s", UnitSeconds, "seconds from the phase start to the first instant at capacity"),
		Metric{Name: "first_open_s", Subject: OfResource, Unit: UnitSeconds, Interval: IntervalPoint, Optional: []string{"until"}, ResourcePrefix: "breaker:",
			Doc: "first_saturated_s of a breaker:<dependency> (open = at capacity)"},
		res("first_rejected_s", UnitSeconds, "seconds from the phase start to the first sample whose rejection counter grew"),
		res("rejected", UnitCount, "growth of the resource's rejection counter over the window"),
		res("max_in_use", UnitSlots, "highest level in use over the window"),
		res("mean_in_use", UnitSlots, "time-weighted mean level in use over the window"),
		res("capacity", UnitSlots, "highest capacity over the window"),
		Metric{Name: "given_up", Subject: OfResource, Unit: UnitCount, Interval: IntervalPoint, ResourcePrefix: "inbound:",
			Doc: "items an inbound endpoint's backlog gave up after their last attempt, at the last sample of the run"},
		Metric{Name: "drained_s", Subject: OfResource, Unit: UnitSeconds, Interval: IntervalPoint, ResourcePrefix: "inbound:",
			Doc: "seconds from the phase start to the first sample, after the backlog's peak in the phase, at which the backlog is empty again"},
		Metric{Name: "limit_settle_s", Subject: OfResource, Unit: UnitSeconds, Interval: IntervalPoint, ResourcePrefix: "pool:",
			Doc: "seconds from the phase start (its fault switch) to the end of the last interval in which an adaptive pool's limit (mean_capacity) was more than max(1 slot, 10%) from the level it settled at, its mean over the phase's last quarter; not measurable for a limit still moving in that quarter or a pool of fixed size"},
	)
	return c
}()

// Lookup returns the catalogue entry of metric name for a measure of an endpoint (endpoint
// true) or of a resource, and whether there is one. "rejected" is both: an endpoint's rejected
// requests, or a resource's rejection counter.
func Lookup(name string, endpoint bool) (Metric, bool) {
	want := OfResource
	if endpoint {
		want = OfEndpoint
	}
	i := slices.IndexFunc(Catalogue, func(m Metric) bool { return m.Name == name && m.Subject == want })
	if i < 0 {
		return Metric{}, false
	}
	return Catalogue[i], true
}

// MetricOf returns the catalogue entry a measure names: by its subject (an endpoint when
// Endpoint is set, else a resource), and whether there is one.
func MetricOf(m Measure) (Metric, bool) { return Lookup(m.Metric, m.Endpoint != "") }

// Names returns the names of the catalogue's metrics of subject s, in catalogue order.
func Names(s Subject) []string {
	var out []string
	for _, m := range Catalogue {
		if m.Subject == s {
			out = append(out, m.Name)
		}
	}
	return out
}

// Canonical returns the metric name an alias stands for (name itself when it is none).
func (m Metric) Canonical() string {
	if m.AliasOf != "" {
		return m.AliasOf
	}
	return m.Name
}

// Takes reports whether the metric takes measure key k (required or optional).
func (m Metric) Takes(k string) bool {
	return slices.Contains(m.Keys, k) || slices.Contains(m.Optional, k)
}

// UnitOf returns the unit of measure m's value: a ratio (over:) has none, "ratio"; an unknown
// metric has "".
func UnitOf(m Measure) Unit {
	if m.Over != nil {
		return "ratio"
	}
	if e, ok := MetricOf(m); ok {
		return e.Unit
	}
	return ""
}

// CatalogueMarkdown writes the catalogue as the tables of docs/verdicts.md.
func CatalogueMarkdown() string {
	var b strings.Builder
	for _, s := range []Subject{OfEndpoint, OfResource} {
		if s == OfEndpoint {
			b.WriteString("Endpoint metrics (`endpoint:` names the endpoint):\n\n")
		} else {
			b.WriteString("\nResource metrics (`resource:` names it as in resources.csv: `pool:<name>`, `queue:<pool>`, `conns:<dep>`, `calls:<dep>`, `breaker:<dep>`, `inbound:<path>`, `retry:<path>`, `inbound-conns`, `outbound-conns`, `goroutines`, `heap-bytes`, `stack-bytes`):\n\n")
		}
		b.WriteString("| metric | unit | interval | keys | what it is |\n|---|---|---|---|---|\n")
		for _, m := range Catalogue {
			if m.Subject != s {
				continue
			}
			var keys []string
			for _, k := range m.Keys {
				keys = append(keys, "`"+k+":` (required)")
			}
			for _, k := range m.Optional {
				keys = append(keys, "`"+k+":`")
			}
			if m.ResourcePrefix != "" {
				keys = append(keys, "only `"+m.ResourcePrefix+"…` resources")
			}
			b.WriteString("| `" + m.Name + "` | " + string(m.Unit) + " | " + string(m.Interval) + " | " + strings.Join(keys, ", ") + " | " + m.Doc + " |\n")
		}
	}
	return b.String()
}
