package service

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// blockers fills every worker of p with a task that blocks until release is closed, and returns
// the channel their Do results arrive on. It first waits for every worker to be idle: a task
// handed to a worker goroutine that has not started yet waits in the queue, and with a short
// MaxWait on a loaded machine it would time out there instead of blocking (the pool doing its
// job, not what the test sets up). A blocking task that is not run fails the test, never hangs it.
func blockers(t *testing.T, p *Workers, n int, release <-chan struct{}) <-chan error {
	t.Helper()
	eventually(t, "every worker idle", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.idle) == p.size
	})
	started := make(chan struct{}, n)
	out := make(chan error, n)
	for range n {
		go func() {
			out <- p.Do(context.Background(), func(context.Context) error {
				started <- struct{}{}
				<-release
				return nil
			})
		}()
		select {
		case <-started:
		case err := <-out:
			t.Fatalf("blocking task not run: Do = %v", err)
		}
	}
	return out
}

func TestWorkersRejections(t *testing.T) {
	tests := []struct {
		name   string
		cfg    PoolConfig
		queued int // tasks queued behind the busy workers before the call under test
		want   error
		reason string
	}{
		{"no queue, all workers busy", PoolConfig{Name: "W", Size: 2}, 0, ErrFull, outcome.ReasonFull},
		{"queue at capacity", PoolConfig{Name: "W", Size: 2, QueueCapacity: 3}, 3, ErrQueueFull, outcome.ReasonQueueFull},
		// MaxWait also bounds a worker's start on a handed task, so it is not made tiny.
		{"queued longer than max wait", PoolConfig{Name: "W", Size: 1, QueueCapacity: 1, MaxWait: 20 * time.Millisecond}, 0, ErrWaitTimeout, outcome.ReasonWaitTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewWorkers(tt.cfg)
			defer p.Close()
			release := make(chan struct{})
			busy := blockers(t, p, tt.cfg.Size, release)

			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range tt.queued {
				wg.Go(func() {
					p.Do(ctx, func(context.Context) error { return nil })
				})
			}
			eventually(t, "tasks queued", func() bool { return p.Stats().Waiting == tt.queued })

			ran := false
			err := p.Do(context.Background(), func(context.Context) error { ran = true; return nil })
			var rej *RejectedError
			if !errors.Is(err, tt.want) || !errors.As(err, &rej) || rej.Pool != "W" || rej.Reason != tt.reason || ran {
				t.Errorf("Do = %v (ran %v), want *RejectedError{W, %s} wrapping %v, not run", err, ran, tt.reason, tt.want)
			}
			if got := p.Stats().Rejected[tt.reason]; got != 1 {
				t.Errorf("Rejected[%s] = %d, want 1", tt.reason, got)
			}
			cancel()
			close(release)
			wg.Wait()
			for range tt.cfg.Size {
				if err := <-busy; err != nil {
					t.Errorf("blocking task: %v", err)
				}
			}
		})
	}
}

func TestWorkersRunInQueueOrder(t *testing.T) {
	p := NewWorkers(PoolConfig{Name: "W", Size: 1, QueueCapacity: 3})
	defer p.Close()
	release := make(chan struct{})
	busy := blockers(t, p, 1, release)
	order := make(chan int, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			p.Do(context.Background(), func(context.Context) error { order <- i; return nil })
		})
		eventually(t, "task queued", func() bool { return p.Stats().Waiting == i+1 })
	}
	close(release)
	<-busy
	wg.Wait()
	close(order)
	var got []int
	for i := range order {
		got = append(got, i)
	}
	if fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("tasks ran in order %v, want [0 1 2]", got)
	}
	if st := p.Stats(); st.Admitted != 4 || st.InUse != 0 || st.Waiting != 0 {
		t.Errorf("Admitted, InUse, Waiting = %d, %d, %d, want 4, 0, 0", st.Admitted, st.InUse, st.Waiting)
	}
}

func TestWorkersCancelledWhileQueuedDoesNotRun(t *testing.T) {
	p := NewWorkers(PoolConfig{Name: "W", Size: 1, QueueCapacity: 1})
	defer p.Close()
	release := make(chan struct{})
	busy := blockers(t, p, 1, release)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{}, 1)
	errc := make(chan error, 1)
	go func() { errc <- p.Do(ctx, func(context.Context) error { ran <- struct{}{}; return nil }) }()
	eventually(t, "task queued", func() bool { return p.Stats().Waiting == 1 })
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Do = %v, want context.Canceled", err)
	}
	close(release)
	<-busy
	// A later task runs after the abandoned one was discarded, so by then it was seen and skipped.
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatalf("Do after = %v", err)
	}
	select {
	case <-ran:
		t.Error("the abandoned task ran")
	default:
	}
}

func TestWorkersCloseLeavesNoGoroutine(t *testing.T) {
	base := runtime.NumGoroutine()
	p := NewWorkers(PoolConfig{Name: "W", Size: 8, QueueCapacity: 8})
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	p.Close()
	p.Close() // idempotent
	if err := p.Do(context.Background(), func(context.Context) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Do after Close = %v, want ErrClosed", err)
	}
	checkNoLeak(t, base)
}

