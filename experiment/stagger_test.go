package experiment

import (
	"slices"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

func TestArrivalOffset(t *testing.T) {
	tests := []struct {
		name   string
		i, n   int
		rate   float64
		rep    int
		wantUS int64 // microseconds
	}{
		{"one endpoint does not move", 0, 1, 50, 1, 0},
		{"the second of two at 50/s leads by half its 20 ms interval", 1, 2, 50, 1, 10000},
		{"repetition 2 moves it to 0.88 of the interval", 1, 2, 50, 2, 17639},
		{"repetition 3 to 0.26", 1, 2, 50, 3, 5278},
		{"the first stream never moves", 0, 2, 50, 3, 0},
		{"first of many stays at zero", 0, 500, 1, 1, 0},
		{"middle of 500 at 1/s: half a second", 250, 500, 1, 1, 500000},
		{"last of 500 at 1/s", 499, 500, 1, 1, 998000},
		{"a fast endpoint moves within its own interval", 250, 500, 50, 1, 10000},
		{"repetition 2 moves the others by 0.76 of 1/n", 250, 500, 1, 2, 501527},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := arrivalOffset(tt.i, tt.n, tt.rate, tt.rep)
			if got.Microseconds() != tt.wantUS {
				t.Errorf("arrivalOffset(%d, %d, %g, %d) = %v, want %dus", tt.i, tt.n, tt.rate, tt.rep, got, tt.wantUS)
			}
		})
	}
}

// In every repetition the streams' offsets lie within one interval, no two share an instant, and
// no gap between neighbours exceeds two even shares: the streams never bunch up.
func TestArrivalOffsetsSpread(t *testing.T) {
	for _, n := range []int{2, 3, 4, 7, 20, 55, 500} {
		for rep := 1; rep <= 4; rep++ {
			offs := make([]time.Duration, n)
			for i := range offs {
				offs[i] = arrivalOffset(i, n, 1, rep)
				if offs[i] < 0 || offs[i] >= time.Second {
					t.Fatalf("n=%d rep=%d: stream %d at %v, outside [0, 1s)", n, rep, i, offs[i])
				}
			}
			slices.Sort(offs)
			offs = append(offs, time.Second) // the first stream's next send
			for k := 1; k < len(offs); k++ {
				gap := offs[k] - offs[k-1]
				if gap <= 0 || gap > 2*time.Second/time.Duration(n) {
					t.Errorf("n=%d rep=%d: gap %v between neighbours, want in (0, 2/n s]", n, rep, gap)
				}
			}
		}
	}
}

// A shifted pacer is the inner schedule moved earlier by less than one interval: Scheduled,
// Hits and Pace agree with it, and as many hits are due by any whole second as without it.
func TestStaggeredSchedule(t *testing.T) {
	inner, err := loadgen.NewConstantPacer(1)
	if err != nil {
		t.Fatal(err)
	}
	p := loadgen.Shifted{Pacer: inner, Lead: 300 * time.Millisecond}
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
