package service

import "time"

// Snapshot is the service's resource account at one instant. It is cheap to take (atomic loads)
// and is served as JSON at /debug/resources.
type Snapshot struct {
	Time time.Time `json:"time"`
	// Mono is Time on the monotonic clock of the Usage figures (Usage.At).
	Mono         time.Duration     `json:"mono_ns"`
	Pools        []PoolStats       `json:"pools"`
	Dependencies []DependencyStats `json:"dependencies"`
	// Inbound has one entry per inbound (accept-fast) endpoint, in Config order.
	Inbound []InboundStats `json:"inbound,omitempty"`
	Process ProcessStats   `json:"process"`
}

// InboundStats is one inbound endpoint's account of its items. Counters are cumulative since
// start. Every accepted item is in exactly one of: Backlog, Processed, GivenUp, Duplicates,
// PendingAtStop.
type InboundStats struct {
	Endpoint string `json:"endpoint"`
	Pool     string `json:"pool,omitempty"` // the inbound bulkhead, "" for none
	// Accepted counts the requests answered 202; Refused those answered 503 backlog-full.
	Accepted uint64 `json:"accepted"`
	Refused  uint64 `json:"refused"`
	// Backlog is the items accepted and not finished: InProgress (dispatched, waiting for or
	// holding a slot) plus Waiting (deferred, waiting for their retry). MaxBacklog is its cap.
	Backlog    int `json:"backlog"`
	InProgress int `json:"in_progress"`
	Waiting    int `json:"waiting"`
	MaxBacklog int `json:"max_backlog"`
	// BacklogUsage is the exact time account of Backlog.
	BacklogUsage Usage `json:"backlog_usage"`
	// Processed counts items whose calls succeeded.
	Processed uint64 `json:"processed"`
	// Deferred counts dispatches that found no slot (the pool rejected them); Failed those whose
	// calls failed. Both were re-dispatched later or given up.
	Deferred uint64 `json:"deferred"`
	Failed   uint64 `json:"failed"`
	// GivenUp counts items given up after their last attempt; GivenUpIDs lists the first
	// MaxGivenUpIDs of them.
	GivenUp    uint64   `json:"given_up"`
	GivenUpIDs []string `json:"given_up_ids,omitempty"`
	// Duplicates counts dispatches the dedupe set dropped (redeliveries, or deferred items whose
	// fingerprint left out the attempt counter).
	Duplicates uint64 `json:"duplicates"`
	// PendingAtStop counts items still in the backlog when the service shut down: not processed,
	// not silently lost either.
	PendingAtStop uint64 `json:"pending_at_stop"`
}

// PoolStats is one pool's account. Counters are cumulative since start.
type PoolStats struct {
	Name string   `json:"name"`
	Kind PoolKind `json:"kind"`
	// Capacity is the calls the pool admits at once now: its size, or for an adaptive pool the
	// limit of the moment (see Limit).
	Capacity      int               `json:"capacity"`
	InUse         int               `json:"in_use"`
	Waiting       int               `json:"waiting"` // waiters (semaphore) or queued tasks (workers)
	QueueCapacity int               `json:"queue_capacity"`
	Admitted      uint64            `json:"admitted"`
	Rejected      map[string]uint64 `json:"rejected"` // by reason: full, queue-full, wait-timeout
	WaitTotal     time.Duration     `json:"wait_total_ns"`
	WaitMax       time.Duration     `json:"wait_max_ns"`
	// Slots is the exact time account of the slots in use (see Usage), against the capacity of
	// each moment; Queue that of the waiting room, nil without one.
	Slots Usage  `json:"slots"`
	Queue *Usage `json:"queue,omitempty"`
	// Limit is the state of an adaptive pool's limit, nil for a pool of fixed size.
	Limit *LimitStats `json:"limit,omitempty"`
}

// LimitStats is the state of an adaptive pool's concurrency limit (Capacity is the limit now;
// Slots.CapacityNS its integral over time).
type LimitStats struct {
	// Min and Max bound the limit (Max is the pool's size).
	Min int `json:"min"`
	Max int `json:"max"`
	// Estimate is the algorithm's estimate of the limit; the limit is its integer part, within
	// [Min, Max].
	Estimate float64 `json:"estimate"`
	// Changes counts the times the limit changed; Samples the calls the algorithm learned from,
	// of which Drops were timeouts (or a dependency's own rejections); Ignored the calls it did
	// not learn from (failures that say nothing of the time a call takes).
	Changes uint64 `json:"changes"`
	Samples uint64 `json:"samples"`
	Drops   uint64 `json:"drops"`
	Ignored uint64 `json:"ignored"`
	// RTT is the last sample's round-trip time; BaseRTT the algorithm's reference (Gradient2's
	// long-term average, Vegas' no-load minimum; 0 for an algorithm that keeps none).
	RTT     time.Duration `json:"rtt_ns"`
	BaseRTT time.Duration `json:"base_rtt_ns"`
}

// DependencyStats is one dependency's account. Counters are cumulative since start.
type DependencyStats struct {
	Name         string        `json:"name"`
	InFlight     int           `json:"in_flight"`
	ConnsOpen    int           `json:"conns_open"`
	ConnsInUse   int           `json:"conns_in_use"`
	ConnWait     time.Duration `json:"conn_wait_total_ns"` // time spent waiting for a connection (httptrace)
	Calls        uint64        `json:"calls"`
	Timeouts     uint64        `json:"timeouts"`
	Errors       uint64        `json:"errors"`
	BreakerState string        `json:"breaker_state,omitempty"` // closed | open | half-open, when a breaker is on
	// BreakerRejected counts the calls an open (or half-open and busy) breaker turned away.
	BreakerRejected uint64 `json:"breaker_rejected,omitempty"`
	// Pool names the pool the dependency's calls take a slot from ("" in mode none).
	Pool string `json:"pool,omitempty"`
	// InFlightUsage and ConnsUsage are the exact time accounts of InFlight and ConnsOpen.
	InFlightUsage Usage `json:"in_flight_usage"`
	ConnsUsage    Usage `json:"conns_usage"`
}

// ProcessStats is the whole service's account.
type ProcessStats struct {
	InFlight   int `json:"in_flight"` // endpoint requests being served (debug paths not counted)
	Goroutines int `json:"goroutines"`
	// HeapBytes and StackBytes are the process's live heap objects and goroutine stacks
	// (runtime/metrics /memory/classes/heap/objects and /memory/classes/heap/stacks): process-wide,
	// so they include whatever else runs in the process.
	HeapBytes        uint64 `json:"heap_bytes"`
	StackBytes       uint64 `json:"stack_bytes"`
	InboundConns     int    `json:"inbound_conns"`
	InboundConnsCap  int    `json:"inbound_conns_cap"`  // 0 = no cap
	OutboundConns    int    `json:"outbound_conns"`     // open connections to all dependencies
	OutboundConnsCap int    `json:"outbound_conns_cap"` // 0 = no cap
	// OutboundConnsRejected counts dials refused because OutboundConnsCap connections were open
	// (calls that ended 502 conn-limit).
	OutboundConnsRejected uint64 `json:"outbound_conns_rejected"`
	// InboundConnsUsage and OutboundConnsUsage are the exact time accounts of InboundConns and
	// OutboundConns.
	InboundConnsUsage  Usage `json:"inbound_conns_usage"`
	OutboundConnsUsage Usage `json:"outbound_conns_usage"`
}
