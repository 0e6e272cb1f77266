package attribution

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// Attribution finds, per phase of one configuration, which resources ran out and what each
// failure is attributed to, following the evidence in a stated order (Blame), and says it in one
// sentence per phase. Use New, Add every endpoint's requests of every phase, then Finish.
type Attribution struct {
	c       *model.Configuration
	poolOf  map[string]string // dependency -> pool name
	maxWait map[string]time.Duration
	calls   map[string][]string // endpoint -> dependencies
	timeout time.Duration
	mapping *outcome.Mapping
	series  map[string]*series  // resource -> its rows, flagged
	deps    map[string]*depSide // dependency -> its side's rows
	global  []string            // resources every call depends on, sampled
	// counts per phase: endpoint -> blame -> type -> failures
	counts []map[string]map[string]map[string]int
	// refusedAt holds, per resource, when each rejection charged to it ended: refused demand
	// its rows may not show.
	refusedAt map[string][]time.Duration
}

// New computes the Exhausted list of every phase of c from c.Resources; svc is the topology of
// the system under test (its pools and which endpoint calls which dependency). It sets c.Blame.
func New(c *model.Configuration, svc outcome.Topology) *Attribution {
	a := &Attribution{c: c, poolOf: map[string]string{}, maxWait: map[string]time.Duration{}, calls: map[string][]string{},
		timeout: svc.ClientTimeout, series: seriesOf(c.Resources), deps: depSides(c.Dependencies),
		refusedAt: map[string][]time.Duration{}}
	if c.ClientTimeoutMS > 0 {
		a.timeout = time.Duration(c.ClientTimeoutMS * float64(time.Millisecond))
	}
	if c.Manifest != nil && c.Manifest.Target != nil {
		a.mapping = c.Manifest.Target.Outcomes
	}
	for _, p := range svc.Pools {
		a.maxWait[p.Name] = p.MaxWait
		for _, d := range p.Dependencies {
			a.poolOf[d] = p.Name
		}
	}
	for _, e := range svc.Endpoints {
		a.calls[e.Path] = e.Calls
	}
	for _, name := range slices.Sorted(maps.Keys(a.series)) {
		if isGlobal(name) {
			a.global = append(a.global, name)
		}
	}
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Exhausted = a.exhaustedIn(ph)
		a.counts = append(a.counts, map[string]map[string]map[string]int{})
	}
	c.Blame = a.Blame
	return a
}

