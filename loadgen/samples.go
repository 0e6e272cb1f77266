package loadgen

import (
	"math"
	"slices"
	"time"
)

// samples holds non-negative durations exactly, in memory that grows with what is recorded: 4
// bytes a sample below 2^32 ns (about 4.3 s), 8 bytes above. Quantiles are nearest-rank over
// every sample. The zero value is empty and ready; it is not safe for concurrent use.
type samples struct {
	small  []uint32        // samples below 2^32 ns, in nanoseconds
	large  []time.Duration // the rest
	sorted bool
}

// add records d (negative durations are recorded as 0).
func (s *samples) add(d time.Duration) {
	d = max(d, 0)
	if d <= math.MaxUint32 {
		s.small = append(s.small, uint32(d))
	} else {
		s.large = append(s.large, d)
	}
	s.sorted = false
}

// len returns the number of samples.
func (s *samples) len() int { return len(s.small) + len(s.large) }

// reset empties s, keeping its memory for reuse.
func (s *samples) reset() {
	s.small, s.large, s.sorted = s.small[:0], s.large[:0], false
}

// addAll records every sample of o.
func (s *samples) addAll(o *samples) {
	s.small = append(s.small, o.small...)
	s.large = append(s.large, o.large...)
	s.sorted = false
}

// quantile returns the nearest-rank q-quantile (q in [0, 1]): the smallest sample with at least
// a fraction q of the samples at or below it; 0 when there are none. It sorts s in place the
// first time after an add.
func (s *samples) quantile(q float64) time.Duration {
	n := s.len()
	if n == 0 {
		return 0
	}
	if !s.sorted {
		slices.Sort(s.small)
		slices.Sort(s.large)
		s.sorted = true
	}
	i := min(max(int(math.Ceil(q*float64(n)))-1, 0), n-1)
	// Every large sample is above every small one.
	if i < len(s.small) {
		return time.Duration(s.small[i])
	}
	return s.large[i-len(s.small)]
}
