package service

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// manualClock is a clock a test moves by hand.
type manualClock struct {
	mu sync.Mutex
	t  time.Duration
}

func (c *manualClock) now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) set(t time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t += d
}

// A capacity that moves is accounted against the capacity of each moment: the time at capacity
// includes a spell where the capacity fell under the level, and the capacity's integral gives
// its mean. Times in ns of a fake clock.
func TestMeterAccountsAMovingCapacity(t *testing.T) {
	clk := &manualClock{}
	m := NewMeter(2, clk.now)
	step := func(at time.Duration, f func()) { clk.set(at); f() }
	step(10, func() { mustTry(t, m, true) })  // level 1
	step(20, func() { mustTry(t, m, true) })  // level 2 = capacity: full from 20
	step(30, func() { mustTry(t, m, false) }) // full: refused, nothing changes
	step(40, func() { m.SetCapacity(3) })     // room again: full 20-40
	step(50, func() { m.SetCapacity(1) })     // capacity under the level: full from 50
	step(60, func() { m.Add(-1) })            // level 1 = capacity: still full
	step(70, func() { m.Add(-1) })            // level 0: full 50-70
	u := m.Usage(100, true)
	want := Usage{At: 100,
		InUseNS:    1*10 + 2*40 + 1*10, // level 1 over 10-20, 2 over 20-60, 1 over 60-70
		CapacityNS: 2*40 + 3*10 + 1*50, // capacity 2 over 0-40, 3 over 40-50, 1 over 50-100
		AtCapacity: 20 + 20, Full: false, Peak: 2, FirstFull: 20}
	if u != want {
		t.Errorf("Usage(100) = %+v\nwant          %+v", u, want)
	}
	// The take restarted the peak at the level (0) and forgot the first time at capacity.
	if u := m.Usage(110, false); u.Peak != 0 || u.FirstFull != -1 || u.InUseNS != want.InUseNS || u.CapacityNS != want.CapacityNS+10 {
		t.Errorf("Usage(110) after a take = %+v, want peak 0, first -1, the integrals carried on", u)
	}
	// A reading older than the last transition counts as that transition's time.
	clk.set(200)
	m.Add(1)
	if u := m.Usage(150, false); u.At != 200 {
		t.Errorf("Usage(150) after a transition at 200: At = %v, want 200", u.At)
	}
}

func mustTry(t *testing.T, m *Meter, want bool) {
	t.Helper()
	if _, ok := m.TryAdd(); ok != want {
		t.Fatalf("TryAdd = %v, want %v", ok, want)
	}
}

// Against a brute-force integration, nanosecond by nanosecond, of a random schedule of
// transitions (seeded: the same schedule every run), the meter's figures are exact.
func TestMeterMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for run := range 50 {
		clk := &manualClock{}
		capacity := 1 + rng.IntN(4)
		m := NewMeter(capacity, clk.now)
		level, at := 0, time.Duration(0)
		var inUse, capNS, atCap int64
		peak, first := 0, time.Duration(-1)
		// integrate accounts [at, to) one nanosecond at a time with the state of that moment.
		integrate := func(to time.Duration) {
			for ; at < to; at++ {
				inUse += int64(level)
				capNS += int64(capacity)
				if level >= capacity {
					atCap++
				}
			}
		}
		for range 200 {
			to := at + time.Duration(rng.IntN(20))
			integrate(to)
			clk.set(to)
			wasFull := level >= capacity
			switch rng.IntN(3) {
			case 0:
				if _, ok := m.TryAdd(); ok != (level < capacity) {
					t.Fatalf("run %d at %v: TryAdd = %v with level %d of %d", run, to, ok, level, capacity)
				} else if ok {
					level++
				}
			case 1:
				if level > 0 {
					m.Add(-1)
					level--
				}
			case 2:
				capacity = 1 + rng.IntN(4)
				m.SetCapacity(capacity)
			}
			peak = max(peak, level)
			if !wasFull && level >= capacity && first < 0 {
				first = to
			}
		}
		end := at + 5
		integrate(end)
		got := m.Usage(end, false)
		want := Usage{At: end, InUseNS: inUse, CapacityNS: capNS, AtCapacity: time.Duration(atCap),
			Full: level >= capacity, Peak: peak, FirstFull: first}
		if got != want {
			t.Fatalf("run %d: Usage = %+v\nbrute force  %+v", run, got, want)
		}
	}
}

func TestMeterRefusesALevelBelowZero(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Add(-1) at level 0 did not panic")
		}
	}()
	NewMeter(1, nil).Add(-1)
}
