package report

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// attribution finds, per phase, which bounded resources reached capacity and which resource each
// failure is attributed to (rules in doc.go).
type attribution struct {
	c      *Configuration
	poolOf map[string]string   // dependency -> pool name
	calls  map[string][]string // endpoint -> dependencies
	sat    []map[string]bool   // per phase: saturated resources
	// counts per phase: endpoint -> resource -> type -> failures
	counts []map[string]map[string]map[string]int
}

// newAttribution computes the Exhausted list of every phase of c from c.resources.
func newAttribution(c *Configuration, svc outcome.Topology) *attribution {
	a := &attribution{c: c, poolOf: map[string]string{}, calls: map[string][]string{}}
	for _, p := range svc.Pools {
		for _, d := range p.Dependencies {
			a.poolOf[d] = p.Name
		}
	}
	for _, e := range svc.Endpoints {
		a.calls[e.Path] = e.Calls
	}
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Exhausted = exhaustedIn(c, ph)
		sat := map[string]bool{}
		for _, e := range ph.Exhausted {
			if e.ranOut() {
				sat[e.Resource] = true
			}
		}
		a.sat = append(a.sat, sat)
		a.counts = append(a.counts, map[string]map[string]map[string]int{})
	}
	return a
}

// exhaustedIn accounts every bounded resource over one phase (resourceUsage: exact time from the
// run's intervals, or the older point samples), saturated ones first (by share, then name).
func exhaustedIn(c *Configuration, ph *Phase) []Exhausted {
	var order []string
	seen := map[string]bool{}
	for _, s := range c.resources {
		if !seen[s.Resource] {
			seen[s.Resource] = true
			order = append(order, s.Resource)
		}
	}
	var out []Exhausted
	for _, name := range order {
		u := resourceUsage(c.resources, name, ph.start, ph.end)
		if !u.ok() || u.capacity <= 0 {
			continue
		}
		e := Exhausted{Resource: name, Capacity: u.capacity, MaxInUse: u.maxInUse, Rejected: u.rejected(),
			SaturatedShare: u.share(), Exact: u.exact}
		if u.exact {
			e.MeanInUse = u.mean()
			e.AtCapacityS = u.atCapacity.Seconds()
		}
		if u.saturated() {
			e.Saturated = true
			v := (u.first - ph.start).Seconds()
			e.FirstSaturatedS = &v
			if len(ph.Faults) > 0 {
				w := (u.first - ph.faultStart).Seconds()
				e.AfterFaultS = &w
			}
		}
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(x, y Exhausted) int {
		switch {
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

// ranOut reports whether e ran out in its phase: it was at capacity in a sample (point samples)
// or for at least minRanOut seconds (exact).
func (e Exhausted) ranOut() bool {
	return e.Saturated && (!e.Exact || e.AtCapacityS >= minRanOut)
}

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

// add attributes the failures among recs (one endpoint's requests in phase i).
func (a *attribution) add(i int, path string, recs []record, outs []kind) {
	byRes := a.counts[i][path]
	if byRes == nil {
		byRes = map[string]map[string]int{}
		a.counts[i][path] = byRes
	}
	for _, r := range recs {
		o := outs[r.key]
		if o.success {
			continue
		}
		res := a.resource(i, path, o)
		if byRes[res] == nil {
			byRes[res] = map[string]int{}
		}
		byRes[res][o.typ]++
	}
}

// resource returns the resource a failure of endpoint path in phase i is attributed to.
func (a *attribution) resource(i int, path string, o kind) string {
	sat := a.sat[i]
	dep := o.dep
	if dep == "" && len(a.calls[path]) == 1 {
		dep = a.calls[path][0]
	}
	switch o.typ {
	case "rejected":
		reason := o.reason
		if reason == "" {
			reason = o.cause
		}
		pool := o.pool
		if pool == "" {
			pool = a.poolOf[dep]
		}
		switch reason {
		case outcome.ReasonQueueFull:
			return "queue:" + pool
		case outcome.ReasonBreakerOpen:
			if dep == "" {
				return strings.Replace(pool, "breaker:", "breaker:", 1)
			}
			return "breaker:" + dep
		}
		return "pool:" + pool
	case "timeout":
		if o.cause == "client" {
			for _, d := range a.calls[path] {
				if p := a.poolOf[d]; p != "" {
					for _, r := range []string{"pool:" + p, "queue:" + p} {
						if sat[r] {
							return r
						}
					}
				}
			}
			if sat["inbound-conns"] {
				return "inbound-conns"
			}
			return "service"
		}
		for _, r := range []string{"pool:" + a.poolOf[dep], "conns:" + dep, "outbound-conns"} {
			if sat[r] {
				return r
			}
		}
		return "dependency:" + dep
	case "upstream":
		if o.cause == "conn-limit" || o.reason == "conn-limit" {
			if sat["conns:"+dep] {
				return "conns:" + dep
			}
			return "outbound-conns"
		}
		return "dependency:" + dep
	case "connection":
		if sat["inbound-conns"] {
			return "inbound-conns"
		}
		return "service"
	}
	return "other"
}

// finish fills each phase's failure counts per resource, its Cause and its Sentence.
func (a *attribution) finish() {
	for i := range a.c.Phases {
		ph := &a.c.Phases[i]
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
			cause := &Cause{Resource: top, Failures: perRes[top], Share: float64(perRes[top]) / float64(total),
				Kind: kindOf(maxKey(perResType[top])), ByEndpoint: map[string]map[string]int{}}
			best := -1
			for _, ep := range sortedKeys(a.counts[i]) {
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
		ph.Sentence = sentence(a.c.Mode, ph, len(a.c.resources) > 0)
	}
}

// maxKey returns the key with the largest count, ties broken by name.
func maxKey(m map[string]int) string {
	best, bn := "", -1
	for _, k := range sortedKeys(m) {
		if m[k] > bn {
			best, bn = k, m[k]
		}
	}
	return best
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func kindOf(typ string) string {
	switch typ {
	case "rejected":
		return "rejections"
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
	}
	return "resource"
}

func pct(x float64) string { return fmt.Sprintf("%.0f%%", 100*x) }

// sentence says what ran out in a phase and what it explains, e.g. "the shared pool saturated
// 1.2 s after the fault began and was at 10/10 for 96% of the fault; 88% of /b failures were
// rejections by that pool".
func sentence(mode string, ph *Phase, sampled bool) string {
	var sat []Exhausted
	for _, e := range ph.Exhausted {
		if e.ranOut() {
			sat = append(sat, e)
		}
	}
	span := "phase"
	if len(ph.Faults) > 0 {
		span = "fault"
	}
	var b strings.Builder
	var top *Exhausted
	if len(sat) == 0 {
		if !sampled {
			b.WriteString("no resource samples were recorded")
		} else if mode == outcome.ModeNone {
			b.WriteString("nothing ran out: no connection cap reached capacity")
		} else {
			b.WriteString("no bounded resource reached capacity")
		}
	} else {
		top = &sat[0]
		if ph.Cause != nil {
			for i := range sat {
				if sat[i].Resource == ph.Cause.Resource {
					top = &sat[i]
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
		fmt.Fprintf(&b, "%s saturated %s and was at %d/%d for %s of the %s",
			describeResource(top.Resource), when, top.Capacity, top.Capacity, pct(top.SaturatedShare), span)
		var also []string
		for _, e := range sat {
			if e.Resource != top.Resource {
				also = append(also, fmt.Sprintf("%s (%s)", describeResource(e.Resource), pct(e.SaturatedShare)))
			}
		}
		if len(also) > 0 {
			fmt.Fprintf(&b, " (also at capacity: %s)", strings.Join(also, ", "))
		}
	}
	c := ph.Cause
	if c == nil {
		b.WriteString("; no request failed")
		return b.String()
	}
	ref := describeResource(c.Resource)
	if top != nil && top.Resource == c.Resource {
		ref = "that " + noun(c.Resource)
	}
	// One clause per failure type attributed to the cause, largest first: "88% of /b failures
	// were rejections by that pool and 10% timeouts while it was full".
	types := sortedKeys(c.EndpointByType)
	slices.SortStableFunc(types, func(x, y string) int { return c.EndpointByType[y] - c.EndpointByType[x] })
	for i, typ := range types {
		share := float64(c.EndpointByType[typ]) / float64(c.EndpointFailures)
		what := failurePhrase(kindOf(typ), c.Resource, ref)
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
	for _, ep := range sortedKeys(c.ByEndpoint) {
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
// pool", "timeouts of dependency A").
func failurePhrase(kind, resource, ref string) string {
	switch {
	case kind == "rejections":
		return "rejections by " + ref
	case kind == "timeouts" && strings.HasPrefix(resource, "dependency:"):
		return "timeouts of " + ref
	case kind == "timeouts" && (resource == "service"):
		return "timeouts in " + ref
	case kind == "timeouts":
		return "timeouts while " + ref + " was full"
	case strings.HasPrefix(resource, "dependency:"):
		return kind + " from " + ref
	}
	return kind + " at " + ref
}
