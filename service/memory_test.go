package service

import (
	"context"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// The snapshot's memory figures are the runtime's own: a worker pool's goroutines show up in
// Goroutines, and every goroutine holds at least the minimum stack (2 KB), so StackBytes can
// never be below 2 KB per goroutine; a live service has heap objects.
func TestSnapshotMemory(t *testing.T) {
	a, b := newFakeDep(t, false, 200), newFakeDep(t, false, 200)
	const minStack = 2 << 10
	tests := []struct {
		name    string
		mode    Mode
		workers int // goroutines the layout starts: layout(shared) is a workers pool of size P
	}{
		{"split semaphores start no goroutines", ModeSplit, 0},
		{"a shared pool of 2000 workers", ModeShared, 2000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := New(twoDeps(tt.mode, 2000, a, b, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Shutdown(context.Background())
			snap := s.Snapshot()
			pr := snap.Process
			if pr.Goroutines < tt.workers {
				t.Errorf("Goroutines = %d, want at least the %d workers", pr.Goroutines, tt.workers)
			}
			if pr.StackBytes < uint64(minStack*pr.Goroutines) {
				t.Errorf("StackBytes = %d, below %d goroutines x 2 KB", pr.StackBytes, pr.Goroutines)
			}
			if pr.HeapBytes == 0 {
				t.Error("HeapBytes = 0 in a live process")
			}
			rs := snap.Resources()
			last := rs[len(rs)-2:]
			if last[0] != (outcome.Resource{Name: "heap-bytes", InUse: float64(pr.HeapBytes)}) || last[1] != (outcome.Resource{Name: "stack-bytes", InUse: float64(pr.StackBytes)}) {
				t.Errorf("Resources ends with %+v, want heap-bytes and stack-bytes", last)
			}
		})
	}
}
