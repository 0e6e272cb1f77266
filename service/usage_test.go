package service

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// hold is one call holding a permit from start to end (fake-clock milliseconds).
type hold struct{ start, end int64 }

// interval is the exact figures expected of one sampling interval.
type interval struct {
	mean       float64
	max        int
	atCapacity int64 // ms
	first      int64 // ms from the interval's start, -1 for never
}

// TestSemaphoreAccountsExactTime drives a semaphore with a known schedule on a fake clock (holds
// through Do, rejected Acquires, samples) and checks every interval's figures to the nanosecond.
func TestSemaphoreAccountsExactTime(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		holds   []hold
		rejects []int64 // Acquire calls that must find the pool full
		samples []int64 // Sample instants; the intervals are between consecutive ones
		want    []interval
	}{
		{
			name:    "filled twice in one interval",
			size:    2,
			holds:   []hold{{10, 100}, {20, 50}, {60, 90}},
			rejects: []int64{25, 70},
			samples: []int64{0, 100},
			// at capacity 20-50 and 60-90; held 90+30+30 = 150 slot-ms over 100 ms
			want: []interval{{mean: 1.5, max: 2, atCapacity: 60, first: 20}},
		},
		{
			name:    "full across a sample",
			size:    1,
			holds:   []hold{{30, 160}},
			rejects: []int64{40, 150},
			samples: []int64{0, 100, 200},
			want: []interval{
				{mean: 0.7, max: 1, atCapacity: 70, first: 30},
				{mean: 0.6, max: 1, atCapacity: 60, first: 0},
			},
		},
		{
			name:    "never full",
			size:    3,
			holds:   []hold{{0, 50}, {25, 75}},
			samples: []int64{0, 100},
			want:    []interval{{mean: 1, max: 2, atCapacity: 0, first: -1}},
		},
		{
			name:    "idle interval after a full one",
			size:    1,
			holds:   []hold{{0, 90}},
			samples: []int64{0, 100, 200},
			want: []interval{
				{mean: 0.9, max: 1, atCapacity: 90, first: 0},
				{mean: 0, max: 0, atCapacity: 0, first: -1},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var clock atomic.Int64
			s := NewSemaphore(PoolConfig{Name: "p", Size: tc.size})
			s.clock = func() int64 { return clock.Load() * int64(time.Millisecond) }
			ms := func(x int64) int64 { return x * int64(time.Millisecond) }

			type event struct {
				at   int64
				kind int // 0 sample, 1 reject, 2 end, 3 start: at one instant, samples first, then ends
				i    int
			}
			var evs []event
			for i, h := range tc.holds {
				evs = append(evs, event{h.start, 3, i}, event{h.end, 2, i})
			}
			for _, r := range tc.rejects {
				evs = append(evs, event{r, 1, 0})
			}
			for _, x := range tc.samples {
				evs = append(evs, event{x, 0, 0})
			}
			sortEvents := func(a, b event) bool { return a.at < b.at || a.at == b.at && a.kind < b.kind }
			for i := range evs { // insertion sort: a handful of events
				for j := i; j > 0 && sortEvents(evs[j], evs[j-1]); j-- {
					evs[j], evs[j-1] = evs[j-1], evs[j]
				}
			}

			release := make([]chan struct{}, len(tc.holds))
			done := make([]chan error, len(tc.holds))
			var snaps []PoolStats
			for _, e := range evs {
				clock.Store(e.at)
				switch e.kind {
				case 0:
					snaps = append(snaps, s.account(ms(e.at), true))
				case 1:
					if err := s.Acquire(context.Background()); !errors.Is(err, ErrFull) {
						t.Fatalf("Acquire at %d ms = %v, want ErrFull", e.at, err)
					}
				case 3:
					started := make(chan struct{})
					release[e.i], done[e.i] = make(chan struct{}), make(chan error, 1)
					go func(i int) {
						done[i] <- s.Do(context.Background(), func(context.Context) error {
							close(started)
							<-release[i]
							return nil
						})
					}(e.i)
					select {
					case <-started:
					case err := <-done[e.i]:
						t.Fatalf("hold %d rejected: %v", e.i, err)
					}
				case 2:
					close(release[e.i])
					if err := <-done[e.i]; err != nil {
						t.Fatalf("hold %d: %v", e.i, err)
					}
				}
			}
			for i, w := range tc.want {
				var r outcome.Resource
				exact(&r, snaps[i].Slots, snaps[i+1].Slots)
				first := time.Duration(-1)
				if w.first >= 0 {
					first = time.Duration(ms(w.first))
				}
				want := outcome.Resource{Interval: time.Duration(ms(tc.samples[i+1] - tc.samples[i])), MeanInUse: w.mean,
					MaxInUse: float64(w.max), AtCapacity: time.Duration(ms(w.atCapacity)), FirstAtCapacity: first}
				if r != want {
					t.Errorf("interval %d: got %+v, want %+v", i, r, want)
				}
			}
		})
	}
}

