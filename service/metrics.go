package service

import (
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/prometheus/client_golang/prometheus"
)

// Metric descriptors. Pool metrics follow Resilience4j's bulkhead metric names
// (resilience4j_bulkhead_available_concurrent_calls, ..._max_allowed_concurrent_calls) with the
// "bulkhead_" prefix; the label "name" is the pool name.
var (
	descAvailable = prometheus.NewDesc("bulkhead_available_concurrent_calls",
		"Slots of the pool that are free.", []string{"name", "kind"}, nil)
	descMaxAllowed = prometheus.NewDesc("bulkhead_max_allowed_concurrent_calls",
		"Size of the pool.", []string{"name", "kind"}, nil)
	descQueueDepth = prometheus.NewDesc("bulkhead_queue_depth",
		"Calls waiting for a slot of the pool.", []string{"name"}, nil)
	descQueueCapacity = prometheus.NewDesc("bulkhead_queue_capacity",
		"Capacity of the pool's waiting room.", []string{"name"}, nil)
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
	for _, d := range []*prometheus.Desc{
		descAvailable, descMaxAllowed, descQueueDepth, descQueueCapacity, descAdmitted, descRejected,
		descWaitTotal, descWaitMax, descDepInFlight, descDepConnsOpen, descDepConnsInUse,
		descDepConnWait, descDepCalls, descDepTimeouts, descDepErrors, descDepBreaker, descInFlight,
		descGoroutines, descInbound, descInboundCap, descOutbound, descOutboundCap, descOutboundRejected,
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
		kind := string(p.Kind)
		m(descAvailable, gauge, float64(p.Capacity-p.InUse), p.Name, kind)
		m(descMaxAllowed, gauge, float64(p.Capacity), p.Name, kind)
		m(descQueueDepth, gauge, float64(p.Waiting), p.Name)
		m(descQueueCapacity, gauge, float64(p.QueueCapacity), p.Name)
		m(descAdmitted, counter, float64(p.Admitted), p.Name)
		for _, r := range []string{outcome.ReasonFull, outcome.ReasonQueueFull, outcome.ReasonWaitTimeout} {
			m(descRejected, counter, float64(p.Rejected[r]), p.Name, r)
		}
		m(descWaitTotal, counter, p.WaitTotal.Seconds(), p.Name)
		m(descWaitMax, gauge, p.WaitMax.Seconds(), p.Name)
	}
	for _, d := range snap.Dependencies {
		m(descDepInFlight, gauge, float64(d.InFlight), d.Name)
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
