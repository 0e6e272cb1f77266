package outcome

// Response headers of the outcome contract (see the package comment).
const (
	HeaderOutcome    = "X-Bulkhead-Outcome"
	HeaderPool       = "X-Bulkhead-Pool"
	HeaderReason     = "X-Bulkhead-Reason"
	HeaderDependency = "X-Bulkhead-Dependency"
	// HeaderItem carries an inbound item's id: read from the request when the sender gives one
	// (a webhook's delivery id), else assigned, and echoed on the 202.
	HeaderItem = "X-Bulkhead-Item"
)

// Headers the load generator adds to every stored result (they never travel on the wire).
const (
	// HeaderScheduled is the scheduled send offset from the attack's T0, in nanoseconds.
	HeaderScheduled = "X-Loadgen-Scheduled"
	// HeaderClass is the classified outcome (Classify).
	HeaderClass = "X-Loadgen-Class"
)

// Values of HeaderOutcome.
const (
	OK       = "ok"
	Accepted = "accepted"
	Rejected = "rejected"
	Timeout  = "timeout"
	Upstream = "upstream"
)

// Rejection reasons (HeaderReason when the outcome is rejected).
const (
	ReasonFull        = "full"
	ReasonQueueFull   = "queue-full"
	ReasonWaitTimeout = "wait-timeout"
	ReasonBreakerOpen = "breaker-open"
	ReasonBacklogFull = "backlog-full"
)

// KeptHeaders are the response headers a stored result keeps from the response: the outcome
// contract's. The load generator adds HeaderScheduled and HeaderClass; everything else is
// dropped to keep raw files small.
var KeptHeaders = []string{HeaderOutcome, HeaderPool, HeaderReason, HeaderDependency}
