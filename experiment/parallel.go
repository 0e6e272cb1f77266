package experiment

import (
	"fmt"

	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// parallelBudget is the total request rate (requests per second, summed over every endpoint of
// every configuration running at once) per core up to which running configurations side by side
// keeps the send lag low, per load layout, measured on a 2-core machine (docs/measurements.md).
// With the load generators in the runner's process, the hypothesis' 100 requests/s per
// configuration three at a time kept the same send-lag p99 as one at a time, and six at a time
// was invalid (36-50 ms). With each load generator in its own process, six at a time (300/s a
// core) kept every endpoint's lag p99 at 0.13-0.55 ms on a quiet machine and at most 2.3 ms
// with other work beside it.
func parallelBudget(load string) float64 {
	if load == LoadProcess {
		return 300
	}
	return 150
}

// ownWorkersFrom is the number of worker goroutines a configuration owns from which its
// process-wide figures (goroutines, heap, stacks in resources.csv) are part of what it
// measures: configurations running at once share one process, so those figures would mix.
const ownWorkersFrom = 100

// Parallel is how many of sc's plans Run runs at once on cpus cores, with the load generators
// laid out as load, when asked for requested (0: DefaultParallel), at most len(plans). A scenario that fixes its dependencies' listen
// addresses runs one plan at a time, since each proxy address exists once; asking it for more
// than one at once is an error. It does not block.
func Parallel(sc *scenarios.Scenario, plans []*Plan, requested, cpus int, load string) (int, error) {
	if fixedListen(sc) {
		if requested > 1 && len(plans) > 1 {
			return 0, fmt.Errorf("--parallel %d: the scenario fixes its dependencies' listen addresses, so its configurations can only run one after another (--parallel 1)", requested)
		}
		return 1, nil
	}
	n := requested
	if n <= 0 {
		n = DefaultParallel(plans, cpus, load)
	}
	return max(min(n, len(plans)), 1), nil
}

// DefaultParallel picks how many of plans run at once on cpus cores: as many as the cores'
// request budget (parallelBudget per core, for the load layout load) holds at the plans' peak
// total rate, at least 1 and at most len(plans), rounded down to whole repetitions (wholeRepetitions).
// A scenario whose single configuration already exceeds the budget, or whose configurations own
// ownWorkersFrom worker goroutines or more (their memory is measured), runs one configuration at a
// time.
func DefaultParallel(plans []*Plan, cpus int, load string) int {
	if len(plans) == 0 {
		return 1
	}
	var peak float64
	for _, p := range plans {
		peak = max(peak, p.PeakRate())
		if p.ownWorkers() >= ownWorkersFrom {
			return 1
		}
	}
	n := len(plans)
	if peak > 0 {
		n = min(n, int(parallelBudget(load)*float64(max(cpus, 1))/peak))
	}
	return wholeRepetitions(max(n, 1), configurations(plans))
}

// wholeRepetitions rounds n configuration runs at once down to a multiple of configs (the
// scenario's configurations), when at least configs fit: executeAll runs the plans (repetitions
// outermost) in batches of n, and a batch that holds every configuration equally often lets each
// meet the machine's moments equally. With three at once over two configurations, aa1 ran
// repetitions 1 and 2 in the first batch and aa2 repetitions 2 and 3 in the second: the two
// identical configurations of the A/A run met the two moments unequally, and 3 of 49 of their
// differences held (docs/measurements.md, 2026-12-02 20:46 UTC). Fewer than configs at once keep
// n: each batch then holds each configuration at most once, as one at a time does.
func wholeRepetitions(n, configs int) int {
	if configs <= 1 || n < configs {
		return n
	}
	return n / configs * configs
}

// configurations counts the distinct configurations plans run.
func configurations(plans []*Plan) int {
	seen := map[string]bool{}
	for _, p := range plans {
		seen[p.Configuration.Name] = true
	}
	return len(seen)
}

// ownWorkers counts the worker goroutines p's configuration starts.
func (p *Plan) ownWorkers() int {
	n := 0
	for _, pl := range p.Configuration.Pools {
		n += service.PoolGoroutines(pl.PoolConfig)
	}
	return n
}
