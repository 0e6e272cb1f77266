package scenarios

import (
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/service"
)

// An endpoint's `inbound:` mapping is the service's InboundConfig without its pool (seed 000's
// webhooks); every zero value means what it means there. Which pool processes the endpoint is a
// matter of the configuration: the pool that lists the endpoint under `inbound:`, or in mode
// shared the one pool when none does.
//
//	endpoints:
//	  - path: /webhooks/c
//	    calls: [bookings]
//	    rate: 10/s
//	    inbound: {attempts: 50, retry_delay: 100ms, max_backlog: 5000, dedupe: true}
//	configurations:
//	  - name: capped
//	    pools:
//	      - {name: webhooks, size: 2, dependencies: [bookings], inbound: [/webhooks/c]}
//	phases:
//	  - name: burst
//	    duration: 3s
//	    rates: {/webhooks/c: 100/s}

// checkInbound validates the pools' lists of inbound endpoints and per-phase rates; the inbound
// shape itself is the service's check.
func (s *Scenario) checkInbound(p *problems) {
	inbound, paths := map[string]bool{}, map[string]bool{}
	for _, e := range s.Endpoints {
		paths[e.Path] = true
		if e.Inbound != nil {
			inbound[e.Path] = true
		}
	}
	for i, c := range s.Configurations {
		owner := map[string]string{}
		for j, pl := range c.Pools {
			for k, ep := range pl.Inbound {
				ip := index(join(index(join(index("configurations", i), "pools"), j), "inbound"), k)
				switch {
				case !inbound[ep]:
					p.add(ip, "%q is not an inbound endpoint (give the endpoint an `inbound:` mapping)", ep)
				case owner[ep] != "":
					p.add(ip, "inbound endpoint %q is already processed under pool %q", ep, owner[ep])
				default:
					owner[ep] = pl.Name
				}
			}
		}
		if service.Mode(c.Mode) == service.ModeSplit {
			for _, e := range s.Endpoints {
				if e.Inbound != nil && owner[e.Path] == "" {
					p.add(join(index("configurations", i), "pools"), "inbound endpoint %q is processed under no pool; list it under one pool's `inbound:`", e.Path)
				}
			}
		}
	}
	for i, ph := range s.Phases {
		if len(ph.Rates) > 0 && s.Load.Arrivals == ArrivalsPoisson {
			p.add(join(index("phases", i), "rates"), "per-phase rates need load.arrivals constant (got poisson)")
		}
		for ep, r := range ph.Rates {
			rp := join(index("phases", i), "rates") + "." + ep
			if !paths[ep] {
				p.add(rp, "unknown endpoint %q", ep)
			}
			if r != 0 && !(r >= MinRate && r <= loadgen.MaxRate) {
				p.add(rp, "must be 0 or a rate in [%g, %g] requests/s, got %v", MinRate, float64(loadgen.MaxRate), r)
			}
		}
	}
	for i, e := range s.Endpoints {
		if segs, ok := s.RateSegments(e); ok && !slices.ContainsFunc(segs, func(g loadgen.Segment) bool { return g.Rate > 0 }) {
			p.add(join(index("endpoints", i), "rate"), "endpoint %q sends nothing: every phase sets its rate to 0", e.Path)
		}
	}
}

// inboundConfig returns the service's inbound config of endpoint e in configuration c, or nil
// when e is not an inbound endpoint. The pool is the one listing e under `inbound:`, else in
// mode shared the one pool, else none.
func inboundConfig(c Configuration, mode string, e Endpoint) *service.InboundConfig {
	if e.Inbound == nil {
		return nil
	}
	in := *e.Inbound // the pool is the configuration's, below
	in.Pool = ""
	for _, pl := range c.Pools {
		if slices.Contains(pl.Inbound, e.Path) {
			in.Pool = pl.Name
			return &in
		}
	}
	if service.Mode(mode) == service.ModeShared && len(c.Pools) == 1 {
		in.Pool = c.Pools[0].Name
	}
	return &in
}

// RateSegments returns e's rate over the time line as segments starting at phase offsets, and
// true, when some phase overrides e's rate (Phase.Rates); otherwise nil and false: e runs at
// e.Rate throughout (or load.rate when e.Rate is 0). Adjacent phases at the same rate are one
// segment.
func (s *Scenario) RateSegments(e Endpoint) ([]loadgen.Segment, bool) {
	base := e.Rate
	if base == 0 {
		base = s.Load.Rate
	}
	overridden := false
	var segs []loadgen.Segment
	var off time.Duration
	for _, ph := range s.Phases {
		r, ok := ph.Rates[e.Path]
		if ok {
			overridden = true
		} else {
			r = base
		}
		if len(segs) == 0 || segs[len(segs)-1].Rate != r {
			segs = append(segs, loadgen.Segment{Start: off, Rate: r})
		}
		off += ph.Duration
	}
	if !overridden {
		return nil, false
	}
	return segs, true
}
