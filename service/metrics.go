package service

import (
	"net/http"
	"strconv"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metric descriptors. Each pool kind declares its own family (PoolParams.Metrics): a semaphore
// publishes Resilience4j's bulkhead gauges, a workers pool its thread-pool gauges, exactly as
// Resilience4j's Micrometer binding writes them in Prometheus (TaggedBulkheadMetrics,
// TaggedThreadPoolBulkheadMetrics), so dashboards built for Resilience4j read them unchanged; the
// label "name" is the pool's name. The families below are every pool's, whatever its kind, and
// what Resilience4j does not publish (rejections by reason, waits, dependencies, connections)
// keeps this project's "bulkhead_" names.
var (
	descPoolInfo = prometheus.NewDesc("bulkhead_pool_info",
		"1 for each pool, labelled with its kind.", []string{"name", "kind"}, nil)
	descAdmitted = prometheus.NewDesc("bulkhead_admitted_calls_total",
		"Calls the pool admitted.", []string{"name"}, nil)
	descRejected = prometheus.NewDesc("bulkhead_rejected_calls_total",
		"Calls the pool turned away, by reason (full, queue-full, wait-timeout).", []string{"name", "reason"}, nil)
	descWaitTotal = prometheus.NewDesc("bulkhead_wait_seconds_total",
		"Total time calls spent waiting for a slot.", []string{"name"}, nil)
	descWaitMax = prometheus.NewDesc("bulkhead_wait_seconds_max",
		"Longest time one call waited for a slot.", []string{"name"}, nil)

	descDepInFlight = prometheus.NewDesc("bulkhead_dependency_calls_in_flight",
		"Calls to the dependency in progress.", []string{"dependency"}, nil)
	descDepInFlightMax = prometheus.NewDesc("bulkhead_dependency_calls_in_flight_max",
		"Cap on the dependency's calls in flight: its pool's size when it is the pool's only dependency (0 = none of its own).", []string{"dependency"}, nil)
	descDepConnsOpen = prometheus.NewDesc("bulkhead_dependency_connections_open",
		"Connections open to the dependency.", []string{"dependency"}, nil)
	descDepConnsInUse = prometheus.NewDesc("bulkhead_dependency_connections_in_use",
		"Connections to the dependency carrying a call.", []string{"dependency"}, nil)
	descDepConnWait = prometheus.NewDesc("bulkhead_dependency_connection_wait_seconds_total",
		"Time calls spent waiting for a connection.", []string{"dependency"}, nil)
	descDepCalls = prometheus.NewDesc("bulkhead_dependency_calls_total",
		"Calls made to the dependency.", []string{"dependency"}, nil)
	descDepTimeouts = prometheus.NewDesc("bulkhead_dependency_timeouts_total",
		"Calls to the dependency that timed out.", []string{"dependency"}, nil)
	descDepErrors = prometheus.NewDesc("bulkhead_dependency_errors_total",
		"Calls to the dependency that failed other than by timeout.", []string{"dependency"}, nil)
	descDepBreaker = prometheus.NewDesc("bulkhead_dependency_breaker_state",
		"1 for the breaker's current state.", []string{"dependency", "state"}, nil)
	descDepBreakerRejected = prometheus.NewDesc("bulkhead_dependency_breaker_rejected_calls_total",
		"Calls the dependency's breaker turned away.", []string{"dependency"}, nil)

	descInFlight = prometheus.NewDesc("bulkhead_process_requests_in_flight",
		"Inbound requests being served.", nil, nil)
	descGoroutines = prometheus.NewDesc("bulkhead_process_goroutines",
		"Goroutines of the process.", nil, nil)
	descInbound = prometheus.NewDesc("bulkhead_process_inbound_connections",
		"Open inbound connections.", nil, nil)
	descInboundCap = prometheus.NewDesc("bulkhead_process_inbound_connections_max",
		"Cap on inbound connections (0 = none).", nil, nil)
	descOutbound = prometheus.NewDesc("bulkhead_process_outbound_connections",
		"Open connections to all dependencies.", nil, nil)
	descOutboundCap = prometheus.NewDesc("bulkhead_process_outbound_connections_max",
		"Cap on outbound connections (0 = none).", nil, nil)
	descOutboundRejected = prometheus.NewDesc("bulkhead_process_outbound_connections_rejected_total",
		"Dials refused at the outbound connection cap.", nil, nil)
)

// collector turns a Snapshot into metrics at scrape time, so the hot path keeps one set of
// counters (the atomics behind Snapshot) and nothing else.
type collector struct{ s *Service }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolMetricDescs {
		ch <- d.desc
	}
	for _, d := range []*prometheus.Desc{
		descPoolInfo, descAdmitted, descRejected, descWaitTotal, descWaitMax,
		descDepInFlight, descDepInFlightMax, descDepConnsOpen, descDepConnsInUse, descDepConnWait, descDepCalls, descDepTimeouts,
		descDepErrors, descDepBreaker, descDepBreakerRejected, descInFlight, descGoroutines, descInbound,
		descInboundCap, descOutbound, descOutboundCap, descOutboundRejected,
	} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	snap := c.s.Snapshot()
	gauge, counter := prometheus.GaugeValue, prometheus.CounterValue
	m := func(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, labels...)
	}
	for _, p := range snap.Pools {
		if params, ok := NewPoolParams(p.Kind); ok {
			for _, pm := range params.Metrics() {
				m(poolMetricDescs[pm.Name].desc, pm.Type, pm.Value(p), p.Name)
			}
		}
		m(descPoolInfo, gauge, 1, p.Name, string(p.Kind))
		m(descAdmitted, counter, float64(p.Admitted), p.Name)
		for _, r := range []string{outcome.ReasonFull, outcome.ReasonQueueFull, outcome.ReasonWaitTimeout} {
			m(descRejected, counter, float64(p.Rejected[r]), p.Name, r)
		}
		m(descWaitTotal, counter, p.WaitTotal.Seconds(), p.Name)
		m(descWaitMax, gauge, p.WaitMax.Seconds(), p.Name)
	}
	callCaps := snap.CallCapacities()
	for _, d := range snap.Dependencies {
		m(descDepInFlight, gauge, float64(d.InFlight), d.Name)
		m(descDepInFlightMax, gauge, float64(callCaps[d.Name]), d.Name)
		m(descDepConnsOpen, gauge, float64(d.ConnsOpen), d.Name)
		m(descDepConnsInUse, gauge, float64(d.ConnsInUse), d.Name)
		m(descDepConnWait, counter, d.ConnWait.Seconds(), d.Name)
		m(descDepCalls, counter, float64(d.Calls), d.Name)
		m(descDepTimeouts, counter, float64(d.Timeouts), d.Name)
		m(descDepErrors, counter, float64(d.Errors), d.Name)
		if d.BreakerState != "" {
			for _, st := range []string{"closed", "open", "half-open"} {
				v := 0.0
				if st == d.BreakerState {
					v = 1
				}
				m(descDepBreaker, gauge, v, d.Name, st)
			}
			m(descDepBreakerRejected, counter, float64(d.BreakerRejected), d.Name)
		}
	}
	pr := snap.Process
	m(descInFlight, gauge, float64(pr.InFlight))
	m(descGoroutines, gauge, float64(pr.Goroutines))
	m(descInbound, gauge, float64(pr.InboundConns))
	m(descInboundCap, gauge, float64(pr.InboundConnsCap))
	m(descOutbound, gauge, float64(pr.OutboundConns))
	m(descOutboundCap, gauge, float64(pr.OutboundConnsCap))
	m(descOutboundRejected, counter, float64(pr.OutboundConnsRejected))
}

