package loadgen

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func mustPiecewise(t *testing.T, segs ...Segment) PiecewisePacer {
	t.Helper()
	p, err := NewPiecewisePacer(segs)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const ms = time.Millisecond

// A piecewise schedule is the constant schedules of its segments laid end to end: hits at
// start + (j+1)·interval up to and including the next segment's start, nothing in a silent
// segment.
func TestPiecewiseSchedule(t *testing.T) {
	// 2/s for 1 s, 4/s for 1 s, silent for 1 s, then 1/s for ever.
	p := mustPiecewise(t, Segment{0, 2}, Segment{time.Second, 4}, Segment{2 * time.Second, 0}, Segment{3 * time.Second, 1})
	want := []time.Duration{
		500 * ms, 1000 * ms, // 2/s; the hit at exactly 1 s is the first segment's
		1250 * ms, 1500 * ms, 1750 * ms, 2000 * ms, // 4/s
		// 2 s .. 3 s silent
		4000 * ms, 5000 * ms, 6000 * ms, // 1/s, first one interval after 3 s
	}
	for k, w := range want {
		if got := p.Scheduled(uint64(k)); got != w {
			t.Errorf("Scheduled(%d) = %v; want %v", k, got, w)
		}
	}
	hits := []struct {
		at   time.Duration
		want uint64
	}{
		{-time.Second, 0},
		{0, 0},
		{499 * ms, 0},
		{500 * ms, 1},
		{time.Second, 2},
		{1249 * ms, 2},
		{2 * time.Second, 6},
		{2500 * ms, 6}, // silent
		{3999 * ms, 6},
		{4 * time.Second, 7},
		{6 * time.Second, 9},
	}
	for _, h := range hits {
		if got := p.Hits(h.at); got != h.want {
			t.Errorf("Hits(%v) = %d; want %d", h.at, got, h.want)
		}
	}
	rates := map[time.Duration]float64{-1: 0, 0: 2, 999 * ms: 2, time.Second: 4, 2500 * ms: 0, time.Hour: 1}
	for at, want := range rates {
		if got := p.Rate(at); got != want {
			t.Errorf("Rate(%v) = %v; want %v", at, got, want)
		}
	}
	if p.Peak() != 4 {
		t.Errorf("Peak = %v; want 4", p.Peak())
	}
}

// Pace, Scheduled and Hits agree, as for the other pacers, across bursts and silences; and the
// hits of a segment are its rate times its length.
func TestPiecewiseAgrees(t *testing.T) {
	tests := []struct {
		name string
		segs []Segment
		// hits due within each segment but the last, in order
		perSegment []uint64
	}{
		{"one segment is a constant pacer", []Segment{{0, 50}}, nil},
		{"webhook burst: 20/s, 200/s for 3 s, 20/s", []Segment{{0, 20}, {5 * time.Second, 200}, {8 * time.Second, 20}}, []uint64{100, 600}},
		{"silent outside its phase", []Segment{{0, 0}, {2 * time.Second, 100}, {3 * time.Second, 0}, {4 * time.Second, 3}}, []uint64{0, 100, 0}},
		{"fractional rates", []Segment{{0, 33.3}, {1500 * ms, 0.5}, {7 * time.Second, 3}}, []uint64{49, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPiecewise(t, tt.segs...)
			const n = 1500
			sends := simulate(t, p, n)
			for k, at := range sends {
				if s := p.Scheduled(uint64(k)); s != at {
					t.Fatalf("hit %d: the loop sent at %v, Scheduled says %v", k, at, s)
				}
				if k > 0 && at < sends[k-1] {
					t.Fatalf("hit %d at %v before hit %d at %v", k, at, k-1, sends[k-1])
				}
				if got := p.Hits(at); got != uint64(k+1) {
					t.Fatalf("Hits(%v) = %d; want %d", at, got, k+1)
				}
				if got := p.Hits(at - 1); got != uint64(k) {
					t.Fatalf("Hits(%v - 1ns) = %d; want %d", at, got, k)
				}
			}
			for i, want := range tt.perSegment {
				if got := p.Hits(tt.segs[i+1].Start) - p.Hits(tt.segs[i].Start); got != want {
					t.Errorf("segment %d: %d hits; want %d", i, got, want)
				}
			}
			if len(tt.segs) == 1 {
				c, _ := NewConstantPacer(tt.segs[0].Rate)
				for k := range uint64(n) {
					if c.Scheduled(k) != p.Scheduled(k) {
						t.Fatalf("hit %d: piecewise %v, constant %v", k, p.Scheduled(k), c.Scheduled(k))
					}
				}
			}
		})
	}
}

// A schedule whose later segments are silent never schedules another hit, and Pace waits rather
// than stopping (the attack's duration ends it).
func TestPiecewiseEndsSilent(t *testing.T) {
	p := mustPiecewise(t, Segment{0, 10}, Segment{time.Second, 0})
	if got := p.Hits(time.Hour); got != 10 {
		t.Errorf("Hits(1h) = %d; want 10", got)
	}
	if got := p.Scheduled(10); got != time.Duration(1<<63-1) {
		t.Errorf("Scheduled(10) = %v; want never", got)
	}
	if wait, stop := p.Pace(2*time.Second, 10); stop || wait <= 0 {
		t.Errorf("Pace after the last hit = %v, %t; want a wait and no stop", wait, stop)
	}
	if got := peakRate(p); got != 10 {
		t.Errorf("peakRate = %v; want 10", got)
	}
	if got := peakRate(mustPiecewise(t, Segment{0, 0}, Segment{time.Second, 7})); got != 7 {
		t.Errorf("peakRate of a schedule starting silent = %v; want 7 (Start accepts it)", got)
	}
}

func TestNewPiecewisePacerRejects(t *testing.T) {
	tests := []struct {
		name string
		segs []Segment
	}{
		{"no segments", nil},
		{"first segment not at 0", []Segment{{time.Second, 5}}},
		{"starts not increasing", []Segment{{0, 5}, {time.Second, 5}, {time.Second, 6}}},
		{"negative rate", []Segment{{0, 5}, {time.Second, -1}}},
		{"rate above MaxRate", []Segment{{0, 2e9}}},
		{"never sends", []Segment{{0, 0}, {time.Second, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewPiecewisePacer(tt.segs)
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("NewPiecewisePacer(%v) = %v, %v; want an error wrapping ErrInvalid", tt.segs, p, err)
			}
		})
	}
}

func ExamplePiecewisePacer() {
	// Carrier C's webhooks: 20/s, then the backlog drains at 200/s for 3 s, then 20/s again.
	p, _ := NewPiecewisePacer([]Segment{{0, 20}, {5 * time.Second, 200}, {8 * time.Second, 20}})
	fmt.Println(p)
	fmt.Println(p.Hits(5*time.Second), p.Hits(8*time.Second)-p.Hits(5*time.Second), p.Scheduled(100))
	// Output:
	// Piecewise{0s: 20/s, 5s: 200/s, 8s: 20/s}
	// 100 600 5.005s
}
