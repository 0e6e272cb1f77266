package service

import (
	"sync"
	"sync/atomic"
	"time"
)

// Exact resource accounting. A bounded resource (a pool's slots, its queue, a dependency's calls
// in flight and connections, an inbound backlog) keeps, from its own transitions, the integral of
// its level over time, the time it spent at capacity and its peak, so the report reads exact
// figures per sampling interval instead of point samples that alias with the load's period.
//
// The clock is the monotonic one (time.Since of a fixed instant reads only the monotonic clock).
// A clock read costs several atomic adds on this kind of machine, so the semaphore's fast path
// reads it only when the level crosses its capacity; the level x time integral of a semaphore is
// kept by Do, which times the call it runs anyway (see Semaphore).

// epoch is the zero of every accounting timestamp.
var epoch = time.Now()

// now returns the monotonic nanoseconds since epoch (one monotonic clock read).
func now() int64 { return int64(time.Since(epoch)) }

// levelBits is how many low bits of an integral's word hold the level: levels up to 2^20-1.
const levelBits = 20

const levelMask = 1<<levelBits - 1

// integral keeps a level and its integral over time in one word, so a reader never sees one
// without the other: word = S<<levelBits + level, where S = Σ δ·t over the transitions (δ = ±1 at
// time t). The integral from 0 to T is T·level(T) - S. S wraps modulo 2^(64-levelBits); a reader
// takes differences, which are exact while less than 2^43 level·ns (8,796 level·seconds, e.g. 88
// s at a level of 100) pass between two reads. The level must never go below 0.
type integral struct{ w atomic.Int64 }

// add moves the level by delta (±1) at time t and returns the new level.
func (i *integral) add(delta, t int64) int64 {
	return i.w.Add((delta*t)<<levelBits+delta) & levelMask
}

// load returns the level and F = (T·level - S) << levelBits for the time T: differences of F
// between two reads, shifted right by levelBits, are the integral between them.
func (i *integral) load(t int64) (level, f int64) {
	w := i.w.Load()
	level = w & levelMask
	return level, (t*level)<<levelBits - (w &^ levelMask)
}

// fullClock accounts the time a level spends at capacity, from the crossings alone: word =
// A<<8 + n, where A = Σ (t of each exit) - Σ (t of each entry) and n = entries - exits (0 or 1
// once every crossing has landed). The time at capacity from 0 to T is A + n·T.
type fullClock struct {
	w atomic.Int64
	// first is 1 + the time of the first entry since the last take (0: none).
	first atomic.Int64
}

// enter records that the level reached capacity at t.
func (f *fullClock) enter(t int64) {
	f.w.Add(-(t << 8) + 1)
	if f.first.Load() == 0 {
		f.first.CompareAndSwap(0, t+1)
	}
}

// exit records that the level left capacity at t.
func (f *fullClock) exit(t int64) { f.w.Add(t<<8 - 1) }

// load returns the time at capacity from 0 to t and whether the level is at capacity now. Two
// crossings that race may land out of order for an instant (n = -1 or 2); load then waits for
// them to land, a bounded number of times (a goroutine descheduled between its level's add and
// its crossing's may keep it waiting), and otherwise reads n as the nearer of 0 and 1.
func (f *fullClock) load(t int64) (atCap int64, full bool) {
	for try := 0; ; try++ {
		w := f.w.Load()
		n := w << 56 >> 56 // sign-extended low 8 bits
		a := (w - n) >> 8
		switch {
		case n == 0 || n < 0 && try >= 100:
			return a, false
		case n == 1 || n > 1 && try >= 100:
			return a + t, true
		}
		time.Sleep(time.Microsecond)
	}
}

// peak is the highest level since the last take.
type peak struct{ v atomic.Int64 }

// raise records level l. It writes only when l is a new peak, so a level that moves below its
// peak costs one load.
func (p *peak) raise(l int64) {
	for {
		m := p.v.Load()
		if l <= m || p.v.CompareAndSwap(m, l) {
			return
		}
	}
}

