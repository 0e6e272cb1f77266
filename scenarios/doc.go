// Package scenarios loads, completes and validates experiment scenarios written in YAML, and
// embeds the built-in ones (the *.yaml files beside this package), so `bulkhead run hypothesis`
// works from any directory.
//
// A scenario names the dependencies and endpoints of the service under test, the client timeout,
// the pool layouts (configurations) to compare, the open-model load, and the phases of one time
// line with the faults each applies:
//
//	name: hypothesis
//	seed: 42                      # 0 or absent = 1
//	timeout: 500ms                # client timeout of every dependency call; required, > 0
//	dependencies:
//	  - {name: A, latency: 5ms, jitter: 1ms, breaker: {slow_call_threshold: 400ms}}
//	endpoints:
//	  - {path: /a, calls: [A], deadline: per-call, rate: 20/s}   # rate overrides load.rate
//	load:
//	  rate: 50/s                  # also "50/1s", "3000/1m" or a number per second; > 0
//	  arrivals: constant          # or poisson; default constant
//	  timeout: 2s                 # the load generator's own; default 4x timeout; > timeout
//	configurations:
//	  - {name: shared, mode: shared, size: 10, pools: default}   # see DefaultPools
//	  - name: split               # mode inferred: none / shared / split
//	    pools:
//	      - {name: A, kind: semaphore, size: 5, queue: 0, max_wait: 0s, dependencies: [A]}
//	phases:
//	  - name: latency
//	    duration: 15s
//	    faults:
//	      - {dependency: A, type: latency, latency: 0.9x timeout}
//	repetitions: 1                # 0 or absent = 1
//	sample_every: 100ms           # resource sampling; absent = 100ms, > 0 when written
//	limits: {max_inbound_conns: 0, max_outbound_conns: 0}        # 0 = no cap
//	claims:                       # the seed's claims as data, judged by the report (see Claim)
//	  - id: shared-starves-b
//	    says: "with one shared pool /b fails while A is slow"
//	    measure: {metric: success_rate, configuration: shared, phase: latency, endpoint: /b}
//	    op: "<"                   # <, <=, >, >=, within (with tolerance)
//	    value: 0.5                # or than: {another measure}, factor, plus
//
// Top-level keys starting with "x-" are ignored, as in compose files: a place to define YAML
// anchors (`x-slow: &slow {dependency: A, type: latency, latency: 0.9x}`) used further down.
//
// Every duration except timeout itself may be written relative to the client timeout
// ("0.9x timeout" or "0.9x"); Load resolves it and records the text and the value in
// Scenario.Resolved under the field path. Fault types, their keys and what each installs are
// defined in package faults, one file per type; the loader decodes a fault's keys by asking its
// registry. Every toxic-made fault also takes toxicity (the share of connections, drawn per
// connection) and direction (downstream, the default, or upstream).
//
// Loading is strict and reports every problem, not only the first, each as a *FieldError:
//
//	scenarios/x.yaml:14: phases[2].faults[0].dependency: unknown dependency "C" (known: A, B)
//
// A dependency, an endpoint and a pool are the service's own types (service.DependencyConfig,
// EndpointConfig, PoolConfig, embedded), and Validate checks them with the service's one
// service.Config.Validate on every configuration, mapping its field paths back to the file's
// lines: what validates builds with service.New. What a file may ask for is bounded (limits.go:
// file size, YAML nodes with aliases followed, counts, rates, durations, repetitions), and
// Estimate says what a run needs before it starts.
//
// The flow is one way: Load (or Open) -> Validate -> ServiceConfig per configuration. After
// changing a loaded scenario (CLI overrides), call Validate again; its errors still point at the
// file's lines.
package scenarios
