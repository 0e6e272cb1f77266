package loadgen

import (
	"sync"
	"time"
)

// The rolling window behind Progress: slots of slotWidth each, keyed by completion time. A read
// sums the windowSlots complete slots before the current one, so the window is exactly
// windowSlots·slotWidth (one second) long and ends at most one slot before the read: its count is
// the completions per second (50 at 50/s, where a window that took in the current slot's part
// showed 45), and it is at most 100 ms old. The ring holds one slot more than the window, for the
// slot being filled.
const (
	windowSlots = 10
	ringSlots   = windowSlots + 1
	slotWidth   = 100 * time.Millisecond
)

// window counts completions, errors and latencies over the last complete second. Each slot keeps its
// latencies exactly, in memory that grows with the completions of one slot and is reused by the
// next. The zero value of a slot is unused; newWindow allocates no sample memory. It is safe for
// concurrent use.
type window struct {
	t0 time.Time

	mu    sync.Mutex
	slots [ringSlots]windowSlot
}

type windowSlot struct {
	id         int64
	done, errs uint64
	latency    samples
}

func newWindow(t0 time.Time) *window {
	w := &window{t0: t0}
	for i := range w.slots {
		w.slots[i].id = -1
	}
	return w
}

func (w *window) slotID(now time.Time) int64 { return int64(now.Sub(w.t0) / slotWidth) }

// add records one completion at now.
func (w *window) add(now time.Time, latency time.Duration, isErr bool) {
	id := w.slotID(now)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.slots[((id%ringSlots)+ringSlots)%ringSlots]
	if s.id != id {
		s.id, s.done, s.errs = id, 0, 0
		s.latency.reset()
	}
	s.done++
	if isErr {
		s.errs++
	}
	s.latency.add(latency)
}

// read returns the completions, errors and exact latency p99 (nearest rank) of the second of
// complete slots before the one now falls in. It copies the latencies under the lock and sorts
// them after.
func (w *window) read(now time.Time) (done, errs uint64, p99 time.Duration) {
	id := w.slotID(now)
	var all samples
	w.mu.Lock()
	for i := range w.slots {
		s := &w.slots[i]
		if s.id >= id-windowSlots && s.id < id {
			done += s.done
			errs += s.errs
			all.addAll(&s.latency)
		}
	}
	w.mu.Unlock()
	return done, errs, all.quantile(0.99)
}
