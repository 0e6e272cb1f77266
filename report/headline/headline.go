// Package headline computes the answer a report says first (model.Headline): for the endpoint
// the faults should not touch, in each phase with a fault, every layout's success rate and p99 of
// successes side by side, each with its 95% interval from the verdict engine (the same method as
// the claims', see package verdict), so the headline and the claims never disagree on a figure.
//
// Which endpoint: the scenario's declared unaffected endpoints (roles.unaffected); without
// roles, those that call no dependency faulted in the phase; when every endpoint calls one, all
// of them.
package headline

import (
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/verdict"
)

// Of returns s's headline: one entry per fault phase and headline endpoint, in the time line's
// order, estimated with x (an Estimator over s). Empty when the run has no fault phase or no
// configuration.
func Of(s *model.Summary, x *verdict.Estimator) []model.Headline {
	if len(s.Configurations) == 0 {
		return nil
	}
	first := &s.Configurations[0]
	var out []model.Headline
	for _, ph := range first.Phases {
		if len(ph.Faults) == 0 {
			continue
		}
		var fault []string
		for _, f := range ph.Faults {
			fault = append(fault, model.ShortFault(f))
		}
		for _, ep := range Endpoints(s, first, &ph) {
			h := model.Headline{Phase: ph.Name, Fault: strings.Join(fault, ", "), Endpoint: ep}
			for _, name := range model.GroupNames(s.Configurations) {
				h.Layouts = append(h.Layouts, layout(s, x, name, ph.Name, ep))
			}
			out = append(out, h)
		}
	}
	return out
}

// Endpoints returns the endpoints the headline shows for phase ph of c (see the package doc).
func Endpoints(s *model.Summary, c *model.Configuration, ph *model.Phase) []string {
	paths := c.EndpointPaths()
	if len(s.Roles.Unaffected) > 0 {
		var eps []string
		for _, ep := range s.Roles.Unaffected {
			if slices.Contains(paths, ep) {
				eps = append(eps, ep)
			}
		}
		return eps
	}
	faulted := map[string]bool{}
	for _, f := range ph.Faults {
		faulted[f.Dependency] = true
	}
	calls := map[string][]string{}
	for _, e := range c.Endpoints {
		calls[e.Path] = e.Calls
	}
	var eps []string
	for _, p := range paths {
		if !slices.ContainsFunc(calls[p], func(d string) bool { return faulted[d] }) {
			eps = append(eps, p)
		}
	}
	if len(eps) == 0 {
		return paths
	}
	return eps
}

// layout estimates one layout's figures of endpoint ep in phase.
func layout(s *model.Summary, x *verdict.Estimator, config, phase, ep string) model.HeadlineLayout {
	reps := s.Repetitions(config)
	l := model.HeadlineLayout{Configuration: config, Mode: reps[0].Mode}
	for _, c := range reps {
		ph := c.Phase(phase)
		if ph == nil {
			continue
		}
		if !ph.Reached {
			l.Why = "the phase was not reached"
		}
		if st := ph.Endpoints[ep]; st != nil {
			l.Requests += st.Requests
		}
	}
	if l.Why != "" {
		return l
	}
	m := claim.Measure{Metric: "success_rate", Configuration: config, Phase: phase, Endpoint: ep}
	var why []string
	var w string
	if l.SuccessRate, w = x.Estimate(m); w != "" {
		why = append(why, w)
	}
	m.Metric = "success_p99_ms"
	if l.SuccessP99MS, w = x.Estimate(m); w != "" {
		why = append(why, w)
	}
	l.Why = strings.Join(why, "; ")
	return l
}
