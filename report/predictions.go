package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Verdict strings.
const (
	VerdictHolds         = "holds"
	VerdictDoesNotHold   = "does not hold"
	VerdictNotMeasurable = "not measurable"
)

// aggregate computes the mean and CI of every figure per configuration name across its
// repetitions, in the order configurations first appear.
func aggregate(cfgs []Configuration) []Aggregate {
	var out []Aggregate
	for _, name := range groupNames(cfgs) {
		members := group(cfgs, name)
		ag := Aggregate{Config: name, Mode: members[0].Mode, Repetitions: len(members)}
		for pi, ph := range members[0].Phases {
			ap := AggregatePhase{Name: ph.Name, Endpoints: map[string]map[string]Figure{}}
			for ep := range ph.Endpoints {
				vals := map[string][]float64{}
				for _, m := range members {
					if pi >= len(m.Phases) || m.Phases[pi].Endpoints[ep] == nil {
						continue
					}
					for k, v := range figures(m.Phases[pi].Endpoints[ep]) {
						vals[k] = append(vals[k], v)
					}
				}
				figs := map[string]Figure{}
				for k, xs := range vals {
					figs[k] = meanCI(xs)
				}
				ap.Endpoints[ep] = figs
			}
			ag.Phases = append(ag.Phases, ap)
		}
		out = append(out, ag)
	}
	return out
}

func groupNames(cfgs []Configuration) []string {
	var names []string
	for _, c := range cfgs {
		if !slices.Contains(names, c.Config) {
			names = append(names, c.Config)
		}
	}
	return names
}

func group(cfgs []Configuration, name string) []*Configuration {
	var out []*Configuration
	for i := range cfgs {
		if cfgs[i].Config == name {
			out = append(out, &cfgs[i])
		}
	}
	return out
}

// findRoles identifies the configurations, phases and endpoints the predictions talk about.
func findRoles(cfgs []Configuration, th Thresholds) Roles {
	var r Roles
	for _, c := range cfgs {
		switch {
		case c.Mode == "shared" && r.Shared == "":
			r.Shared = c.Config
		case c.Mode == "split" && r.Split == "":
			r.Split = c.Config
		}
	}
	if len(cfgs) == 0 {
		return r
	}
	ref := &cfgs[0]
	if r.Shared != "" {
		ref = group(cfgs, r.Shared)[0]
	}
	r.ClientTimeoutMS = ref.ClientTimeoutMS
	for _, ph := range ref.Phases {
		if len(ph.Faults) == 0 && r.Baseline == "" {
			r.Baseline = ph.Name
		}
		for _, f := range ph.Faults {
			sy := f.Symptom()
			severe := sy.Hang || (sy.Delay > 0 && ms(int64(sy.Delay)) >= th.LatencyFaultMin*ref.ClientTimeoutMS)
			if severe && r.LatencyPhase == "" {
				r.LatencyPhase, r.FaultDependency = ph.Name, f.Dependency
			}
		}
	}
	for _, ph := range ref.Phases {
		for _, f := range ph.Faults {
			fast := f.Symptom().FastError
			if fast && r.ErrorPhase == "" && (r.FaultDependency == "" || f.Dependency == r.FaultDependency) {
				r.ErrorPhase = ph.Name
				if r.FaultDependency == "" {
					r.FaultDependency = f.Dependency
				}
			}
		}
	}
	if r.FaultDependency != "" {
		for _, e := range ref.Endpoints {
			if slices.Contains(e.Calls, r.FaultDependency) {
				r.Affected = append(r.Affected, e.Path)
			} else {
				r.Unaffected = append(r.Unaffected, e.Path)
			}
		}
	}
	return r
}

// judge evaluates the predictions from aggregated figures.
type judge struct {
	cfgs  []Configuration
	aggs  map[string]*Aggregate
	roles Roles
	th    Thresholds
}

