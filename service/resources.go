package service

import "github.com/bulkheadlab/bulkhead/outcome"

// Resources flattens the snapshot into the scarce resources the report looks at, in a stable
// order: for each pool "pool:<name>" then, when it has a queue, "queue:<name>"; for each
// dependency "conns:<dep>", "calls:<dep>" and, with a breaker, "breaker:<dep>"; for each inbound
// endpoint "inbound:<path>" and "retry:<path>"; then "inbound-conns", "outbound-conns",
// "goroutines", "heap-bytes" and "stack-bytes".
//
//   - pool:<name>: Capacity is the pool size (for an adaptive pool the limit at the sample's
//     instant, with MeanCapacity its exact time-weighted mean over the interval and AtCapacity
//     the time the calls in flight were at or above the limit of each moment), InUse the slots
//     held, Rejected the calls turned away because no slot came: reasons full and wait-timeout.
//   - queue:<name>: only when QueueCapacity > 0. Capacity is the queue capacity, InUse the
//     callers waiting, Rejected the queue-full rejections.
//   - conns:<dep>: connections open to the dependency. Capacity 0: there is no per-dependency
//     cap (the outbound cap is shared); Rejected 0.
//   - calls:<dep>: the dependency's calls in flight (admitted by its pool, waiting for the
//     answer). Capacity is the size of the dependency's pool when that pool holds no other
//     dependency (the cap on this dependency alone, "B capped at two slots"), else 0:
//     in a pool shared with others no count of its own calls is a limit. Rejected 0 (the pool's
//     rejections are counted on pool:<name>).
//   - breaker:<dep>: only when the dependency has a circuit breaker. Capacity 1, InUse 1 while
//     the breaker is open and 0 while it is closed or half-open, so "saturated" means "open";
//     Rejected counts the calls the breaker turned away.
//   - inbound:<path>: an inbound endpoint's backlog (webhooks, say). Capacity is its
//     MaxBacklog, InUse the items accepted and not finished (in progress or waiting for a
//     retry), Rejected the items given up after their last attempt.
//   - retry:<path>: Capacity 0, InUse the deferred items waiting for their retry, Rejected the
//     dispatches turned away (no slot in the inbound bulkhead, or the calls failed) and deferred.
//   - inbound-conns: open inbound connections, Capacity MaxInboundConns. Rejected stays 0: over
//     the cap, connections wait in the accept backlog rather than being refused.
//   - outbound-conns: open connections to all dependencies, Capacity MaxOutboundConns,
//     Rejected the dials refused at the cap (502 conn-limit).
//   - goroutines: Capacity 0.
//   - heap-bytes, stack-bytes: the process's live heap objects and goroutine stacks in bytes
//     (ProcessStats.HeapBytes, StackBytes), Capacity 0. Process-wide: a pool layout's own cost
//     is the difference between two configurations run the same way.
//
// Resources gives point samples (Interval 0); ResourcesSince adds the exact figures of an
// interval.
func (s Snapshot) Resources() []outcome.Resource { return s.ResourcesSince(nil) }

// CallCapacities returns, by dependency name, the cap on its calls in flight: the size of its
// pool when it is that pool's only dependency and the pool's size is fixed, else 0 (none of its
// own). Resources (calls:<dep>)
// and /metrics (bulkhead_dependency_calls_in_flight_max) both read it, so a scraped calls:<dep>
// is at capacity exactly when the in-process one is.
func (s Snapshot) CallCapacities() map[string]int {
	members := map[string]int{} // pool name -> dependencies in it
	for _, d := range s.Dependencies {
		if d.Pool != "" {
			members[d.Pool]++
		}
	}
	size := map[string]int{}
	for _, p := range s.Pools {
		if p.Limit == nil {
			size[p.Name] = p.Capacity
		}
	}
	out := make(map[string]int, len(s.Dependencies))
	for _, d := range s.Dependencies {
		if d.Pool != "" && members[d.Pool] == 1 {
			out[d.Name] = size[d.Pool]
		} else {
			out[d.Name] = 0
		}
	}
	return out
}

