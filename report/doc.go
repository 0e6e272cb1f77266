// Package report turns a run folder (see package rundir) into what users come for: exact
// statistics per configuration, phase and endpoint, the resource that ran out, verdicts on the
// scenario's claims, a summary.json other tools can read, a report.md readable on its own, and
// plots.
//
// This package only orchestrates (Analyze, Generate, Compare); each job has its own package:
//
//   - report/model: the Summary and every type summary.json holds, shared by all the jobs;
//   - report/ingest: reading a run folder into a Summary;
//   - report/stats: exact quantiles, per-phase and per-bucket statistics, the time line, the
//     aggregates across repetitions;
//   - report/attribution: which bounded resource ran out, and what each failure is blamed on;
//   - report/verdict: the verdict engine, judging the claims over a small Figures interface;
//   - report/output: the renderers behind one Output interface (report.md, summary.json, the
//     plots, the terminal lines, the verdict block as JSON), listed in Options.Outputs;
//   - report/chart: drawing the figures.
//
// The report reads files only: run.json, each configuration's manifest.json, raw/<endpoint>.json
// (vegeta JSON-lines results), resources.csv and dependencies.csv. It never writes inside a configuration folder,
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
// successful throughput, a latency heatmap, and send lag against the validity bound (package
// output).
//
// # Which resource ran out
//
// A resource of resources.csv with capacity > 0 is saturated in a phase when it reached capacity in
// it. A run written with the interval columns (interval_s and after) is accounted exactly: the time
// at capacity, the first instant at capacity, the time-weighted mean and the maximum come from the
// resource's own transitions, summed over the intervals in the phase (package attribution). Older folders
// have point samples only: saturated in a sample when in_use >= capacity, and the share of the
// phase at capacity is the share of samples at capacity.
// A saturated resource ran out only when demand was waiting for it (its waiting room,
// queue:<name>, held someone) or refused by it (its rejection counter grew, or a rejection was
// charged to it) while it was at capacity; otherwise it was full but sufficient and decides
// nothing. Each failure is blamed on the first evidence of, in this order (attribution.Blame,
// stated in report.md by attribution.MethodText): the target's own word (the built-in headers'
// pool, queue, breaker or connection cap, a rejection only if that pool was at capacity then;
// a foreign target's outcomes.blame); a resource serving the call that ran out while it was in
// flight; the dependency, measured on its side (dependencies.csv) answering late or not at all;
// a class detail of the target's own naming no resource; otherwise "unexplained". Waiting that
// did not fail is explained per endpoint (model.Wait), and waiting rooms without a count limit
// are judged by their growth and the wait they imposed against a bound (model.Queue).
//
// # Verdicts
//
// A scenario states its seed's claims as data (a `claims:` block, see claim.Claim), recorded by
// the runner as claims.json; the roles they rest on are declared (roles.json), never guessed. One
// engine judges every claim (package verdict): each figure an endpoint's statistics
// in a configuration x phase, a resource's samples (optionally up to the first saturation of
// another resource), or a difference or ratio of two such figures, with a 95% interval that
// contains the variation between repetitions and the noise within each run's 1 s blocks
// (package confidence; verdict.MethodText states the method in every report). A claim holds when the whole interval of left - right satisfies it,
// does not hold when the whole interval violates it, is inconclusive otherwise, and is not
// measurable when a figure cannot be computed or one of its preconditions (require:) does not
// hold. On an invalid run every claim is listed with its numbers but without a verdict.
// summary.json's "verdict" block holds the outcome (pass, fail, invalid) that the CLI turns into
// its exit code.
package report
