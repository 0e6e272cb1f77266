package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

// DefaultPools returns the pool layouts seed 004 compares, for p slots in total, the given
// dependencies and the client timeout: what `pools: default` with `size: P` expands to, and what
// `bulkhead serve --pool-size` builds. Both layouts hold p slots in all, as the seed's "P slots"
// says, whatever the number of dependencies n:
//
//   - shared: ONE pool named "shared" of kind workers, Size p, QueueCapacity 2p, MaxWait timeout,
//     covering every dependency. It is shaped like a server's request worker pool, which is what
//     "one pool of size P" means in a service without bulkheads: requests do not fail fast when
//     the workers are busy, they wait in the worker queue (here up to one client timeout), so a
//     dependency answering just under the timeout holds workers and makes every endpoint queue
//     behind it. The queue is bounded (2p) so that the pool never hides load in an unbounded
//     queue.
//   - split: one semaphore per dependency, named after it, Size p/n, QueueCapacity 0, MaxWait 0:
//     the "per-dependency semaphore bulkheads" that "reject quickly once full". A stalled
//     dependency takes its own p/n permits and every further call to it is rejected at once
//     (503 full), while the other dependencies keep theirs. With two dependencies that is P/2.
//   - none: no pool.
//
// The client timeout is identical in both layouts, as the seed requires; only admission differs.
// It returns an error, saying why and what to write instead, when the split layout cannot hold
// p slots: p is not a whole multiple of n (10 among 3 would be 9 slots against shared's 10), or p
// is below 1. The result is not validated otherwise: a p beyond service.MaxPoolSize gives pools
// that service.Config.Validate refuses.
func DefaultPools(mode service.Mode, p int, deps []string, timeout time.Duration) ([]service.PoolConfig, error) {
	if p < 1 && mode != service.ModeNone {
		return nil, fmt.Errorf("the pool budget P must be at least 1, got %d", p)
	}
	switch mode {
	case service.ModeSplit:
		n := len(deps)
		if n == 0 {
			return nil, nil
		}
		if p%n != 0 {
			return nil, fmt.Errorf("%d slots do not split evenly among %d dependencies: each would get %d, %d in all against the shared layout's %d; "+
				"give a size %d divides (%s), or write the pools", p, n, p/n, p/n*n, p, n, multiples(p, n))
		}
		pools := make([]service.PoolConfig, 0, n)
		for _, d := range deps {
			pools = append(pools, service.PoolConfig{
				Name:         d,
				Kind:         service.KindSemaphore,
				Size:         p / n,
				Dependencies: []string{d},
			})
		}
		return pools, nil
	case service.ModeNone:
		return nil, nil
	default:
		return []service.PoolConfig{{
			Name:          "shared",
			Kind:          service.KindWorkers,
			Size:          p,
			QueueCapacity: 2 * p,
			MaxWait:       timeout,
			Dependencies:  slices.Clone(deps),
		}}, nil
	}
}

// multiples names the whole multiples of n nearest p, for a message ("9 or 12").
func multiples(p, n int) string {
	lo, hi := p/n*n, (p/n+1)*n
	if lo < n {
		return strconv.Itoa(hi)
	}
	return fmt.Sprintf("%d or %d", lo, hi)
}

// defaultPools is DefaultPools as the pools of a configuration.
func defaultPools(mode string, size int, deps []string, timeout time.Duration) ([]Pool, error) {
	sp, err := DefaultPools(service.Mode(mode), size, deps, timeout)
	pools := make([]Pool, len(sp))
	for i, p := range sp {
		pools[i] = Pool{PoolConfig: p}
	}
	return pools, err
}

// String writes a pool on one line, as Resolved records expansions.
func (p Pool) String() string {
	return fmt.Sprintf("%s %q size %d queue %d max_wait %v deps [%s]",
		p.Kind, p.Name, p.Size, p.QueueCapacity, p.MaxWait, strings.Join(p.Dependencies, " "))
}