func TestWorkersCloseFailsQueuedCallers(t *testing.T) {
	p := NewWorkers(PoolConfig{Name: "W", Size: 1, QueueCapacity: 1})
	release := make(chan struct{})
	busy := blockers(t, p, 1, release)
	errc := make(chan error, 1)
	go func() { errc <- p.Do(context.Background(), func(context.Context) error { return nil }) }()
	eventually(t, "task queued", func() bool { return p.Stats().Waiting == 1 })
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Errorf("queued Do during Close = %v, want ErrClosed", err)
	}
	close(release) // Close waits for the running task
	<-busy
	<-closed
}

// goroutineID returns the id of the calling goroutine, from the first line of its stack trace
// ("goroutine 42 [running]:"); a test-only way to see which worker ran a task.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	id, _, _ := strings.Cut(strings.TrimPrefix(string(buf), "goroutine "), " ")
	return id
}

// Which worker runs a task is the one that went idle last: calls that never overlap keep reusing
// one worker (the others keep the stack they started with), and n overlapping calls use n.
func TestWorkersReuseTheLastIdleWorker(t *testing.T) {
	for _, tc := range []struct {
		name        string
		size        int
		overlapping int // calls held running at once, each round
		rounds      int
		wantWorkers int // distinct workers that ran a task
	}{
		{"one call at a time runs on one worker", 8, 1, 20, 1},
		{"two at a time run on two workers", 8, 2, 20, 2},
		{"as many at a time as workers use them all", 4, 4, 5, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := NewWorkers(PoolConfig{Name: "W", Size: tc.size})
			defer p.Close()
			eventually(t, "every worker idle", func() bool {
				p.mu.Lock()
				defer p.mu.Unlock()
				return len(p.idle) == tc.size
			})
			var mu sync.Mutex
			ran := map[string]bool{}
			for range tc.rounds {
				release := make(chan struct{})
				started := make(chan struct{}, tc.overlapping)
				errc := make(chan error, tc.overlapping)
				for range tc.overlapping {
					go func() {
						errc <- p.Do(context.Background(), func(context.Context) error {
							mu.Lock()
							ran[goroutineID()] = true
							mu.Unlock()
							started <- struct{}{}
							<-release
							return nil
						})
					}()
				}
				for range tc.overlapping {
					<-started
				}
				close(release)
				for range tc.overlapping {
					if err := <-errc; err != nil {
						t.Fatal(err)
					}
				}
				// The next round starts once every worker is back on the idle stack.
				eventually(t, "every worker idle", func() bool {
					p.mu.Lock()
					defer p.mu.Unlock()
					return len(p.idle) == tc.size
				})
			}
			if len(ran) != tc.wantWorkers {
				t.Errorf("%d distinct workers ran tasks, want %d", len(ran), tc.wantWorkers)
			}
			if st := p.Stats(); st.Admitted != uint64(tc.rounds*tc.overlapping) || st.InUse != 0 || st.Waiting != 0 {
				t.Errorf("Admitted, InUse, Waiting = %d, %d, %d, want %d, 0, 0", st.Admitted, st.InUse, st.Waiting, tc.rounds*tc.overlapping)
			}
		})
	}
}

// Under many concurrent callers the pool never runs more than Size tasks at once and every admitted
// task runs exactly once: the hand-over between the queue and idle workers loses no task.
func TestWorkersBoundConcurrencyUnderContention(t *testing.T) {
	const size, queue, callers, calls = 3, 2, 16, 200
	p := NewWorkers(PoolConfig{Name: "W", Size: size, QueueCapacity: queue})
	defer p.Close()
	var running, peak, done atomic.Int64
	var admitted, rejected atomic.Int64
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range calls {
				err := p.Do(context.Background(), func(context.Context) error {
					n := running.Add(1)
					for {
						m := peak.Load()
						if n <= m || peak.CompareAndSwap(m, n) {
							break
						}
					}
					runtime.Gosched()
					running.Add(-1)
					done.Add(1)
					return nil
				})
				switch {
				case err == nil:
					admitted.Add(1)
				case errors.Is(err, ErrQueueFull):
					rejected.Add(1)
				default:
					t.Errorf("Do = %v", err)
				}
			}
		})
	}
	wg.Wait()
	if peak.Load() > size {
		t.Errorf("%d tasks ran at once, pool size %d", peak.Load(), size)
	}
	if admitted.Load()+rejected.Load() != callers*calls || done.Load() != admitted.Load() {
		t.Errorf("admitted %d + rejected %d of %d calls, %d ran", admitted.Load(), rejected.Load(), callers*calls, done.Load())
	}
	// A worker gives its task's place back just after the caller got the result.
	eventually(t, "every accepted task given back", func() bool { return p.accepted.Load() == 0 })
	if st := p.Stats(); st.Admitted != uint64(admitted.Load()) || st.InUse != 0 || st.Waiting != 0 || p.accepted.Load() != 0 {
		t.Errorf("Admitted, InUse, Waiting, accepted = %d, %d, %d, %d, want %d, 0, 0, 0", st.Admitted, st.InUse, st.Waiting, p.accepted.Load(), admitted.Load())
	}
}
