package service

import (
	"sync"
	"time"
)

// Now returns the accounting clock: the monotonic time since an instant shared by every resource
// of the process, on which Usage.At and Snapshot.Mono are read. A pool kind outside this package
// reads its accounts at the times its Account method is given, which are readings of Now.
func Now() time.Duration { return time.Duration(now()) }

// Meter is the exact time account of one bounded level whose capacity may change over time: an
// adaptive pool's calls in flight against its limit. It keeps the integral of the level and of
// the capacity over time, the time at capacity (the level at or above the capacity of that
// moment), and per sampling interval the peak and the first time at capacity, all from its own
// transitions, so a limit that moves between two samples is accounted exactly.
//
// Each transition takes the meter's mutex and reads its clock once: nothing next to the call it
// brackets. (The lock-free accounts of the semaphore and of the workers' gauges are for levels
// whose capacity is fixed, where the clock need only be read when the level crosses it.)
//
// A Meter must be created with NewMeter; it is safe for concurrent use.
type Meter struct {
	clock func() time.Duration

	mu       sync.Mutex
	level    int
	capacity int
	last     time.Duration // time of the last transition or reading
	inUse    int64         // Σ level·dt since creation, level·ns
	capNS    int64         // Σ capacity·dt since creation, capacity·ns
	atCap    time.Duration // time at capacity since creation
	peak     int           // highest level since the last take
	first    time.Duration // first time at capacity since the last take, -1: none
}

// NewMeter returns a meter at level 0 with the given capacity (0: unbounded, never at capacity),
// reading the clock clock (nil: Now). Its integrals start at the clock's reading now.
func NewMeter(capacity int, clock func() time.Duration) *Meter {
	if clock == nil {
		clock = Now
	}
	return &Meter{clock: clock, capacity: capacity, last: clock(), first: -1}
}

// advance accounts the time from the last transition to t at the current level and capacity.
// m.mu must be held. A t before the last transition (a reading taken just before another
// goroutine's transition) counts as the last transition's time.
func (m *Meter) advance(t time.Duration) time.Duration {
	if t < m.last {
		t = m.last
	}
	dt := t - m.last
	m.inUse += int64(m.level) * int64(dt)
	m.capNS += int64(m.capacity) * int64(dt)
	if m.full() {
		m.atCap += dt
	}
	m.last = t
	return t
}

func (m *Meter) full() bool { return m.capacity > 0 && m.level >= m.capacity }

// changed records what a transition at t did to the peak and to the first time at capacity.
// m.mu must be held.
func (m *Meter) changed(wasFull bool, t time.Duration) {
	m.peak = max(m.peak, m.level)
	if !wasFull && m.full() && m.first < 0 {
		m.first = t
	}
}

// TryAdd raises the level by one unless it is at or above the capacity, and returns the new
// level and true, or the level and false, leaving the meter unchanged.
func (m *Meter) TryAdd() (int, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.full() {
		return m.level, false
	}
	t := m.advance(m.clock())
	m.level++
	m.changed(false, t)
	return m.level, true
}

// Add moves the level by delta and returns the new level. It panics (misuse) if the level would
// go below 0.
func (m *Meter) Add(delta int) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.level+delta < 0 {
		panic("service: meter level below 0")
	}
	wasFull := m.full()
	t := m.advance(m.clock())
	m.level += delta
	m.changed(wasFull, t)
	return m.level
}

// SetCapacity changes the capacity to c (0: unbounded) from now on. A capacity lowered under the
// level leaves the level where it is, at capacity until it falls below the new one.
func (m *Meter) SetCapacity(c int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c == m.capacity {
		return
	}
	wasFull := m.full()
	t := m.advance(m.clock())
	m.capacity = c
	m.changed(wasFull, t)
}

// Level returns the level now.
func (m *Meter) Level() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.level
}

// Capacity returns the capacity now.
func (m *Meter) Capacity() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.capacity
}

// Usage returns the account at at (a reading of the meter's clock; a reading older than the
// last transition counts as that transition's time, and At says which), with CapacityNS set.
// take starts a new sampling interval: the peak restarts at the current level and the first time
// at capacity is forgotten.
func (m *Meter) Usage(at time.Duration, take bool) Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.advance(at)
	u := Usage{At: t, InUseNS: m.inUse, CapacityNS: m.capNS, AtCapacity: m.atCap, Full: m.full(),
		Peak: m.peak, FirstFull: m.first}
	if take {
		m.peak, m.first = m.level, -1
	}
	return u
}