// Usage is a bounded resource's exact time account: cumulative figures since the resource was
// created, and the peak and first time at capacity since the previous Service.Sample.
type Usage struct {
	// At is when the figures were taken (monotonic nanoseconds since an arbitrary zero shared by
	// every resource of the process).
	At time.Duration `json:"at_ns"`
	// InUseNS is the integral of the level over time since creation, in level·nanoseconds:
	// the mean level between two reads is the difference of InUseNS over the difference of At.
	InUseNS int64 `json:"in_use_ns"`
	// CapacityNS is the integral of the capacity over time since creation, in capacity·ns, for
	// a resource whose capacity changes (an adaptive pool's limit, accounted by a Meter): the
	// mean capacity between two reads is its difference over the difference of At. 0 for a
	// resource whose capacity is fixed.
	CapacityNS int64 `json:"capacity_ns,omitempty"`
	// AtCapacity is the total time spent at capacity since creation (0 when unbounded): for a
	// capacity that changes, the time the level was at or above the capacity of that moment.
	AtCapacity time.Duration `json:"at_capacity_ns"`
	// Full is true when the resource is at capacity at At.
	Full bool `json:"full"`
	// Peak is the highest level since the previous Sample (since creation before the first).
	Peak int `json:"peak"`
	// FirstFull is when the resource first reached capacity since the previous Sample (on At's
	// clock), -1 when it did not.
	FirstFull time.Duration `json:"first_full_ns"`
}

// usageReader turns a resource's modular integral into a cumulative one. Readers are serialized
// by its mutex (the sampler and /debug/resources may read at once).
type usageReader struct {
	mu    sync.Mutex
	lastF int64
	cum   int64
	began bool
}

// read returns the Usage of a level kept in in, full and pk at time t. take resets the peak (to
// the current level) and the first time at capacity, starting a new sampling interval.
func (r *usageReader) read(t int64, in *integral, full *fullClock, pk *peak, take bool) Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	level, f := in.load(t)
	if r.began {
		r.cum += (f - r.lastF) >> levelBits
	} else {
		// The level was 0 until the first transition: the integral since creation is F itself.
		r.cum, r.began = f>>levelBits, true
	}
	r.lastF = f
	u := Usage{At: time.Duration(t), InUseNS: r.cum, FirstFull: -1}
	var atCap int64
	atCap, u.Full = full.load(t)
	u.AtCapacity = time.Duration(atCap)
	var first int64
	if take {
		first = full.first.Swap(0)
		// Subtleness ahead: swap the old peak out first, then raise the new one to the level as of
		// now, so a transition racing the take is counted in the old interval, the new one, or
		// both, never neither.
		u.Peak = int(pk.v.Swap(0))
		pk.raise(level)
	} else {
		first = full.first.Load()
		u.Peak = int(pk.v.Load())
	}
	if first != 0 {
		u.FirstFull = time.Duration(first - 1)
	}
	return u
}

// gauge is a bounded resource whose transitions are rare enough next to the work they bracket
// (an HTTP call, a queued task) to read the clock on each: a level with its integral, its time at
// capacity and its peak.
type gauge struct {
	capacity int64        // 0: unbounded, never at capacity
	clock    func() int64 // nil: now; a test's fake clock otherwise
	in       integral
	full     fullClock
	pk       peak
	rd       usageReader
}

func (g *gauge) now() int64 {
	if g.clock != nil {
		return g.clock()
	}
	return now()
}

// inc raises the level by one.
func (g *gauge) inc() { g.add(1) }

// dec lowers the level by one.
func (g *gauge) dec() { g.add(-1) }

// add moves the level by delta, which must not take it below 0.
func (g *gauge) add(delta int64) {
	t := g.now()
	l := g.in.add(delta, t)
	if delta > 0 {
		g.pk.raise(l)
	}
	g.crossed(l-delta, l, t)
}

// tryInc raises the level by one unless it is at limit or above, and reports whether it did.
func (g *gauge) tryInc(limit int64) bool {
	for {
		w := g.in.w.Load()
		l := w & levelMask
		if l >= limit {
			return false
		}
		t := g.now()
		if g.in.w.CompareAndSwap(w, w+t<<levelBits+1) {
			g.pk.raise(l + 1)
			g.crossed(l, l+1, t)
			return true
		}
	}
}

// crossed records a move of the level from before to after at t across the capacity.
func (g *gauge) crossed(before, after, t int64) {
	switch c := g.capacity; {
	case c <= 0:
	case before < c && after >= c:
		g.full.enter(t)
	case before >= c && after < c:
		g.full.exit(t)
	}
}

// level returns the current level.
func (g *gauge) level() int { return int(g.in.w.Load() & levelMask) }

// usage returns the gauge's Usage at t; take starts a new sampling interval.
func (g *gauge) usage(t int64, take bool) Usage { return g.rd.read(t, &g.in, &g.full, &g.pk, take) }
