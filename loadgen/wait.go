package loadgen

import (
	"runtime"
	"time"
)

// pacing is how boundedPacer waits for a hit that is not yet due.
type pacing struct {
	name string
	// plain leaves every wait to vegeta's time.Sleep.
	plain bool
	// minWait: waits shorter than this are left to vegeta's time.Sleep.
	minWait time.Duration
	// spin is the last stretch before the hit that is waited out on the CPU instead of asleep.
	spin time.Duration
	// yield lets other goroutines run while spinning (runtime.Gosched).
	yield bool
	// timerfd sleeps on a netpolled kernel timer instead of the runtime's timer and nanosleep.
	timerfd bool
}

var pacings = map[string]pacing{
	"plain":          {name: "plain", plain: true},
	"nanosleep200":   {name: "nanosleep200", minWait: 200 * time.Microsecond},
	"nanosleep20":    {name: "nanosleep20", minWait: 20 * time.Microsecond},
	"spin50":         {name: "spin50", spin: 50 * time.Microsecond},
	"yield50":        {name: "yield50", spin: 50 * time.Microsecond, yield: true},
	"timerfd":        {name: "timerfd", timerfd: true},
	"timerfd-spin20": {name: "timerfd-spin20", timerfd: true, spin: 20 * time.Microsecond},
}

// pace is the pacing in use (figures switch it).
var pace = pacings["nanosleep200"]

// waitUntil blocks until due: asleep with the runtime until preciseWindow before it, asleep with
// the kernel's high-resolution timer until spin before it, then on the CPU.
func (p pacing) waitUntil(due time.Time, t **hrTimer) {
	left := time.Until(due)
	if p.timerfd {
		if *t == nil {
			*t, _ = newHRTimer()
		}
		if *t != nil && (*t).sleep(left-p.spin) == nil {
			left = 0
		}
	}
	if left > preciseWindow {
		time.Sleep(left - preciseWindow)
		left = time.Until(due)
	}
	if left > p.spin {
		sleepPrecise(left - p.spin)
	}
	for time.Now().Before(due) {
		if p.yield {
			runtime.Gosched()
		}
	}
}