// TestGaugeAccountsExactTime checks the gauge every other resource uses (calls in flight,
// connections, queues, backlogs), including moves of several at once and a refused tryInc.
func TestGaugeAccountsExactTime(t *testing.T) {
	var clock int64
	g := gauge{capacity: 3, clock: func() int64 { return clock }}
	at := func(x int64, f func()) { clock = x; f() }
	u0 := g.usage(0, true)
	at(10, g.inc)
	at(20, func() { g.add(2) }) // 3: full from 20
	at(30, func() {
		if g.tryInc(3) {
			t.Error("tryInc at capacity = true, want false")
		}
	})
	at(40, func() { g.add(-3) }) // 0: not full from 40
	at(60, func() {
		for range 3 {
			if !g.tryInc(3) {
				t.Error("tryInc below capacity = false")
			}
		}
	}) // full again from 60
	u1 := g.usage(100, true)
	var r outcome.Resource
	exact(&r, u0, u1)
	// level: 1 over 10-20, 3 over 20-40, 3 over 60-100 = 10+60+120 = 190
	want := outcome.Resource{Interval: 100, MeanInUse: 1.9, MaxInUse: 3, AtCapacity: 60, FirstAtCapacity: 20}
	if r != want {
		t.Errorf("got %+v, want %+v", r, want)
	}
	if u1.Peak != 3 || !u1.Full {
		t.Errorf("usage %+v: want peak 3, full", u1)
	}
}

// TestSemaphoreAccountingUnderContention hammers a small pool from many goroutines on the real
// clock: whatever the interleaving, the figures stay within their bounds and the level returns
// to 0 with the time at capacity no longer growing.
func TestSemaphoreAccountingUnderContention(t *testing.T) {
	const size = 3
	s := NewSemaphore(PoolConfig{Name: "p", Size: size})
	first := s.account(s.now(), true)
	var wg sync.WaitGroup
	var admitted atomic.Int64
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 2000 {
				if s.Do(context.Background(), func(context.Context) error { return nil }) == nil {
					admitted.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	last := s.account(s.now(), true)
	var r outcome.Resource
	exact(&r, first.Slots, last.Slots)
	if r.AtCapacity < 0 || r.AtCapacity > r.Interval || r.MeanInUse < 0 || r.MeanInUse > size || r.MaxInUse > size {
		t.Errorf("figures out of bounds: %+v", r)
	}
	if got := int64(last.Admitted); got != admitted.Load() {
		t.Errorf("admitted %d, want %d", got, admitted.Load())
	}
	if last.InUse != 0 || last.Slots.Full {
		t.Errorf("after the hammer: in use %d, full %v; want 0, false", last.InUse, last.Slots.Full)
	}
	again := s.account(s.now()+int64(time.Second), false)
	if again.Slots.AtCapacity != last.Slots.AtCapacity || again.Slots.InUseNS != last.Slots.InUseNS {
		t.Errorf("an idle pool's integrals grew: %+v then %+v", last.Slots, again.Slots)
	}
}

// TestSemaphoreWaitingRoomAccountsExactTime: a caller that waits for a permit is accounted in the
// queue, and the permit handed over to it keeps the pool at capacity.
func TestSemaphoreWaitingRoomAccountsExactTime(t *testing.T) {
	var clock atomic.Int64
	ms := func(x int64) int64 { return x * int64(time.Millisecond) }
	s := NewSemaphore(PoolConfig{Name: "p", Size: 1, QueueCapacity: 1, MaxWait: time.Hour})
	s.clock = func() int64 { return ms(clock.Load()) }
	s.queue.clock = s.clock
	first := s.account(0, true)

	type call struct{ started, release, done chan struct{} }
	do := func() *call {
		c := &call{make(chan struct{}), make(chan struct{}), make(chan struct{})}
		go func() {
			defer close(c.done)
			if err := s.Do(context.Background(), func(context.Context) error {
				close(c.started)
				<-c.release
				return nil
			}); err != nil {
				t.Error(err)
			}
		}()
		return c
	}
	clock.Store(10)
	a := do()
	<-a.started
	clock.Store(20)
	b := do()
	eventually(t, "B waits in the queue", func() bool { return s.queue.level() == 1 })
	clock.Store(50)
	close(a.release) // hands the permit over to B
	<-a.done
	<-b.started
	clock.Store(80)
	close(b.release)
	<-b.done
	last := s.account(ms(100), true)

	var slots, queue outcome.Resource
	exact(&slots, first.Slots, last.Slots)
	exact(&queue, *first.Queue, *last.Queue)
	if want := (outcome.Resource{Interval: 100 * time.Millisecond, MeanInUse: 0.7, MaxInUse: 1,
		AtCapacity: 70 * time.Millisecond, FirstAtCapacity: 10 * time.Millisecond}); slots != want {
		t.Errorf("slots: got %+v, want %+v", slots, want)
	}
	if want := (outcome.Resource{Interval: 100 * time.Millisecond, MeanInUse: 0.3, MaxInUse: 1,
		AtCapacity: 30 * time.Millisecond, FirstAtCapacity: 20 * time.Millisecond}); queue != want {
		t.Errorf("queue: got %+v, want %+v", queue, want)
	}
}
