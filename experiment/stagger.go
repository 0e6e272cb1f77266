package experiment

import (
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// staggered shifts a pacer's whole schedule later by offset: hit k is due at offset +
// Pacer.Scheduled(k). The runner gives the constant-rate attacks of a scenario with many
// endpoints evenly spread offsets, so that N endpoints at 1/s send one request every 1/N s
// between them instead of N requests in the same instant every second. A burst of N
// simultaneous sends is not the open-model load the scenario describes: on this machine 500
// aligned attacks lag their schedule by 40 to 90 ms and every endpoint sees the burst's
// queueing as latency.
type staggered struct {
	loadgen.Pacer
	offset time.Duration
}

var _ loadgen.Pacer = staggered{}

// Pace waits until hit is due on the shifted schedule.
func (p staggered) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if elapsed < p.offset {
		due := p.Scheduled(hits)
		return due - elapsed, false
	}
	return p.Pacer.Pace(elapsed-p.offset, hits)
}

// Scheduled returns offset + the inner schedule.
func (p staggered) Scheduled(k uint64) time.Duration { return p.offset + p.Pacer.Scheduled(k) }

// Hits counts the hits due by elapsed on the shifted schedule.
func (p staggered) Hits(elapsed time.Duration) uint64 { return p.Pacer.Hits(elapsed - p.offset) }

// staggerFrom is the number of endpoints from which the runner staggers constant-rate attacks.
// Below it (the two-endpoint seeds) every attack starts at the time line's zero as before.
const staggerFrom = 16

// staggerOffset is attack i's offset among n constant-rate attacks at rate per second: i/n of
// one interval.
func staggerOffset(i, n int, rate float64) time.Duration {
	if n < staggerFrom || rate <= 0 {
		return 0
	}
	return time.Duration(float64(i) / float64(n) * float64(time.Second) / rate)
}

// progressMax is how many endpoints a progress line shows when a scenario has many.
const progressMax = 3
