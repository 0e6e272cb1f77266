package experiment

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

func TestStaggerOffset(t *testing.T) {
	tests := []struct {
		name string
		i, n int
		rate float64
		want time.Duration
	}{
		{"one endpoint does not move", 0, 1, 50, 0},
		{"the second of two at 50/s leads by half its 20 ms interval", 1, 2, 50, 10 * time.Millisecond},
		{"first of many stays at zero", 0, 500, 1, 0},
		{"middle of 500 at 1/s: half a second", 250, 500, 1, 500 * time.Millisecond},
		{"last of 500 at 1/s", 499, 500, 1, 998 * time.Millisecond},
		{"a fast endpoint moves within its own interval", 250, 500, 50, 10 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := staggerOffset(tt.i, tt.n, tt.rate); got != tt.want {
				t.Errorf("staggerOffset(%d, %d, %g) = %v, want %v", tt.i, tt.n, tt.rate, got, tt.want)
			}
		})
	}
}

// A staggered pacer is the inner schedule moved earlier by less than one interval: Scheduled,
// Hits and Pace agree with it, and as many hits are due by any whole second as without it.
func TestStaggeredSchedule(t *testing.T) {
	inner, err := loadgen.NewConstantPacer(1)
	if err != nil {
		t.Fatal(err)
	}
	p := staggered{Pacer: inner, lead: 300 * time.Millisecond}
	tests := []struct {
		elapsed  time.Duration
		hits     uint64 // due by elapsed
		waitNext time.Duration
	}{
		{0, 0, 700 * time.Millisecond},
		{200 * time.Millisecond, 0, 500 * time.Millisecond},
		{699 * time.Millisecond, 0, time.Millisecond},
		{700 * time.Millisecond, 1, time.Second},
		{time.Second, 1, 700 * time.Millisecond},
		{3500 * time.Millisecond, 3, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.elapsed.String(), func(t *testing.T) {
			if got := p.Hits(tt.elapsed); got != tt.hits {
				t.Errorf("Hits = %d, want %d", got, tt.hits)
			}
			if got := p.Scheduled(tt.hits) - tt.elapsed; got != tt.waitNext {
				t.Errorf("Scheduled(next) - elapsed = %v, want %v", got, tt.waitNext)
			}
			if wait, stop := p.Pace(tt.elapsed, tt.hits); stop || wait != tt.waitNext {
				t.Errorf("Pace = %v, %t; want %v, false", wait, stop, tt.waitNext)
			}
		})
	}
}
