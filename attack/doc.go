// Package attack runs the load generator (package loadgen) in a child process of the same
// binary: `bulkhead attack <spec.json>`.
//
// The runner writes a Spec (every attack's name, URL, pacer, raw file; the duration, the load
// generator's settings and the outcome mapping) into the configuration's folder and starts the
// child with Start, through package supervise. The child (Serve) builds exactly the schedule the
// runner planned (loadgen.PacerSpec), writes the raw files itself, in the same format as a load
// generator inside the runner, and talks to the runner over its stdout, one JSON Event per line:
//
//	{"type":"started","t0":"...","pid":123}              the time line's zero, wall clock
//	{"type":"progress","progress":[...]}                 every ProgressEvery
//	{"type":"done","checks":[...],"pooled":{...}}        after the last result is written
//
// SIGTERM or SIGINT stops the load as loadgen.Run.Stop does: requests in flight finish, every
// result is written and the checks are still sent. The runner side (*Process) has the methods of
// *loadgen.Run that the runner uses (T0, Progress, Stop, Wait, Pooled), so either can carry a
// configuration's load.
package attack
