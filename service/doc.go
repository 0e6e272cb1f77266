// Package service is the system under test: a small HTTP service whose endpoints call
// dependencies over real HTTP, every call holding a slot from a bulkhead pool, with an account of
// every resource it can run out of.
//
// # Pools
//
// A Pool admits a bounded number of concurrent calls; each kind is one small file:
//
//   - Semaphore (semaphore.go): permits held by the caller's goroutine, a bounded waiting room
//     and a max wait (0 = reject at once). TryAcquire is one atomic add, no allocation.
//   - Workers (workers.go): Size worker goroutines fed by a bounded FIFO queue.
//
// Rejections are *RejectedError values wrapping ErrFull, ErrQueueFull or ErrWaitTimeout.
//
// Config.Mode chooses the layout: shared (one pool for every dependency), split (a pool per
// dependency or named group, each dependency in exactly one) or none (no pool, so the next scarce
// resource shows). Which layouts an experiment compares is the experiment's business (the
// scenarios package); the service builds what its Config says. Config.Validate is the one check
// of a Config, returning every problem as a FieldError named by its yaml key path.
//
// # Calls and their order
//
// An inbound request to an endpoint calls each dependency the endpoint names. One call goes
// through, in order: the dependency's circuit breaker (when configured), its pool, and the HTTP
// call bounded by Config.ClientTimeout from the moment the pool admitted it. The breaker sits
// outside the pool so that an open breaker rejects without taking a slot, and pool rejections are
// not counted as dependency failures. Endpoints with several calls start them concurrently and
// collect them in order under a per-call or shared Deadline.
//
// # Outcomes
//
// Every response carries the X-Bulkhead-* headers of outcome.go: 200 ok, 503 rejected (pool and
// reason), 504 timeout, 502 upstream (cause). One helper maps errors to responses.
//
// # Accounting
//
// Counters are atomics updated on the call path; Snapshot reads them, Snapshot.Resources flattens
// them for time series, GET /debug/resources serves the Snapshot as JSON and GET /metrics serves
// it as Prometheus metrics from a registry of the Service's own: the pools under Resilience4j's
// names and labels (semaphore pools as resilience4j_bulkhead_available_concurrent_calls and
// ..._max_allowed_concurrent_calls, workers pools as its thread-pool bulkhead's
// resilience4j_bulkhead_active_thread_count, ..._max_thread_pool_size, ..._queue_depth,
// ..._queue_capacity, all by label name), the rest under bulkhead_* names, per-endpoint
// http_server_requests_total{endpoint,code} and http_server_request_duration_seconds{endpoint},
// and the standard go_* and process_* collectors. The scrape package reads the page back into
// the same resources as Snapshot.Resources.
//
// # Lifecycle
//
// New builds everything; Handler returns the routes without listening; Serve or Start listen;
// Shutdown stops the server, the worker goroutines and idle connections.
package service
