package service

// Resources flattens the snapshot into the scarce resources the report looks at, in a stable
// order: for each pool "pool:<name>" then, when it has a queue, "queue:<name>"; for each
// dependency "conns:<dep>"; then "inbound-conns", "outbound-conns" and "goroutines".
//
//   - pool:<name>: Capacity is the pool size, InUse the slots held, Rejected the calls turned
//     away because no slot came: reasons full and wait-timeout.
//   - queue:<name>: only when QueueCapacity > 0. Capacity is the queue capacity, InUse the
//     callers waiting, Rejected the queue-full rejections.
//   - conns:<dep>: connections open to the dependency. Capacity 0: there is no per-dependency
//     cap (the outbound cap is shared); Rejected 0.
//   - inbound-conns: open inbound connections, Capacity MaxInboundConns. Rejected stays 0: over
//     the cap, connections wait in the accept backlog rather than being refused.
//   - outbound-conns: open connections to all dependencies, Capacity MaxOutboundConns,
//     Rejected the dials refused at the cap (502 conn-limit).
//   - goroutines: Capacity 0.
func (s Snapshot) Resources() []Resource {
	rs := make([]Resource, 0, 2*len(s.Pools)+len(s.Dependencies)+3)
	for _, p := range s.Pools {
		rs = append(rs, Resource{
			Name:     "pool:" + p.Name,
			Capacity: p.Capacity,
			InUse:    p.InUse,
			Rejected: p.Rejected[ReasonFull] + p.Rejected[ReasonWaitTimeout],
		})
		if p.QueueCapacity > 0 {
			rs = append(rs, Resource{
				Name:     "queue:" + p.Name,
				Capacity: p.QueueCapacity,
				InUse:    p.Waiting,
				Rejected: p.Rejected[ReasonQueueFull],
			})
		}
	}
	for _, d := range s.Dependencies {
		rs = append(rs, Resource{Name: "conns:" + d.Name, InUse: d.ConnsOpen})
	}
	pr := s.Process
	return append(rs,
		Resource{Name: "inbound-conns", Capacity: pr.InboundConnsCap, InUse: pr.InboundConns},
		Resource{Name: "outbound-conns", Capacity: pr.OutboundConnsCap, InUse: pr.OutboundConns, Rejected: pr.OutboundConnsRejected},
		Resource{Name: "goroutines", InUse: pr.Goroutines},
	)
}
