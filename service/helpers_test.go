package service

import (
	"runtime"
	"testing"
	"time"
)

// eventually polls cond, yielding the processor between polls, and fails the test if cond does
// not hold after a bounded number of polls. It waits for a state another goroutine is about to
// reach (a caller joining a queue); it never stands in for a duration.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 5_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%s: never happened", what)
}

// checkNoLeak fails the test if the goroutine count does not come back to at most base. Goroutines
// of closed connections exit asynchronously, so it polls; this is the one helper allowed to sleep.
func checkNoLeak(t *testing.T, base int) {
	t.Helper()
	n := 0
	for range 200 {
		if n = runtime.NumGoroutine(); n <= base {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<16)
	buf = buf[:runtime.Stack(buf, true)]
	t.Fatalf("goroutines: %d after shutdown, want <= %d\n%s", n, base, buf)
}

// layout returns the two pool layouts the tests compare, for p slots in total: shared is one
// workers pool of size p with a queue of 2p waiting at most timeout, split a semaphore of p/2
// (at least 1) per dependency without a queue, none no pool.
func layout(mode Mode, p int, deps []string, timeout time.Duration) []PoolConfig {
	switch mode {
	case ModeNone:
		return nil
	case ModeSplit:
		var pools []PoolConfig
		for _, d := range deps {
			pools = append(pools, PoolConfig{Name: d, Kind: KindSemaphore, Size: max(1, p/2), Dependencies: []string{d}})
		}
		return pools
	}
	return []PoolConfig{{Name: "shared", Kind: KindWorkers, Size: p, QueueCapacity: 2 * p, MaxWait: timeout, Dependencies: deps}}
}