// exhaustedIn accounts every bounded resource over one phase (ResourceUsage: exact time from the
// run's intervals, or the older point samples), and whether it ran out (at capacity with demand
// waiting or refused) or was full but sufficient; those that ran out first, then the others at
// capacity (by share, then name).
func (a *Attribution) exhaustedIn(ph *model.Phase) []model.Exhausted {
	c := a.c
	var order []string
	seen := map[string]bool{}
	for _, s := range c.Resources {
		if !seen[s.Resource] {
			seen[s.Resource] = true
			order = append(order, s.Resource)
		}
	}
	var out []model.Exhausted
	for _, name := range order {
		u := ResourceUsage(c.Resources, name, ph.Start, ph.End)
		if !u.OK() || u.capacity <= 0 {
			continue
		}
		e := model.Exhausted{Resource: name, Capacity: u.capacity, MaxInUse: u.maxInUse, Rejected: u.Rejected(),
			SaturatedShare: u.Share(), Exact: u.exact}
		if u.exact {
			e.MeanInUse = u.Mean()
			e.AtCapacityS = u.atCapacity.Seconds()
		}
		if u.Saturated() {
			e.Saturated = true
			v := (u.first - ph.Start).Seconds()
			e.FirstSaturatedS = &v
			if len(ph.Faults) > 0 {
				w := (u.first - ph.FaultStart).Seconds()
				e.AfterFaultS = &w
			}
			if s := a.series[name]; s != nil {
				d, any := s.demand(ph.Start, ph.End)
				e.DemandS = d.Seconds()
				e.RanOut = any && longAtCapacity(e)
			}
			e.FullButSufficient = !e.RanOut && longAtCapacity(e)
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(x, y model.Exhausted) int {
		switch {
		case x.RanOut != y.RanOut:
			if x.RanOut {
				return -1
			}
			return 1
		case x.Saturated != y.Saturated:
			if x.Saturated {
				return -1
			}
			return 1
		case x.SaturatedShare > y.SaturatedShare:
			return -1
		case x.SaturatedShare < y.SaturatedShare:
			return 1
		case resourceRank(x.Resource) != resourceRank(y.Resource):
			return resourceRank(x.Resource) - resourceRank(y.Resource)
		}
		return strings.Compare(x.Resource, y.Resource)
	})
	return out
}

// minRanOut is the least time at capacity in a phase for which exact figures count a resource
// as having run out, in the sentence and when failures are attributed: one sampling period
// (100 ms), the least a point sample could see. Exact accounting also catches a pool that was
// full for a few microseconds; such a touch explains no failure.
const minRanOut = 0.1

// longAtCapacity reports whether e was at capacity long enough to count in its phase: in a
// sample (point samples) or for at least minRanOut seconds (exact).
func longAtCapacity(e model.Exhausted) bool {
	return e.Saturated && (!e.Exact || e.AtCapacityS >= minRanOut)
}

// RanOut reports whether e ran out in its phase: at capacity with demand waiting for it or
// refused by it, for at least minRanOut seconds (exact) or in a sample (point samples).
func RanOut(e model.Exhausted) bool { return e.RanOut }

// resourceRank orders resources saturated for the same share of a phase: the bulkhead's own
// pools and queues first (the calls in flight to a pool's dependency mirror the pool), then the
// rest.
func resourceRank(r string) int {
	switch {
	case strings.HasPrefix(r, "pool:"):
		return 0
	case strings.HasPrefix(r, "queue:"):
		return 1
	}
	return 2
}

// Add attributes the failures among recs (endpoint path's requests in phase i; outs are the
// outcomes their keys index) by Blame.
func (a *Attribution) Add(i int, path string, recs []model.Record, outs []model.Kind) {
	byRes := a.counts[i][path]
	if byRes == nil {
		byRes = map[string]map[string]int{}
		a.counts[i][path] = byRes
	}
	for _, r := range recs {
		o := outs[r.Key]
		if o.Success {
			continue
		}
		res := a.blame(i, path, time.Duration(r.T), time.Duration(r.Lat), o)
		if byRes[res] == nil {
			byRes[res] = map[string]int{}
		}
		byRes[res][typeOf(o)]++
	}
}

// typeOf is the failure type a clause of the sentence counts: the class type, with rejections
// after waiting apart from those at once.
func typeOf(o model.Kind) string {
	if o.Type == outcome.ClassRejected && outcome.RejectionKind(o.Class) == outcome.RejectWaited {
		return typeRejectedWaited
	}
	return o.Type
}

// typeRejectedWaited counts rejections after waiting for a slot (outcome.RejectWaited).
const typeRejectedWaited = "rejected-waited"

// Finish fills each phase's failure counts per resource, its Cause and its Sentence. The
// rejections charged to a resource count as demand it refused, so each phase's Exhausted list is
// judged again with them first.
func (a *Attribution) Finish() {
	for r, ts := range a.refusedAt {
		s := a.series[r]
		for _, t := range ts {
			lo, hi := s.overlapping(t, t)
			for j := lo; j < hi; j++ {
				if s.from[j] < t && t <= s.rows[j].T || s.from[j] == s.rows[j].T {
					s.refused[j] = true
				}
			}
		}
	}
	for i := range a.c.Phases {
		ph := &a.c.Phases[i]
		if len(a.refusedAt) > 0 {
			ph.Exhausted = a.exhaustedIn(ph)
		}
		total := 0
		perRes := map[string]int{}
		perResType := map[string]map[string]int{}
		for _, byRes := range a.counts[i] {
			for res, byType := range byRes {
				for typ, n := range byType {
					total += n
					perRes[res] += n
					if perResType[res] == nil {
						perResType[res] = map[string]int{}
					}
					perResType[res][typ] += n
				}
			}
		}
		for j := range ph.Exhausted {
			ph.Exhausted[j].Failures = perRes[ph.Exhausted[j].Resource]
		}
		if total > 0 {
			top := maxKey(perRes)
			cause := &model.Cause{Resource: top, Failures: perRes[top], Share: float64(perRes[top]) / float64(total),
				Kind: kindOf(maxKey(perResType[top])), ByEndpoint: map[string]map[string]int{}}
			best := -1
			for _, ep := range slices.Sorted(maps.Keys(a.counts[i])) {
				byRes := a.counts[i][ep]
				flat := map[string]int{}
				epTotal := 0
				for res, byType := range byRes {
					for _, n := range byType {
						flat[res] += n
						epTotal += n
					}
				}
				if epTotal == 0 {
					continue
				}
				cause.ByEndpoint[ep] = flat
				if flat[top] > best {
					best = flat[top]
					cause.Endpoint = ep
					cause.EndpointShare = float64(flat[top]) / float64(epTotal)
					cause.EndpointFailures = epTotal
					cause.EndpointByType = maps.Clone(byRes[top])
				}
			}
			ph.Cause = cause
		}
		ph.Queues = a.queues(i, ph)
		ph.Dependencies = a.accounts(ph)
		ph.Waits = a.waits(i, ph)
		ph.Sentence = sentence(a.c.Mode, ph, len(a.c.Resources) > 0)
	}
}

// maxKey returns the key with the largest count, ties broken by name.
func maxKey(m map[string]int) string {
	best, bn := "", -1
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] > bn {
			best, bn = k, m[k]
		}
	}
	return best
}

