//go:build !linux

package loadgen

import "time"

// sleepPrecise sleeps for d; outside Linux it is the runtime's timer.
func sleepPrecise(d time.Duration) { time.Sleep(d) }
