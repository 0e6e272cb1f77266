package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

func TestSemaphoreTryAcquire(t *testing.T) {
	// Each row is a sequence of operations on a fresh semaphore: +1 TryAcquire, -1 Release.
	tests := []struct {
		name string
		size int
		ops  []int
		want []bool // TryAcquire results, in order
	}{
		{"size 1 admits one", 1, []int{+1, +1}, []bool{true, false}},
		{"size 2 admits two", 2, []int{+1, +1, +1}, []bool{true, true, false}},
		{"release frees a permit", 1, []int{+1, +1, -1, +1}, []bool{true, false, true}},
		{"size 3 after releases", 3, []int{+1, +1, +1, -1, -1, +1, +1, +1}, []bool{true, true, true, true, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSemaphore(PoolConfig{Name: "p", Size: tt.size})
			var got []bool
			for _, op := range tt.ops {
				if op > 0 {
					got = append(got, s.TryAcquire())
				} else {
					s.Release()
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("TryAcquire results = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSemaphoreRejections(t *testing.T) {
	tests := []struct {
		name     string
		cfg      PoolConfig
		waiters  int // callers made to wait before the call under test
		want     error
		reason   string
		rejected map[string]uint64
	}{
		{
			name: "no waiting room rejects at once",
			cfg:  PoolConfig{Name: "A", Size: 1},
			want: ErrFull, reason: outcome.ReasonFull,
			rejected: map[string]uint64{outcome.ReasonFull: 1, outcome.ReasonQueueFull: 0, outcome.ReasonWaitTimeout: 0},
		},
		{
			name: "queue capacity without max wait still rejects at once",
			cfg:  PoolConfig{Name: "A", Size: 1, QueueCapacity: 5},
			want: ErrFull, reason: outcome.ReasonFull,
			rejected: map[string]uint64{outcome.ReasonFull: 1, outcome.ReasonQueueFull: 0, outcome.ReasonWaitTimeout: 0},
		},
		{
			name:    "waiting room at capacity",
			cfg:     PoolConfig{Name: "A", Size: 1, QueueCapacity: 2, MaxWait: time.Hour},
			waiters: 2,
			want:    ErrQueueFull, reason: outcome.ReasonQueueFull,
			rejected: map[string]uint64{outcome.ReasonFull: 0, outcome.ReasonQueueFull: 1, outcome.ReasonWaitTimeout: 0},
		},
		{
			name: "waited max wait",
			cfg:  PoolConfig{Name: "A", Size: 1, QueueCapacity: 1, MaxWait: time.Millisecond},
			want: ErrWaitTimeout, reason: outcome.ReasonWaitTimeout,
			rejected: map[string]uint64{outcome.ReasonFull: 0, outcome.ReasonQueueFull: 0, outcome.ReasonWaitTimeout: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewSemaphore(tt.cfg)
			if !s.TryAcquire() {
				t.Fatal("TryAcquire on an idle semaphore = false")
			}
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range tt.waiters {
				wg.Go(func() {
					if err := s.Acquire(ctx); !errors.Is(err, context.Canceled) {
						t.Errorf("waiter: Acquire = %v, want context.Canceled", err)
					}
				})
			}
			eventually(t, "waiters queued", func() bool { return s.Stats().Waiting == tt.waiters })

			err := s.Acquire(context.Background())
			var rej *RejectedError
			if !errors.Is(err, tt.want) || !errors.As(err, &rej) || rej.Pool != "A" || rej.Reason != tt.reason {
				t.Fatalf("Acquire = %v, want *RejectedError{A, %s} wrapping %v", err, tt.reason, tt.want)
			}
			cancel()
			wg.Wait()
			st := s.Stats()
			if fmt.Sprint(st.Rejected) != fmt.Sprint(tt.rejected) {
				t.Errorf("Rejected = %v, want %v", st.Rejected, tt.rejected)
			}
			if st.InUse != 1 || st.Waiting != 0 {
				t.Errorf("after failures InUse, Waiting = %d, %d, want 1, 0 (unchanged)", st.InUse, st.Waiting)
			}
		})
	}
}

func TestSemaphoreHandsPermitsToWaitersInOrder(t *testing.T) {
	s := NewSemaphore(PoolConfig{Name: "A", Size: 1, QueueCapacity: 3, MaxWait: time.Hour})
	s.TryAcquire()
	order := make(chan int, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			if err := s.Acquire(context.Background()); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			order <- i
			s.Release()
		})
		eventually(t, "waiter queued", func() bool { return s.Stats().Waiting == i+1 })
	}
	if s.TryAcquire() {
		t.Fatal("TryAcquire jumped the queue of waiters")
	}
	s.Release()
	wg.Wait()
	close(order)
	var got []int
	for i := range order {
		got = append(got, i)
	}
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("waiters served in order %v, want [0 1 2]", got)
	}
	if st := s.Stats(); st.InUse != 0 || st.Admitted != 3 {
		t.Errorf("InUse, Admitted = %d, %d, want 0, 3", st.InUse, st.Admitted)
	}
}

func TestSemaphoreReleaseMoreThanHeldPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Release on an idle semaphore did not panic")
		}
	}()
	NewSemaphore(PoolConfig{Name: "A", Size: 1}).Release()
}