// requestBuckets are the latency histogram's upper bounds in seconds: from a fast dependency's
// milliseconds to several client timeouts.
var requestBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// requestMetrics are the per-endpoint request counters and latency histograms:
// http_server_requests_total{endpoint,code} and http_server_request_duration_seconds{endpoint}.
type requestMetrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newRequestMetrics() requestMetrics {
	return requestMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "http_server_requests_total",
			Help: "Requests an endpoint answered, by status code.",
		}, []string{"endpoint", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_server_request_duration_seconds",
			Help:    "Time from the request's arrival to its answer, by endpoint.",
			Buckets: requestBuckets,
		}, []string{"endpoint"}),
	}
}

// register adds the request metrics and the standard Go and process collectors to r.
func (rm requestMetrics) register(r *prometheus.Registry) {
	r.MustRegister(rm.total, rm.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// knownCodes are the statuses an endpoint answers (see respond.go and inbound.go); their
// counters are resolved once per endpoint so the hot path does no label lookup.
var knownCodes = [...]int{http.StatusOK, http.StatusAccepted, http.StatusBadGateway,
	http.StatusServiceUnavailable, http.StatusGatewayTimeout}

// instrument wraps one endpoint's handler: it counts the answer by status and observes its
// latency. The cost per request is one small allocation (the status recorder) and a few atomic
// adds; no label lookup for the known codes.
func (rm requestMetrics) instrument(path string, next http.Handler) http.Handler {
	var byCode [len(knownCodes)]prometheus.Counter
	for i, c := range knownCodes {
		byCode[i] = rm.total.WithLabelValues(path, strconv.Itoa(c))
	}
	hist := rm.duration.WithLabelValues(path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(sw, r)
		hist.Observe(time.Since(start).Seconds())
		for i, c := range knownCodes {
			if c == sw.code {
				byCode[i].Inc()
				return
			}
		}
		rm.total.WithLabelValues(path, strconv.Itoa(sw.code)).Inc()
	})
}

// statusWriter records the status a handler writes (200 when it writes none).
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