func kindOf(typ string) string {
	switch typ {
	case "rejected":
		return "rejections"
	case typeRejectedWaited:
		return "rejections after waiting"
	case "timeout":
		return "timeouts"
	case "upstream":
		return "upstream errors"
	case "connection":
		return "connection errors"
	}
	return "other errors"
}

// describeResource names a resource in prose.
func describeResource(r string) string {
	kind, name, _ := strings.Cut(r, ":")
	switch kind {
	case "pool":
		return "the " + name + " pool"
	case "queue":
		return "the queue of the " + name + " pool"
	case "breaker":
		return "the breaker on " + name
	case "conns":
		return "the connections to " + name
	case "calls":
		return "the calls in flight to " + name
	case "dependency":
		return "dependency " + name
	case outcome.ResourceEventLoop:
		return "the event loop " + name
	case outcome.ResourceCPU:
		return "the CPU of " + name
	case "inbound-conns":
		return "the inbound connection cap"
	case "outbound-conns":
		return "the outbound connection cap"
	case "service":
		return "the service"
	}
	return r
}

// noun is what "that ..." refers back to.
func noun(r string) string {
	kind, _, _ := strings.Cut(r, ":")
	switch kind {
	case "pool", "queue", "breaker":
		return kind
	case "conns", "inbound-conns", "outbound-conns":
		return "connection cap"
	case "calls":
		return "cap"
	case outcome.ResourceEventLoop:
		return "event loop"
	}
	return "resource"
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// sentence says what ran out in a phase and what it explains, e.g. "the shared pool saturated
// 1.2 s after the fault began and was at 10/10 for 96% of the fault; 88% of /b failures were
// rejections by that pool".
func sentence(mode string, ph *model.Phase, sampled bool) string {
	var ran, full, long []model.Exhausted
	for _, e := range ph.Exhausted {
		switch {
		case e.RanOut:
			ran = append(ran, e)
		case e.FullButSufficient:
			full = append(full, e)
		}
		if longAtCapacity(e) {
			long = append(long, e)
		}
	}
	var queues []string
	for _, q := range ph.Queues {
		if q.ReachedBound {
			queues = append(queues, fmt.Sprintf("%s grew to %s; waits reached %s, its bound (%s)",
				describeResource(q.Resource), model.Num(q.Peak), msText(q.BoundMS), q.BoundFrom))
		} else if q.WaitMS >= q.BoundMS/4 { // a queue whose waits stayed small is in summary.json only
			queues = append(queues, fmt.Sprintf("%s grew to %s; waits reached %s (its bound %s, %s)",
				describeResource(q.Resource), model.Num(q.Peak), msText(q.WaitMS), msText(q.BoundMS), q.BoundFrom))
		}
	}
	span := "phase"
	if len(ph.Faults) > 0 {
		span = "fault"
	}
	var b strings.Builder
	var top *model.Exhausted
	switch {
	case len(ran) == 0 && len(queues) > 0:
		b.WriteString(strings.Join(queues, "; "))
		queues = nil
	case len(ran) == 0 && !sampled:
		b.WriteString("no resource samples were recorded")
	case len(ran) == 0 && len(full) > 0:
		var parts []string
		for _, e := range full {
			parts = append(parts, fmt.Sprintf("%s at %s/%s for %s of the %s", describeResource(e.Resource), model.Num(e.Capacity), model.Num(e.Capacity), pct(e.SaturatedShare), span))
		}
		fmt.Fprintf(&b, "no resource ran out (full but sufficient, nobody waiting or refused: %s)", strings.Join(parts, ", "))
	case len(ran) == 0 && mode == outcome.ModeNone:
		b.WriteString("nothing ran out: no connection cap reached capacity")
	case len(ran) == 0:
		b.WriteString("no bounded resource reached capacity")
	default:
		top = &ran[0]
		if ph.Cause != nil {
			for i := range ran {
				if ran[i].Resource == ph.Cause.Resource {
					top = &ran[i]
				}
			}
		}
		when := ""
		switch {
		case top.AfterFaultS != nil && *top.AfterFaultS <= 0:
			when = "as the fault began"
		case top.AfterFaultS != nil:
			when = fmt.Sprintf("%.1f s after the fault began", *top.AfterFaultS)
		default:
			when = fmt.Sprintf("%.1f s into the phase", *top.FirstSaturatedS)
		}
		fmt.Fprintf(&b, "%s saturated %s and was at %s/%s for %s of the %s",
			describeResource(top.Resource), when, model.Num(top.Capacity), model.Num(top.Capacity), pct(top.SaturatedShare), span)
		var also []string
		for _, e := range long {
			if e.Resource != top.Resource {
				also = append(also, fmt.Sprintf("%s (%s)", describeResource(e.Resource), pct(e.SaturatedShare)))
			}
		}
		if len(also) > 0 {
			fmt.Fprintf(&b, " (also at capacity: %s)", strings.Join(also, ", "))
		}
	}
	for _, q := range queues {
		b.WriteString("; " + q)
	}
	waits := func() {
		for _, w := range ph.Waits {
			b.WriteString("; " + waitClause(w))
		}
	}
	c := ph.Cause
	if c == nil {
		b.WriteString("; no request failed")
		waits()
		return b.String()
	}
	ref := describeResource(c.Resource)
	if top != nil && top.Resource == c.Resource {
		ref = "that " + noun(c.Resource)
	}
	// One clause per failure type attributed to the cause, largest first: "88% of /b failures
	// were rejections by that pool and 10% timeouts while it was full".
	types := slices.Sorted(maps.Keys(c.EndpointByType))
	slices.SortStableFunc(types, func(x, y string) int { return c.EndpointByType[y] - c.EndpointByType[x] })
	for i, typ := range types {
		share := float64(c.EndpointByType[typ]) / float64(c.EndpointFailures)
		what := failurePhrase(kindOf(typ), c.Resource, ref, slices.ContainsFunc(ph.Queues, func(q model.Queue) bool { return q.Resource == c.Resource }))
		if i == 0 {
			fmt.Fprintf(&b, "; %s of %s failures were %s", pct(share), c.Endpoint, what)
			ref = "it"
			continue
		}
		fmt.Fprintf(&b, " and %s %s", pct(share), what)
	}
	// "it also explains 100% of /a and /c failures and 40% of /d failures": one clause, the
	// endpoints with the same share together.
	var shares []string
	byShare := map[string][]string{}
	for _, ep := range slices.Sorted(maps.Keys(c.ByEndpoint)) {
		if n := c.ByEndpoint[ep][c.Resource]; ep != c.Endpoint && n > 0 {
			total := 0
			for _, k := range c.ByEndpoint[ep] {
				total += k
			}
			p := pct(float64(n) / float64(total))
			if byShare[p] == nil {
				shares = append(shares, p)
			}
			byShare[p] = append(byShare[p], ep)
		}
	}
	var also []string
	for _, p := range shares {
		also = append(also, fmt.Sprintf("%s of %s failures", p, joinAnd(byShare[p])))
	}
	if len(also) > 0 {
		fmt.Fprintf(&b, "; it also explains %s", joinAnd(also))
	}
	waits()
	return b.String()
}

// joinAnd joins "a", "a and b", "a, b and c".
func joinAnd(xs []string) string {
	if len(xs) < 2 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// failurePhrase says what failures of a kind attributed to resource were ("rejections by that
// pool", "timeouts of dependency A", "timeouts the target classes late-socket").
func failurePhrase(kind, resource, ref string, unbounded bool) string {
	rejection := strings.HasPrefix(kind, "rejections")
	switch {
	case resource == blameUnexplained && rejection:
		return kind + " by the target (no resource at capacity; reason unknown)"
	case resource == blameUnexplained:
		return kind + " that nothing measured explains (unexplained: no resource ran out and the dependency answered in time)"
	case resource == blameUnmetered:
		return kind + " that nothing measured explains (unexplained: no resource ran out and the dependency's side was not measured)"
	case strings.HasPrefix(resource, blameTarget):
		return kind + " the target itself classes " + strings.TrimPrefix(resource, blameTarget) + " (its own word, naming no resource)"
	case rejection && strings.HasPrefix(resource, blameDependency):
		return kind + " while " + ref + " answered late or not at all"
	case rejection:
		return kind + " by " + ref
	case kind == "timeouts" && strings.HasPrefix(resource, blameDependency):
		return "timeouts of " + ref
	case kind == "timeouts" && (resource == "service"):
		return "timeouts in " + ref
	case kind == "timeouts" && unbounded:
		return "timeouts while waiting in " + ref
	case kind == "timeouts":
		return "timeouts while " + ref + " was full"
	case strings.HasPrefix(resource, blameDependency):
		return kind + " from " + ref
	}
	return kind + " at " + ref
}
