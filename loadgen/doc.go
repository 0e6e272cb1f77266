// Package loadgen drives HTTP endpoints at fixed open-model rates with the vegeta library and
// checks itself while doing so.
//
// One Run holds one attack per endpoint, all started at the same instant T0 (the time line's zero).
// Each attack is paced by a Pacer that is a pure function of elapsed time and hits sent, so the
// scheduled send time of every request is known: hit k is due at Pacer.Scheduled(k) after T0.
// A slow response never delays the next send (open model), up to a generous worker cap. Because
// vegeta degrades silently when it cannot keep up (workers exhausted, CPU starved), every Run
// compares what was sent with what was scheduled and reports, per attack, a Check: sends dropped,
// send lag quantiles (actual minus scheduled send time), and Valid false with reasons in words and
// numbers when the lag p99 exceeds the lag limit or anything was dropped.
//
// The actual send time is when a vegeta worker takes the hit up and starts the request (vegeta's
// Result.Timestamp): the load generator's own punctuality. Finding or dialing a connection and
// writing the request come after it and count in the result's latency, not in the lag, so that a
// system under test that is slow to accept connections makes its own latency worse, not the run
// invalid. (Measuring at the wire instead, with httptrace's WroteRequest, was tried: it adds
// 25-35 µs to the lag p50 and a per-request trace, and it judges the target's accept queue as
// the load generator's lateness.)
//
// Pacing: the Go runtime's timers wake an idle process with millisecond granularity, which alone
// would put the send lag p99 near 1 ms. Each attack's pacing goroutine therefore sleeps on a
// kernel high-resolution timer (a timerfd) read through the runtime's netpoller, which wakes it
// at the due time without holding a thread while it waits (Linux; elsewhere plain sleep).
//
// Memory grows with what is measured, not with what is declared: an attack starts with a few KB
// (no histogram, an 8 KiB result buffer, about 10 ms worth of vegeta workers), keeps every send's
// lag exactly (4 bytes a send) and the last second's latencies, and streams every result as a
// vegeta JSON line to the attack's writer as it arrives. Lag and latency quantiles are exact
// (nearest rank). Stored results keep vegeta's fields (Seq gapless per
// attack, so the vegeta CLI's report and plot read them), drop the body, and keep only the
// service's X-Bulkhead-* response headers plus two the load generator adds: outcome.HeaderScheduled
// (the scheduled send offset from T0, in nanoseconds) and outcome.HeaderClass (Classify).
//
// Transport: requests go through package h1, a lean HTTP/1.1 transport that writes each request
// and reads its response in the vegeta worker's own goroutine on a pooled keep-alive connection,
// with one deadline on the connection as the timeout. net/http's Transport hands every request
// and response between the worker and a reader and a writer goroutine per connection, and
// http.Client's timeout adds a timer and a goroutine per request. h1's exchange takes about 30%
// less time and half the allocations (h1's BenchmarkExchange), and a load generator on one core
// 5-16% less CPU at 2,000-8,000 sends/s (the pacing figure). h1 sends anything but a bodiless
// plain-http request through net/http, and its errors read like net/http's, so Classify gives
// the same classes.
//
// loadgen speaks HTTP to whatever URL it is given; the only thing it knows of the service is the
// outcome header contract in package outcome.
package loadgen
