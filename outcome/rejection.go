package outcome

// Kinds of rejection (RejectionKind). A rejection either turned the call away at once (the pool,
// its waiting room or a breaker was full or open when the call came), or let it wait for a slot
// and gave up on it when its wait ran out: the first costs the caller nothing but the answer,
// the second a whole wait. Reports count, tabulate and draw them apart.
const (
	// RejectRefused is a rejection at once: full, queue-full, breaker-open, backlog-full, a 429
	// or 503 status without a detail that says it waited.
	RejectRefused = "refused"
	// RejectWaited is a rejection after queueing: the call waited for a slot until its bound (a
	// pool's max wait, a proxy's queue timeout) and was turned away.
	RejectWaited = "waited"
)

// RejectionKind returns RejectWaited for a rejection whose detail says the call waited first
// ("rejected:wait-timeout": the built-in service's semaphore or workers queue at its max wait,
// or a target's own class mapped to it, such as a proxy's queue timeout), RejectRefused for any
// other rejection, and "" for a class that is not a rejection.
func RejectionKind(class string) string {
	if ClassType(class) != ClassRejected {
		return ""
	}
	if ClassDetail(class) == ReasonWaitTimeout {
		return RejectWaited
	}
	return RejectRefused
}
