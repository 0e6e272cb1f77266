package loadgen

import "time"

// Shifted moves a pacer's whole schedule earlier by Lead, less than one interval: hit k is due
// at Pacer.Scheduled(k) - Lead. vegeta's constant pacer sends hit k at (k+1) intervals, so every
// shifted hit stays at or after zero and each attack still sends rate x duration requests. The
// runner gives the constant-rate attacks of a scenario evenly spread leads (arrival offsets), so
// that N endpoints at 1/s send one request every 1/N s between them instead of N requests in the
// same instant every second.
type Shifted struct {
	Pacer
	Lead time.Duration
}

var _ Pacer = Shifted{}

// Pace waits until hit is due on the shifted schedule.
func (p Shifted) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	return p.Pacer.Pace(elapsed+p.Lead, hits)
}

// Scheduled returns the inner schedule, Lead earlier.
func (p Shifted) Scheduled(k uint64) time.Duration { return p.Pacer.Scheduled(k) - p.Lead }

// Hits counts the hits due by elapsed on the shifted schedule.
func (p Shifted) Hits(elapsed time.Duration) uint64 { return p.Pacer.Hits(elapsed + p.Lead) }