// ResourcesSince is Resources with, for pool:, queue:, conns:, calls:, inbound:, inbound-conns
// and outbound-conns, the exact figures (outcome.Resource.Interval and after) of the interval
// from prev to s, where prev and s are consecutive Service.Sample results of the same service.
// With prev nil, or for the other resources, the rows are point samples.
func (s Snapshot) ResourcesSince(prev *Snapshot) []outcome.Resource {
	rs := make([]outcome.Resource, 0, 2*len(s.Pools)+3*len(s.Dependencies)+2*len(s.Inbound)+5)
	for i, p := range s.Pools {
		var pp *PoolStats
		if prev != nil && i < len(prev.Pools) && prev.Pools[i].Name == p.Name {
			pp = &prev.Pools[i]
		}
		r := outcome.Resource{
			Name:     "pool:" + p.Name,
			Capacity: float64(p.Capacity),
			InUse:    float64(p.InUse),
			Rejected: p.Rejected[outcome.ReasonFull] + p.Rejected[outcome.ReasonWaitTimeout],
		}
		if pp != nil {
			exact(&r, pp.Slots, p.Slots)
		}
		rs = append(rs, r)
		if p.QueueCapacity > 0 {
			r := outcome.Resource{
				Name:     "queue:" + p.Name,
				Capacity: float64(p.QueueCapacity),
				InUse:    float64(p.Waiting),
				Rejected: p.Rejected[outcome.ReasonQueueFull],
			}
			if pp != nil && pp.Queue != nil && p.Queue != nil {
				exact(&r, *pp.Queue, *p.Queue)
			}
			rs = append(rs, r)
		}
	}
	callCaps := s.CallCapacities()
	for i, d := range s.Dependencies {
		conns := outcome.Resource{Name: "conns:" + d.Name, InUse: float64(d.ConnsOpen)}
		calls := outcome.Resource{Name: "calls:" + d.Name, Capacity: float64(callCaps[d.Name]), InUse: float64(d.InFlight)}
		if prev != nil && i < len(prev.Dependencies) && prev.Dependencies[i].Name == d.Name {
			exact(&conns, prev.Dependencies[i].ConnsUsage, d.ConnsUsage)
			exact(&calls, prev.Dependencies[i].InFlightUsage, d.InFlightUsage)
		}
		rs = append(rs, conns, calls)
		if d.BreakerState != "" {
			open := 0.0
			if d.BreakerState == "open" {
				open = 1
			}
			rs = append(rs, outcome.Resource{Name: "breaker:" + d.Name, Capacity: 1, InUse: open, Rejected: d.BreakerRejected})
		}
	}
	for i, in := range s.Inbound {
		backlog := outcome.Resource{Name: "inbound:" + in.Endpoint, Capacity: float64(in.MaxBacklog), InUse: float64(in.Backlog), Rejected: in.GivenUp}
		if prev != nil && i < len(prev.Inbound) && prev.Inbound[i].Endpoint == in.Endpoint {
			exact(&backlog, prev.Inbound[i].BacklogUsage, in.BacklogUsage)
		}
		rs = append(rs, backlog,
			outcome.Resource{Name: "retry:" + in.Endpoint, InUse: float64(in.Waiting), Rejected: in.Deferred + in.Failed},
		)
	}
	pr := s.Process
	in := outcome.Resource{Name: "inbound-conns", Capacity: float64(pr.InboundConnsCap), InUse: float64(pr.InboundConns)}
	out := outcome.Resource{Name: "outbound-conns", Capacity: float64(pr.OutboundConnsCap), InUse: float64(pr.OutboundConns), Rejected: pr.OutboundConnsRejected}
	if prev != nil {
		exact(&in, prev.Process.InboundConnsUsage, pr.InboundConnsUsage)
		exact(&out, prev.Process.OutboundConnsUsage, pr.OutboundConnsUsage)
	}
	return append(rs, in, out,
		outcome.Resource{Name: "goroutines", InUse: float64(pr.Goroutines)},
		outcome.Resource{Name: "heap-bytes", InUse: float64(pr.HeapBytes)},
		outcome.Resource{Name: "stack-bytes", InUse: float64(pr.StackBytes)},
	)
}

// exact fills r's interval figures from the Usage of the same resource at the interval's start
// (prev, from the previous Sample) and end (cur). An empty interval leaves r a point sample.
func exact(r *outcome.Resource, prev, cur Usage) {
	iv := cur.At - prev.At
	if iv <= 0 {
		return
	}
	r.Interval = iv
	r.MeanInUse = float64(cur.InUseNS-prev.InUseNS) / float64(iv)
	if cur.CapacityNS != 0 {
		r.MeanCapacity = float64(cur.CapacityNS-prev.CapacityNS) / float64(iv)
	}
	r.MaxInUse = float64(cur.Peak)
	r.AtCapacity = min(max(cur.AtCapacity-prev.AtCapacity, 0), iv)
	switch {
	case prev.Full:
		r.FirstAtCapacity = 0
	case cur.FirstFull >= 0:
		r.FirstAtCapacity = min(max(cur.FirstFull-prev.At, 0), iv)
	case r.AtCapacity > 0:
		r.FirstAtCapacity = iv - r.AtCapacity // unreachable: an entry records its time
	default:
		r.FirstAtCapacity = -1
	}
}
