package attribution

import (
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// Blame targets that are not resources of resources.csv.
const (
	// blameUnexplained: no evidence explains the failure. For a rejection it reads "the target
	// (no resource at capacity; reason unknown)".
	blameUnexplained = "unexplained"
	// blameUnmetered: no resource ran out and the dependency's side was not measured (a folder
	// without dependencies.csv, or an external Toxiproxy on another host).
	blameUnmetered = "unexplained:unmetered"
	// blameTarget + detail: the target's own class, naming no resource ("target:late-socket").
	blameTarget = "target:"
	// blameDependency + D: the dependency answered late or not at all.
	blameDependency = "dependency:"
)

// Blame returns what the failure o of endpoint path in phase i, sent at T and lasting lat, is
// attributed to, following the evidence in this order (the report's method states it):
//
//  1. the target's own word: the built-in service's headers name the pool or breaker that
//     rejected a call, the conn-limit that refused it, or the dependency that failed it
//     (X-Bulkhead-Pool, -Reason, -Dependency); a foreign target's outcome mapping may name the
//     resource of a class (outcomes.blame). A rejection is charged to the named pool only if
//     that pool was at capacity at that moment (the row of resources.csv around it);
//  2. a resource serving the call that ran out while it was in flight: at capacity with demand
//     waiting for it or refused by it in that interval (a rejection is refused demand itself,
//     so at capacity is enough for it) (pools, their queues, the connections
//     and calls to its dependency, then the target's event loop, CPU and inbound connections),
//     or a waiting room without a count limit that held someone while the call lasted at least
//     95% of its bound (boundOf);
//  3. the dependency's side (dependencies.csv): it answered late (about the timeout or longer)
//     or not at all (cut, refused, closed) in that interval;
//  4. a class detail of the target's own that names no resource ("target:late-socket");
//  5. otherwise "unexplained", said plainly; when the dependency's side was not measured,
//     "unexplained:unmetered".
//
// A success returns "".
func (a *Attribution) Blame(i int, path string, r model.Record) string {
	o := a.c.Kinds[r.Key]
	return a.blame(i, path, time.Duration(r.T), time.Duration(r.Lat), o)
}

// blame is Blame of one failure; a rejection charged to a resource is recorded as demand it
// refused (refusedAt), which its rows may lack (a target without a rejection counter).
func (a *Attribution) blame(i int, path string, t, lat time.Duration, o model.Kind) string {
	r := a.blameOf(path, t, lat, o)
	if o.Type == outcome.ClassRejected && a.series[r] != nil {
		a.refusedAt[r] = append(a.refusedAt[r], t+lat)
	}
	return r
}

func (a *Attribution) blameOf(path string, t, lat time.Duration, o model.Kind) string {
	if o.Success {
		return ""
	}
	deps := a.calls[path]
	dep := o.Dep
	if dep == "" && len(deps) == 1 {
		dep = deps[0]
	}
	if dep != "" {
		deps = []string{dep}
	}
	end := t + lat
	// 1. The target's own word.
	if r, ok := a.mapping.BlameFor(o.Class, dep); ok {
		if o.Type != outcome.ClassRejected || a.atCapacity(r, t, end) {
			return r
		}
	}
	switch {
	case o.Type == outcome.ClassRejected && o.Pool != "":
		reason := o.Reason
		if reason == "" {
			reason = o.Cause
		}
		r := "pool:" + o.Pool
		switch reason {
		case outcome.ReasonQueueFull:
			r = "queue:" + o.Pool
		case outcome.ReasonBreakerOpen:
			r = o.Pool // "breaker:<dep>"
			if dep != "" {
				r = "breaker:" + dep
			}
		}
		if a.atCapacity(r, t, end) {
			return r
		}
	case o.Type == outcome.ClassUpstream && o.Reason == "conn-limit":
		if a.ranOut("conns:"+dep, t, end) || a.atCapacity("conns:"+dep, t, end) {
			return "conns:" + dep
		}
		return outcome.ResourceOutboundConns
	case o.Type == outcome.ClassUpstream && o.Dep != "" && (o.Reason != "" || o.Cause != ""):
		return blameDependency + o.Dep // the target named the dependency that failed: reset, refused, eof, 5xx
	}
	// 2. A resource serving the call that ran out while it was in flight.
	// A rejection is itself refused demand: the first candidate at capacity then takes it.
	cands := a.candidates(o, deps)
	for _, r := range cands {
		if a.ranOut(r, t, end) || o.Type == outcome.ClassRejected && a.series[r] != nil && !a.unbounded(r) && a.series[r].atCapIn(t, end) {
			return r
		}
	}
	for _, r := range cands {
		if a.queuedToBound(r, t, end) {
			return r
		}
	}
	// 3. The dependency's side.
	metered := false
	for _, d := range deps {
		side := a.deps[d]
		if side == nil {
			continue
		}
		metered = true
		if side.answeredLate(t, end, a.timeout, o.Type == outcome.ClassUpstream) {
			return blameDependency + d
		}
	}
	// 4. The target's own class, naming no resource.
	if ownDetail(o) {
		return blameTarget + o.Cause
	}
	if !metered && len(deps) > 0 && o.Type != outcome.ClassRejected {
		return blameUnmetered
	}
	return blameUnexplained
}

// ownDetail reports whether o's class carries a detail of the target's own: one its outcome
// mapping chose (not the defaults' status-NNN, nor the contract's generic details).
func ownDetail(o model.Kind) bool {
	if o.Cause == "" || o.Pool != "" || o.Reason != "" {
		return false
	}
	switch o.Cause {
	case "dependency", "client", "unknown", "full", "refused", "reset", "eof", outcome.ReasonWaitTimeout, outcome.ReasonQueueFull:
		return false
	}
	return len(o.Cause) < 7 || o.Cause[:7] != "status-"
}

// candidates lists, in the order they are tried, the resources a failure of kind o on a call
// to deps may be charged to when they ran out: for each dependency its pool, the pool's queue,
// its connections, calls in flight and their waiting room; then the outbound connection cap;
// then every resource all calls depend on (event loop, CPU, inbound connections). A client
// timeout (the target did not answer in time) tries the pool and its queue first, then the
// inbound connections.
func (a *Attribution) candidates(o model.Kind, deps []string) []string {
	var out []string
	add := func(r string) {
		if r == "" {
			return
		}
		for _, x := range out {
			if x == r {
				return
			}
		}
		out = append(out, r)
	}
	for _, d := range deps {
		if p := a.poolOf[d]; p != "" {
			add("pool:" + p)
			add("queue:" + p)
		}
	}
	if o.Type == outcome.ClassTimeout && o.Cause == "client" {
		add(outcome.ResourceInboundConns)
	}
	for _, d := range deps {
		add("conns:" + d)
		add("calls:" + d)
		add("queue:" + d)
	}
	add(outcome.ResourceOutboundConns)
	for _, r := range a.global {
		add(r)
	}
	return out
}

// ranOut reports whether resource r ran out in a row meeting [start, end]; a resource that was
// never sampled did not.
func (a *Attribution) ranOut(r string, start, end time.Duration) bool {
	s := a.series[r]
	return s != nil && s.ranOutIn(start, end)
}

// atCapacity reports whether resource r was at capacity in a row meeting [start, end] (a
// waiting room without a count limit: held someone), or is not sampled at all (then the
// target's word is all there is).
func (a *Attribution) atCapacity(r string, start, end time.Duration) bool {
	s := a.series[r]
	if s != nil && a.unbounded(r) {
		return s.peak(start, end) > 0
	}
	return s == nil || s.atCapIn(start, end)
}
