// Package foreign is issue 20's proof that "which resource ran out" follows evidence for
// services the project did not write: three of them, written here, none with a limiter of the
// built-in service's kind, each run through a stall, a fast error and a dependency that is down,
// with the attribution checked against the service's own account of every request:
//
//   - sockets.js (Node.js): its only scarce resource is its HTTP agents' sockets, one budget
//     shared by both dependencies or split per dependency (sockets.yaml);
//   - threads.py (Python standard library): thread-pool executors with unbounded queues, shared
//     or split (threads.yaml);
//   - HAProxy (proxy.cfg; install-haproxy.sh installs it from the distribution): per-server
//     connection caps and a queue bounded by wait time, its own Prometheus exporter
//     (proxy.yaml).
//
// Each scenario runs with `bulkhead run examples/foreign/<name>.yaml`. The tests (the e2e tier,
// skipped by -short; a missing program fails them in CI) also log, per phase, the sentence next
// to the ground truth read from the raw files.
package foreign
