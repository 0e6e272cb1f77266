// Package outcome is the contract between the parts of bulkhead: what a response of the system
// under test means, what a resource is called, and what one row of resources.csv holds.
//
// It is a leaf: it imports only the standard library. The service writes these headers and
// resources, the load generator classifies responses with Classify, the run folder stores the
// classes and rows, and the report reads them. None of loadgen, rundir or report compiles against
// the service or the scenario loader; all of them import this package.
//
// The response contract of the built-in service:
//
//	200 ok                                      X-Bulkhead-Outcome: ok
//	202 accepted for later processing           X-Bulkhead-Outcome: accepted
//	    (inbound endpoints)                     X-Bulkhead-Item: <item id>
//	503 rejected by a pool or an open breaker   X-Bulkhead-Outcome: rejected
//	                                            X-Bulkhead-Pool: <pool name> or "breaker:<dep>"
//	                                            X-Bulkhead-Reason: full | queue-full | wait-timeout | breaker-open
//	                                                               | backlog-full (inbound; pool "inbound:<path>")
//	504 a dependency call timed out             X-Bulkhead-Outcome: timeout
//	502 a dependency failed                     X-Bulkhead-Outcome: upstream
//	                                            X-Bulkhead-Reason: reset | refused | eof | status-500 | status-NNN | conn-limit | other
//
// Every non-200 also carries X-Bulkhead-Dependency naming the dependency involved (for
// rejections by a shared pool: the dependency the call was for).
package outcome
