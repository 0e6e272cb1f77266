// Package nodebulkhead holds the proof that bulkhead can test a service that is not its own: a
// Node.js service (server.js, standard library only) with a shared or a split concurrency limit,
// answering 503 when full and exposing Resilience4j-named metrics, a scenario for it
// (scenario.yaml) and a test that runs it against two dependencies (node_test.go). The Go
// package is only the test's home.
package nodebulkhead
