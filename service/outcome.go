package service

// The outcome contract: every response of the service carries these headers so a load generator
// can classify it without parsing free text.
//
//	200 ok                                      X-Bulkhead-Outcome: ok
//	503 rejected by a pool or an open breaker   X-Bulkhead-Outcome: rejected
//	                                            X-Bulkhead-Pool: <pool name> or "breaker:<dep>"
//	                                            X-Bulkhead-Reason: full | queue-full | wait-timeout | breaker-open
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
)

// Outcome values of HeaderOutcome.
const (
	OutcomeOK       = "ok"
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
)
