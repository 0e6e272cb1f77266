// Package report turns a run folder (see package rundir) into what users come for: exact
// statistics per configuration, phase and endpoint, the resource that ran out, verdicts on the
// scenario's claims, a summary.json other tools can read, a report.md readable on its own, and
// plots.
//
// The report reads files only: run.json, each configuration's manifest.json, raw/<endpoint>.json
// (vegeta JSON-lines results) and resources.csv. It never writes inside a configuration folder,
// so a run can always be re-reported with Generate, or several runs laid side by side with
// Compare.
//
// # Statistics
//
// Quantiles are exact: the latencies of a slice are sorted and the q-quantile is the nearest-rank
// value, the smallest latency with at least a fraction q of the slice at or below it (vegeta's
// own Metrics use a t-digest and are approximate). A request belongs to the phase (and the time
// bucket) that contains its send offset, Result.Timestamp - Manifest.Started; phases are
// half-open intervals [start, end), so a request sent exactly at a boundary belongs to the later
// phase. A request is a success when its X-Loadgen-Class is "ok"; every other class is a failure
// whose type is the class prefix before ':' (timeout, rejected, upstream, connection, other).
// Throughput is successes per second of phase (or bucket) time, counted by send offset.
//
// With repetitions (folders <config>-r<rep>) each figure also gets a mean and a 95% confidence
// interval (Student's t, n-1 degrees of freedom) across the repetitions of one configuration,
// and its spread: the smallest, median and largest value of a repetition.
//
// # Timeline and plots
//
// Each endpoint's time line is cut into buckets of 1 s that never straddle a phase boundary (a
// bucket that would is cut there). A bucket keeps its counts by outcome, the latency of every
// request, of the successes and of the failures apart, the requests sent and succeeded per
// second, the send lag of its requests (actual send offset minus the X-Loadgen-Scheduled offset,
// on the attack's own clock) and a log-scaled latency histogram of successes and of failures;
// all of it is summary.json's "timeline". Every time plot is drawn from those buckets as steps
// held across each bucket, with every phase named on its axis: latency of successes above that
// of failures (a fast rejection can never look like a speed-up), stacked outcomes, sent vs
// successful throughput, a latency heatmap, and send lag against the validity bound (plots.go).
//
// # Which resource ran out
//
// A resource of resources.csv with capacity > 0 is saturated in a phase when it reached capacity in
// it. A run written with the interval columns (interval_s and after) is accounted exactly: the time
// at capacity, the first instant at capacity, the time-weighted mean and the maximum come from the
// resource's own transitions, summed over the intervals in the phase (resources.go). Older folders
// have point samples only: saturated in a sample when in_use >= capacity, and the share of the
// phase at capacity is the share of samples at capacity.
// Failures are attributed to a resource as follows (attribute in exhausted.go):
//
//   - rejected full / wait-timeout: "pool:<X-Bulkhead-Pool>"; queue-full: "queue:<pool>";
//     breaker-open: "breaker:<dependency>".
//   - a dependency timeout on dependency D: the pool holding D's slots if it saturated in the
//     phase (the call held a slot for the whole timeout), else "conns:D" if that saturated, else
//     "dependency:D" (D itself was slow: no local resource ran out).
//   - a client-side timeout (the service did not answer in time): the endpoint's pool, its queue,
//     then inbound-conns, whichever saturated first in that order, else "service".
//   - upstream conn-limit: the outbound connection cap (outbound-conns or conns:D) when
//     saturated; other upstream errors: "dependency:D".
//   - connection errors: "inbound-conns" when saturated, else "service".
//
// # Verdicts
//
// A scenario states its seed's claims as data (a `claims:` block, see claim.Claim), recorded by
// the runner as claims.json; the roles they rest on are declared (roles.json), never guessed. One
// engine judges every claim (verdict.go, verdict_judge.go): each figure an endpoint's statistics
// in a configuration x phase, a resource's samples (optionally up to the first saturation of
// another resource), or a difference or ratio of two such figures, with a 95% interval from a
// seeded block bootstrap over the phase's 1 s blocks and the repetitions (MethodText states the
// method in every report). A claim holds when the whole interval of left - right satisfies it,
// does not hold when the whole interval violates it, is inconclusive otherwise, and is not
// measurable when a figure cannot be computed or one of its preconditions (require:) does not
// hold. On an invalid run every claim is listed with its numbers but without a verdict.
// summary.json's "verdict" block holds the outcome (pass, fail, invalid) that the CLI turns into
// its exit code.
package report
