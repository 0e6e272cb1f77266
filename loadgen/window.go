package loadgen

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// The rolling window behind Progress: windowSlots slots of slotWidth each, keyed by completion
// time, so the window covers the last (windowSlots-1)·slotWidth to windowSlots·slotWidth.
const (
	windowSlots = 10
	slotWidth   = 100 * time.Millisecond
)

// Latency histograms of the window, in microseconds: 1 µs to 1 h, 2 significant digits.
const (
	windowMinUS = 1
	windowMaxUS = int64(time.Hour / time.Microsecond)
)

// window counts completions, errors and latencies over the last second. It is safe for
// concurrent use.
type window struct {
	t0 time.Time

	mu      sync.Mutex
	slots   [windowSlots]windowSlot
	scratch *hdrhistogram.Histogram
}

type windowSlot struct {
	id         int64
	done, errs uint64
	hist       *hdrhistogram.Histogram
}

func newWindow(t0 time.Time) *window {
	w := &window{t0: t0, scratch: hdrhistogram.New(windowMinUS, windowMaxUS, 2)}
	for i := range w.slots {
		w.slots[i] = windowSlot{id: -1, hist: hdrhistogram.New(windowMinUS, windowMaxUS, 2)}
	}
	return w
}

func (w *window) slotID(now time.Time) int64 { return int64(now.Sub(w.t0) / slotWidth) }

// add records one completion at now.
func (w *window) add(now time.Time, latency time.Duration, isErr bool) {
	id := w.slotID(now)
	us := min(max(int64(latency/time.Microsecond), windowMinUS), windowMaxUS)
	w.mu.Lock()
	defer w.mu.Unlock()
	s := &w.slots[((id%windowSlots)+windowSlots)%windowSlots]
	if s.id != id {
		s.id, s.done, s.errs = id, 0, 0
		s.hist.Reset()
	}
	s.done++
	if isErr {
		s.errs++
	}
	_ = s.hist.RecordValue(us)
}

// read returns the completions, errors and latency p99 of the window ending at now.
func (w *window) read(now time.Time) (done, errs uint64, p99 time.Duration) {
	id := w.slotID(now)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.scratch.Reset()
	for i := range w.slots {
		s := &w.slots[i]
		if s.id > id-windowSlots && s.id <= id {
			done += s.done
			errs += s.errs
			w.scratch.Merge(s.hist)
		}
	}
	return done, errs, time.Duration(w.scratch.ValueAtQuantile(99)) * time.Microsecond
}
