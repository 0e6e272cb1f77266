package experiment

import (
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// staggered moves a pacer's whole schedule earlier by lead, less than one interval: hit k is due
// at Pacer.Scheduled(k) - lead. vegeta's constant pacer sends hit k at (k+1) intervals, so every
// shifted hit stays at or after zero and each attack still sends rate x duration requests. The
// runner gives the constant-rate attacks of a scenario evenly spread leads, so that N endpoints
// at 1/s send one request every 1/N s between them instead of N requests in the same instant
// every second. A burst of N simultaneous sends is not the open-model load the scenario
// describes: on this machine 500 aligned attacks lag their schedule by 40 to 90 ms and every
// endpoint sees the burst's queueing as latency.
type staggered struct {
	loadgen.Pacer
	lead time.Duration
}

var _ loadgen.Pacer = staggered{}

// Pace waits until hit is due on the shifted schedule.
func (p staggered) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return p.Pacer.Pace(elapsed+p.lead, hits)
}

// Scheduled returns the inner schedule, lead earlier.
func (p staggered) Scheduled(k uint64) time.Duration { return p.Pacer.Scheduled(k) - p.lead }

// Hits counts the hits due by elapsed on the shifted schedule.
func (p staggered) Hits(elapsed time.Duration) uint64 { return p.Pacer.Hits(elapsed + p.lead) }

// staggerFrom is the number of endpoints from which the runner staggers constant-rate attacks.
// Even two aligned attacks (the hypothesis' /a and /b at 50/s each) put two sends in the same
// instant 50 times a second, which on a 2-core machine is what pushes the send-lag p99 past
// 1 ms; half an interval apart they do not contend.
const staggerFrom = 2

// staggerOffset is attack i's lead among n constant-rate attacks at rate per second: i/n of
// one interval.
func staggerOffset(i, n int, rate float64) time.Duration {
	if n < staggerFrom || rate <= 0 {
		return 0
	}
	return time.Duration(float64(i) / float64(n) * float64(time.Second) / rate)
}

// progressAll is the most endpoints a progress line shows in full; with more it shows
// progressMax and a count of the rest.
const (
	progressAll = 6
	progressMax = 3
)