// fig returns the mean of one figure, and false when it is missing.
func (j *judge) fig(cfg, phase, ep, name string) (float64, bool) {
	ag := j.aggs[cfg]
	if ag == nil {
		return 0, false
	}
	for _, p := range ag.Phases {
		if p.Name == phase {
			f, ok := p.Endpoints[ep][name]
			return f.Mean, ok && f.N > 0
		}
	}
	return 0, false
}

// must collects figures and remembers the first one missing.
type must struct {
	j       *judge
	missing string
	nums    map[string]float64
}

func (m *must) get(label, cfg, phase, ep, name string) float64 {
	v, ok := m.j.fig(cfg, phase, ep, name)
	if !ok && m.missing == "" {
		m.missing = fmt.Sprintf("no %s for %s in %s/%s", name, ep, cfg, phase)
	}
	m.nums[label] = round3(v)
	return v
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func boolPtr(b bool) *bool { return &b }

func verdict(p *Prediction, holds *bool, evidence string) {
	p.Holds, p.Evidence = holds, evidence
	switch {
	case holds == nil:
		p.Verdict = VerdictNotMeasurable
	case *holds:
		p.Verdict = VerdictHolds
	default:
		p.Verdict = VerdictDoesNotHold
	}
}

func (j *judge) predictions() []Prediction {
	return []Prediction{j.p1(), j.p2(), j.p3(), j.p4()}
}

func needRoles(r Roles, needs ...string) string {
	var miss []string
	for _, n := range needs {
		switch {
		case n == "shared" && r.Shared == "":
			miss = append(miss, "no shared configuration")
		case n == "split" && r.Split == "":
			miss = append(miss, "no split configuration")
		case n == "latency" && r.LatencyPhase == "":
			miss = append(miss, "no phase with a latency fault near the timeout")
		case n == "error" && r.ErrorPhase == "":
			miss = append(miss, "no phase with a fast error fault (reset, down, http-error)")
		case n == "baseline" && r.Baseline == "":
			miss = append(miss, "no phase without faults")
		case n == "endpoints" && (len(r.Affected) == 0 || len(r.Unaffected) == 0):
			miss = append(miss, "no pair of affected and unaffected endpoints")
		}
	}
	return strings.Join(miss, "; ")
}

func (j *judge) p1() Prediction {
	th, r := j.th, j.roles
	p := Prediction{ID: "P1",
		Claim: "shared pool, latency fault: the unaffected endpoint's p99 and error rate rise to the affected endpoint's level within a few timeout periods",
		Rule: fmt.Sprintf("in the latency-fault phase, unaffected p99 >= affected p99 / %g and unaffected error rate >= affected error rate / %g; "+
			"the first %gs bucket from the fault start where the unaffected endpoint is degraded (p99 > %gx or error rate > +%g points over its baseline) and at half the affected level ends within %g client timeouts (rounded up to a bucket); "+
			"not measurable if the fault did not degrade the affected endpoint", th.P1Factor, th.P1Factor, j.bucketS(), th.P2P99Factor, th.P2ErrorPoints*100, th.P1MaxTimeouts),
		Numbers: map[string]float64{}}
	if miss := needRoles(r, "shared", "latency", "endpoints"); miss != "" {
		verdict(&p, nil, miss)
		return p
	}
	m := &must{j: j, nums: p.Numbers}
	a := r.Affected[0]
	ap99 := m.get("affected_p99_ms", r.Shared, r.LatencyPhase, a, "p99_ms")
	aerr := m.get("affected_error_rate", r.Shared, r.LatencyPhase, a, "error_rate")
	if r.Baseline != "" {
		bp99 := m.get("affected_baseline_p99_ms", r.Shared, r.Baseline, a, "p99_ms")
		berr := m.get("affected_baseline_error_rate", r.Shared, r.Baseline, a, "error_rate")
		if m.missing == "" && ap99 <= th.P2P99Factor*bp99 && aerr <= berr+th.P2ErrorPoints {
			verdict(&p, nil, fmt.Sprintf("the fault did not degrade %s under %s (p99 %.1f ms vs %.1f ms at baseline, error rate %s vs %s)",
				a, r.Shared, ap99, bp99, pct(aerr), pct(berr)))
			return p
		}
	}
	holds := true
	var ev []string
	limit := math.Ceil(th.P1MaxTimeouts*r.ClientTimeoutMS/1000/j.bucketS()) * j.bucketS()
	p.Numbers["time_limit_s"] = limit
	for _, u := range r.Unaffected {
		up99 := m.get(u+"_p99_ms", r.Shared, r.LatencyPhase, u, "p99_ms")
		uerr := m.get(u+"_error_rate", r.Shared, r.LatencyPhase, u, "error_rate")
		level := up99 >= ap99/th.P1Factor && uerr >= aerr/th.P1Factor
		t, ok := j.timeToLevel(u, a)
		s := fmt.Sprintf("under %s in %s, %s p99 %.1f ms and error rate %s vs %s p99 %.1f ms and error rate %s",
			r.Shared, r.LatencyPhase, u, up99, pct(uerr), a, ap99, pct(aerr))
		if ok {
			p.Numbers[u+"_time_to_level_s"] = round3(t)
			s += fmt.Sprintf("; reached %s's level within %.1f s of the fault start (limit %.1f s)", a, t, limit)
		} else {
			s += fmt.Sprintf("; never reached half of %s's level in any bucket", a)
		}
		ev = append(ev, s)
		holds = holds && level && ok && t <= limit
	}
	if m.missing != "" {
		verdict(&p, nil, m.missing)
		return p
	}
	verdict(&p, boolPtr(holds), strings.Join(ev, "; "))
	return p
}

func (j *judge) bucketS() float64 {
	for _, c := range j.cfgs {
		for _, b := range c.Timeline {
			if len(b) > 1 {
				return b[1].TS - b[0].TS
			}
		}
	}
	return DefaultBucket.Seconds()
}

// timeToLevel returns, averaged over the shared configuration's repetitions, the time from the
// latency fault's start to the end of the first bucket where endpoint u is degraded relative to
// its baseline and at half of endpoint a's level (p99 or error rate).
func (j *judge) timeToLevel(u, a string) (float64, bool) {
	r, th := j.roles, j.th
	var ts []float64
	for _, c := range group(j.cfgs, r.Shared) {
		var ph, base *Phase
		for i := range c.Phases {
			if c.Phases[i].Name == r.LatencyPhase {
				ph = &c.Phases[i]
			}
			if c.Phases[i].Name == r.Baseline {
				base = &c.Phases[i]
			}
		}
		if ph == nil {
			continue
		}
		fs := ph.faultStart.Seconds()
		ub, ab := c.Timeline[u], c.Timeline[a]
		found := false
		for i := range ub {
			if i >= len(ab) {
				break
			}
			w := j.bucketS()
			if ub[i].TS+w <= fs || ub[i].TS >= ph.EndS {
				continue
			}
			bu, ba := ub[i], ab[i]
			degraded := true
			if base != nil && base.Endpoints[u] != nil {
				bs := base.Endpoints[u]
				degraded = bu.P99MS > th.P2P99Factor*bs.P99MS || bu.ErrorRate > bs.ErrorRate+th.P2ErrorPoints
			}
			half := (ba.ErrorRate > 0 && bu.ErrorRate >= ba.ErrorRate/2) || (ba.P99MS > 0 && bu.P99MS >= ba.P99MS/2)
			if degraded && half {
				ts = append(ts, max(0, bu.TS+w-fs))
				found = true
				break
			}
		}
		if !found {
			return 0, false
		}
	}
	if len(ts) == 0 {
		return 0, false
	}
	return meanCI(ts).Mean, true
}

func (j *judge) p2() Prediction {
	th, r := j.th, j.roles
	p := Prediction{ID: "P2",
		Claim: "split pools, latency fault: the unaffected endpoint stays within its baseline while the affected endpoint's failures are fast rejections, not timeouts",
		Rule: fmt.Sprintf("unaffected p99 <= %gx its baseline p99 and error rate <= baseline + %g points; affected endpoint: rejections are more than half of its failures and their p99 <= %g x client timeout",
			th.P2P99Factor, th.P2ErrorPoints*100, th.P2RejectedP99),
		Numbers: map[string]float64{}}
	if miss := needRoles(r, "split", "latency", "baseline", "endpoints"); miss != "" {
		verdict(&p, nil, miss)
		return p
	}
	m := &must{j: j, nums: p.Numbers}
	holds := true
	var ev []string
	for _, u := range r.Unaffected {
		p99 := m.get(u+"_p99_ms", r.Split, r.LatencyPhase, u, "p99_ms")
		bp99 := m.get(u+"_baseline_p99_ms", r.Split, r.Baseline, u, "p99_ms")
		er := m.get(u+"_error_rate", r.Split, r.LatencyPhase, u, "error_rate")
		ber := m.get(u+"_baseline_error_rate", r.Split, r.Baseline, u, "error_rate")
		ok := p99 <= th.P2P99Factor*bp99 && er <= ber+th.P2ErrorPoints
		holds = holds && ok
		ev = append(ev, fmt.Sprintf("under %s, %s p99 %.1f ms (baseline %.1f ms, limit %.1f ms), error rate %s (baseline %s)",
			r.Split, u, p99, bp99, th.P2P99Factor*bp99, pct(er), pct(ber)))
	}
	a := r.Affected[0]
	fails := m.get("affected_failures", r.Split, r.LatencyPhase, a, "failures")
	rej := m.get("affected_rejected", r.Split, r.LatencyPhase, a, "rejected")
	to := m.get("affected_timeouts", r.Split, r.LatencyPhase, a, "timeouts")
	rp99 := m.get("affected_rejected_p99_ms", r.Split, r.LatencyPhase, a, "rejected_p99_ms")
	limit := th.P2RejectedP99 * r.ClientTimeoutMS
	p.Numbers["rejected_p99_limit_ms"] = limit
	fast := fails > 0 && rej/fails > 0.5 && rp99 <= limit
	holds = holds && fast
	if fails == 0 {
		ev = append(ev, fmt.Sprintf("%s had no failures (its pool never turned calls away)", a))
	} else {
		ev = append(ev, fmt.Sprintf("%s: %.0f failures, %.0f rejections (%s) and %.0f timeouts; rejected p99 %.1f ms (limit %.1f ms)",
			a, fails, rej, pct(rej/fails), to, rp99, limit))
	}
	if m.missing != "" {
		verdict(&p, nil, m.missing)
		return p
	}
	verdict(&p, boolPtr(holds), strings.Join(ev, "; "))
	return p
}

func (j *judge) p3() Prediction {
	th, r := j.th, j.roles
	p := Prediction{ID: "P3",
		Claim: "under normal conditions the affected endpoint's successful throughput is lower with split pools (the cost of isolation)",
		Rule: fmt.Sprintf("on a phase other than the latency- and error-fault ones where the affected endpoint needs more slots than its split pool has (Little's law: rate x mean success latency under the shared pool > split pool size), split's success throughput < shared's by more than %s",
			pct(th.P3MinDrop)),
		Numbers: map[string]float64{}}
	if miss := needRoles(r, "shared", "split", "endpoints"); miss != "" {
		verdict(&p, nil, miss)
		return p
	}
	a := r.Affected[0]
	sh, sp := group(j.cfgs, r.Shared)[0], group(j.cfgs, r.Split)[0]
	size := 0
	for _, pl := range sp.Pools {
		if slices.Contains(pl.Dependencies, r.FaultDependency) {
			size = pl.Size
		}
	}
	rate := 0.0
	for _, e := range sh.Endpoints {
		if e.Path == a {
			rate = e.Rate
		}
	}
	p.Numbers["split_pool_size"] = float64(size)
	p.Numbers["rate"] = rate
	best, bestDemand := "", 0.0
	for _, ph := range sh.Phases {
		if ph.Name == r.LatencyPhase || ph.Name == r.ErrorPhase || ph.Endpoints[a] == nil {
			continue
		}
		demand := rate * ph.Endpoints[a].Success.MeanMS / 1000
		if demand > bestDemand {
			best, bestDemand = ph.Name, demand
		}
	}
	p.Numbers["demand_slots"] = round3(bestDemand)
	if size == 0 || best == "" || bestDemand <= float64(size) {
		verdict(&p, nil, fmt.Sprintf("no phase where %s needs more than its split pool's %d slots (largest demand %.1f slots, in %q)",
			a, size, bestDemand, best))
		return p
	}
	m := &must{j: j, nums: p.Numbers}
	tsh := m.get("shared_throughput_rps", r.Shared, best, a, "throughput_rps")
	tsp := m.get("split_throughput_rps", r.Split, best, a, "throughput_rps")
	if m.missing != "" {
		verdict(&p, nil, m.missing)
		return p
	}
	drop := 0.0
	if tsh > 0 {
		drop = (tsh - tsp) / tsh
	}
	p.Numbers["drop"] = round3(drop)
	verdict(&p, boolPtr(drop > th.P3MinDrop), fmt.Sprintf(
		"in %s %s needs %.1f slots (rate %.0f/s x mean latency) against %d in its split pool; success throughput %.1f/s under %s vs %.1f/s under %s (%s lower)",
		best, a, bestDemand, rate, size, tsp, r.Split, tsh, r.Shared, pct(drop)))
	return p
}

func (j *judge) p4() Prediction {
	r := j.roles
	p := Prediction{ID: "P4",
		Claim:   "with the dependency returning errors immediately instead of stalling, the difference between the configurations is smaller",
		Rule:    "for the unaffected endpoint, |success rate shared - split| and the p99 ratio max/min between shared and split are both no larger in the error-fault phase than in the latency-fault phase, and at least one is smaller",
		Numbers: map[string]float64{}}
	if miss := needRoles(r, "shared", "split", "latency", "error", "endpoints"); miss != "" {
		verdict(&p, nil, miss)
		return p
	}
	m := &must{j: j, nums: p.Numbers}
	u := r.Unaffected[0]
	gap := func(phase, tag string) (float64, float64) {
		srs := m.get(tag+"_shared_success_rate", r.Shared, phase, u, "success_rate")
		srp := m.get(tag+"_split_success_rate", r.Split, phase, u, "success_rate")
		ps := m.get(tag+"_shared_p99_ms", r.Shared, phase, u, "p99_ms")
		pp := m.get(tag+"_split_p99_ms", r.Split, phase, u, "p99_ms")
		ratio := 1.0
		if min(ps, pp) > 0 {
			ratio = max(ps, pp) / min(ps, pp)
		}
		return math.Abs(srs - srp), ratio
	}
	dl, rl := gap(r.LatencyPhase, "latency")
	de, re := gap(r.ErrorPhase, "error")
	if m.missing != "" {
		verdict(&p, nil, m.missing)
		return p
	}
	p.Numbers["latency_success_gap"], p.Numbers["latency_p99_ratio"] = round3(dl), round3(rl)
	p.Numbers["error_success_gap"], p.Numbers["error_p99_ratio"] = round3(de), round3(re)
	holds := de <= dl && re <= rl && (de < dl || re < rl)
	verdict(&p, boolPtr(holds), fmt.Sprintf(
		"%s, shared vs split: success rate gap %.1f points and p99 ratio %.2fx with the latency fault (%s), %.1f points and %.2fx with the error fault (%s)",
		u, 100*dl, rl, r.LatencyPhase, 100*de, re, r.ErrorPhase))
	return p
}
