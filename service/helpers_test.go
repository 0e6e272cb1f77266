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