func TestSemaphoreDoAfterClose(t *testing.T) {
	s := NewSemaphore(PoolConfig{Name: "A", Size: 1})
	s.Close()
	ran := false
	if err := s.Do(context.Background(), func(context.Context) error { ran = true; return nil }); !errors.Is(err, ErrClosed) || ran {
		t.Errorf("Do after Close = %v (ran %v), want ErrClosed without running", err, ran)
	}
}

// hammer runs 8 goroutines x 500 calls through s, each call counting itself as a holder while it
// runs (yielding when yield is set, so others race for the permits). Calls may only fail with
// allowed. It returns the most holders seen at once and the admitted and rejected counts.
func hammer(t *testing.T, s *Semaphore, yield bool, allowed error) (maxHolders, admitted, rejected int) {
	t.Helper()
	var holders int
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 500 {
				err := s.Do(context.Background(), func(context.Context) error {
					mu.Lock()
					holders++
					maxHolders = max(maxHolders, holders)
					admitted++
					mu.Unlock()
					if yield {
						runtime.Gosched() // let other callers race for the permits while this one holds
					}
					mu.Lock()
					holders--
					mu.Unlock()
					return nil
				})
				if err != nil {
					if !errors.Is(err, allowed) {
						t.Errorf("Do = %v", err)
					}
					mu.Lock()
					rejected++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	return maxHolders, admitted, rejected
}

// TestSemaphoreNoRoomNeverOverAdmits races the one-add fast path of a semaphore without waiting
// room: holders never exceed the size, every call is either admitted or rejected full, and every
// permit comes back.
func TestSemaphoreNoRoomNeverOverAdmits(t *testing.T) {
	s := NewSemaphore(PoolConfig{Name: "A", Size: 2})
	maxHolders, admitted, rejected := hammer(t, s, true, ErrFull)
	st := s.Stats()
	if maxHolders > 2 || st.InUse != 0 || admitted+rejected != 4000 ||
		st.Admitted != uint64(admitted) || st.Rejected[outcome.ReasonFull] != uint64(rejected) {
		t.Errorf("max holders %d (want <= 2), InUse %d, admitted %d/%d, rejected %d/%d",
			maxHolders, st.InUse, st.Admitted, admitted, st.Rejected[outcome.ReasonFull], rejected)
	}
}

// TestSemaphoreConcurrent hammers the fast and slow paths together; run with -race. The count of
// holders never exceeds the size, and every permit comes back.
func TestSemaphoreConcurrent(t *testing.T) {
	s := NewSemaphore(PoolConfig{Name: "A", Size: 3, QueueCapacity: 4, MaxWait: time.Hour})
	maxHolders, admitted, rejected := hammer(t, s, false, ErrQueueFull)
	st := s.Stats()
	if maxHolders > 3 || st.InUse != 0 || st.Waiting != 0 {
		t.Errorf("max holders %d (want <= 3), InUse %d, Waiting %d (want 0, 0)", maxHolders, st.InUse, st.Waiting)
	}
	if st.Admitted != uint64(admitted) || st.Rejected[outcome.ReasonQueueFull] != uint64(rejected) || admitted+rejected != 4000 {
		t.Errorf("Admitted %d, queue-full %d; counted %d and %d of 4000", st.Admitted, st.Rejected[outcome.ReasonQueueFull], admitted, rejected)
	}
}

func ExampleSemaphore() {
	// A bulkhead of two permits that rejects at once when both are taken.
	s := NewSemaphore(PoolConfig{Name: "inventory", Size: 2})
	fmt.Println(s.TryAcquire(), s.TryAcquire(), s.TryAcquire())

	err := s.Do(context.Background(), func(context.Context) error { return nil })
	fmt.Println(errors.Is(err, ErrFull), err)

	s.Release()
	err = s.Do(context.Background(), func(context.Context) error { return nil })
	fmt.Println(err)
	// Output:
	// true true false
	// true pool inventory rejected the call (full): bulkhead full
	// <nil>
}
