package service

// The outcome contract: every response of the service carries these headers so a load generator
// can classify it without parsing free text.
//
//	200 ok                                      X-Bulkhead-Outcome: ok
//	202 accepted for later processing           X-Bulkhead-Outcome: accepted
//	    (inbound endpoints, see inbound.go)     X-Bulkhead-Item: <item id>
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
const (
	HeaderOutcome    = "X-Bulkhead-Outcome"
	HeaderPool       = "X-Bulkhead-Pool"
	HeaderReason     = "X-Bulkhead-Reason"
	HeaderDependency = "X-Bulkhead-Dependency"
	// HeaderItem carries an inbound item's id: read from the request when the sender gives one
	// (a webhook's delivery id), else assigned, and echoed on the 202.
	HeaderItem = "X-Bulkhead-Item"
)

// Outcome values of HeaderOutcome.
const (
	OutcomeOK       = "ok"
	OutcomeAccepted = "accepted"
	OutcomeRejected = "rejected"
	OutcomeTimeout  = "timeout"
	OutcomeUpstream = "upstream"
)

// Rejection reasons (HeaderReason when the outcome is rejected).
const (
	ReasonFull        = "full"
	ReasonQueueFull   = "queue-full"
	ReasonWaitTimeout = "wait-timeout"
	ReasonBreakerOpen = "breaker-open"
	ReasonBacklogFull = "backlog-full"
)
