package loadgen

import (
	"fmt"
	"strings"
	"time"
)

// Segment is one stretch of a piecewise-constant schedule: from Start (an offset from the
// attack start) until the next segment's Start, hits go out at Rate per second, evenly spaced as
// a ConstantPacer spaces them. Rate 0 sends nothing.
type Segment struct {
	Start time.Duration
	Rate  float64
}

// PiecewisePacer is a constant-rate schedule whose rate changes at given offsets: a webhook
// burst at several times the normal rate during one phase, or an endpoint silent outside its
// phase. Within segment i, hit j is due at Start_i + (j+1)·interval_i (the interval in integer
// nanoseconds, as vegeta's ConstantPacer computes it), for every such time up to and including
// the next segment's Start; the last segment never ends. Scheduled and Hits are pure functions
// of their argument, exact in integer nanoseconds.
//
// Use NewPiecewisePacer; the zero value sends nothing. A PiecewisePacer is immutable and safe for
// concurrent use.
type PiecewisePacer struct {
	segs []pieceSeg
}

var _ Pacer = PiecewisePacer{}

// pieceSeg is a segment with its interval and the hits before it.
type pieceSeg struct {
	start    time.Duration
	end      time.Duration // the next segment's start; -1 for the last
	rate     float64
	interval time.Duration // 0 when rate is 0
	before   uint64        // hits due in the earlier segments
	count    uint64        // hits due in this segment (unused for the last)
}

// NewPiecewisePacer returns the pacer for segs. The first segment must start at 0, starts must
// increase strictly, every rate must be 0 or in (0, MaxRate], and some rate must be > 0 (an attack
// that never sends is an error). Errors wrap ErrInvalid and name the segment.
func NewPiecewisePacer(segs []Segment) (PiecewisePacer, error) {
	if len(segs) == 0 {
		return PiecewisePacer{}, fmt.Errorf("piecewise pacer: no segments: %w", ErrInvalid)
	}
	if segs[0].Start != 0 {
		return PiecewisePacer{}, fmt.Errorf("piecewise pacer: segment 0 starts at %v, want 0: %w", segs[0].Start, ErrInvalid)
	}
	out := make([]pieceSeg, len(segs))
	peak := 0.0
	var before uint64
	for i, s := range segs {
		if i > 0 && s.Start <= segs[i-1].Start {
			return PiecewisePacer{}, fmt.Errorf("piecewise pacer: segment %d starts at %v, not after %v: %w", i, s.Start, segs[i-1].Start, ErrInvalid)
		}
		ps := pieceSeg{start: s.Start, end: -1, rate: s.Rate, before: before}
		if s.Rate != 0 {
			cp, err := NewConstantPacer(s.Rate)
			if err != nil {
				return PiecewisePacer{}, fmt.Errorf("piecewise pacer: segment %d: %w", i, err)
			}
			ps.interval = cp.interval()
			peak = max(peak, s.Rate)
		}
		if i+1 < len(segs) {
			ps.end = segs[i+1].Start
			if ps.interval > 0 {
				ps.count = uint64((ps.end - ps.start) / ps.interval)
			}
			before += ps.count
		}
		out[i] = ps
	}
	if peak == 0 {
		return PiecewisePacer{}, fmt.Errorf("piecewise pacer: every segment has rate 0: %w", ErrInvalid)
	}
	return PiecewisePacer{segs: out}, nil
}

// String describes the pacer, e.g. "Piecewise{0s: 20/s, 5s: 200/s, 8s: 20/s}".
func (p PiecewisePacer) String() string {
	parts := make([]string, len(p.segs))
	for i, s := range p.segs {
		parts[i] = fmt.Sprintf("%v: %g/s", s.start, s.rate)
	}
	return "Piecewise{" + strings.Join(parts, ", ") + "}"
}

// Peak returns the highest rate of any segment.
func (p PiecewisePacer) Peak() float64 {
	peak := 0.0
	for _, s := range p.segs {
		peak = max(peak, s.rate)
	}
	return peak
}

// Rate returns the rate of the segment elapsed falls in (0 in a silent segment, and before 0).
func (p PiecewisePacer) Rate(elapsed time.Duration) float64 {
	if i := p.segment(elapsed); i >= 0 {
		return p.segs[i].rate
	}
	return 0
}

// segment returns the index of the segment holding elapsed, -1 before the start or without
// segments.
func (p PiecewisePacer) segment(elapsed time.Duration) int {
	i := -1
	for j, s := range p.segs {
		if s.start <= elapsed {
			i = j
		}
	}
	return i
}

// Scheduled returns the offset at which hit k is due. When no segment holds hit k (every later
// segment is silent) it returns the largest time.Duration: never.
func (p PiecewisePacer) Scheduled(k uint64) time.Duration {
	for i, s := range p.segs {
		last := i == len(p.segs)-1
		if k < s.before {
			break
		}
		if j := k - s.before; last && s.interval > 0 || !last && j < s.count {
			return s.start + time.Duration(j+1)*s.interval
		}
	}
	return time.Duration(1<<63 - 1)
}

// Hits returns the number of hits due by elapsed: the count of k with Scheduled(k) <= elapsed.
func (p PiecewisePacer) Hits(elapsed time.Duration) uint64 {
	i := p.segment(elapsed)
	if i < 0 {
		return 0
	}
	s := p.segs[i]
	if s.interval == 0 {
		return s.before
	}
	return s.before + uint64((elapsed-s.start)/s.interval)
}

// Pace returns the wait until hit number hits is due (0 when it is already due). When no hit is
// ever due again it returns a wait of one second without stopping: the attack's duration (or the
// load generator's bound on hits) ends it, as it ends every other attack.
func (p PiecewisePacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due := p.Scheduled(hits)
	switch {
	case due == time.Duration(1<<63-1):
		return time.Second, false
	case due <= elapsed:
		return 0, false
	}
	return due - elapsed, false
}

// peakRate is the rate Start validates an attack's pacer by: the peak of a piecewise schedule
// (which may start silent), the rate at 0 of any other pacer.
func peakRate(p Pacer) float64 {
	if pw, ok := p.(interface{ Peak() float64 }); ok {
		return pw.Peak()
	}
	return p.Rate(0)
}
