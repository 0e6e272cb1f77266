package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

// DefaultPools returns the pool layouts seed 004 compares, for p slots in total, the given
// dependencies and the client timeout: what `pools: default` with `size: P` expands to, and what
// `bulkhead serve --pool-size` builds.
//
//   - shared: ONE pool named "shared" of kind workers, Size p, QueueCapacity 2p, MaxWait timeout,
//     covering every dependency. It is shaped like a server's request worker pool, which is what
//     "one pool of size P" means in a service without bulkheads: requests do not fail fast when
//     the workers are busy, they wait in the worker queue (here up to one client timeout), so a
//     dependency answering just under the timeout holds workers and makes every endpoint queue
//     behind it. The queue is bounded (2p) so that the pool never hides load in an unbounded
//     queue.
//   - split: one semaphore per dependency, named after it, Size max(1, p/2), QueueCapacity 0,
//     MaxWait 0: the "per-dependency semaphore bulkheads" that "reject quickly once full". A
//     stalled dependency takes its own p/2 permits and every further call to it is rejected at
//     once (503 full), while the other dependencies keep theirs.
//   - none: no pool.
//
// The client timeout is identical in both layouts, as the seed requires; only admission differs.
// With two dependencies both layouts hold p slots in total, so the split layout's cost (lower
// peak throughput for one dependency) is visible too. The result is not validated: a p beyond
// service.MaxPoolSize gives pools that service.Config.Validate refuses.
func DefaultPools(mode service.Mode, p int, deps []string, timeout time.Duration) []service.PoolConfig {
	switch mode {
	case service.ModeSplit:
		pools := make([]service.PoolConfig, 0, len(deps))
		for _, d := range deps {
			pools = append(pools, service.PoolConfig{
				Name:         d,
				Kind:         service.KindSemaphore,
				Size:         max(1, p/2),
				Dependencies: []string{d},
			})
		}
		return pools
	case service.ModeNone:
		return nil
	default:
		return []service.PoolConfig{{
			Name:          "shared",
			Kind:          service.KindWorkers,
			Size:          max(1, p),
			QueueCapacity: 2 * max(1, p),
			MaxWait:       timeout,
			Dependencies:  slices.Clone(deps),
		}}
	}
}

// defaultPools is DefaultPools as the pools of a configuration.
func defaultPools(mode string, size int, deps []string, timeout time.Duration) []Pool {
	sp := DefaultPools(service.Mode(mode), size, deps, timeout)
	pools := make([]Pool, len(sp))
	for i, p := range sp {
		pools[i] = Pool{PoolConfig: p}
	}
	return pools
}

// String writes a pool on one line, as Resolved records expansions.
func (p Pool) String() string {
	return fmt.Sprintf("%s %q size %d queue %d max_wait %v deps [%s]",
		p.Kind, p.Name, p.Size, p.QueueCapacity, p.MaxWait, strings.Join(p.Dependencies, " "))
}
