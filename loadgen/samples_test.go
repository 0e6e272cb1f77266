package loadgen

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// nearestRank is the definition, computed independently: sort everything, take the value at
// rank ceil(q*n).
func nearestRank(values []time.Duration, q float64) time.Duration {
	if len(values) == 0 {
		return 0
	}
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func TestSamplesQuantileIsNearestRank(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		values []time.Duration
	}{
		{name: "empty"},
		{name: "one", values: []time.Duration{7}},
		{name: "zeros and negatives count as 0", values: []time.Duration{0, -5, 3}},
		{name: "ties", values: []time.Duration{5, 5, 5, 1, 9, 9}},
		{name: "both sides of 2^32 ns", values: []time.Duration{math.MaxUint32, math.MaxUint32 + 1, 3, time.Minute, 2 * time.Second, 10 * time.Second}},
		{name: "1000 random up to 10 s", values: func() []time.Duration {
			v := make([]time.Duration, 1000)
			for i := range v {
				v[i] = time.Duration(rng.Int64N(int64(10 * time.Second)))
			}
			return v
		}()},
		{name: "101 random micro", values: func() []time.Duration {
			v := make([]time.Duration, 101)
			for i := range v {
				v[i] = time.Duration(rng.Int64N(int64(time.Millisecond)))
			}
			return v
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s samples
			clamped := make([]time.Duration, len(tt.values))
			for i, v := range tt.values {
				s.add(v)
				clamped[i] = max(v, 0)
			}
			if s.len() != len(tt.values) {
				t.Fatalf("len = %d; want %d", s.len(), len(tt.values))
			}
			for _, q := range []float64{0, 0.001, 0.5, 0.9, 0.99, 0.999, 1} {
				if got, want := s.quantile(q), nearestRank(clamped, q); got != want {
					t.Errorf("quantile(%v) = %v; want %v", q, got, want)
				}
			}
		})
	}
}

// Adding after a quantile, merging and resetting keep the quantiles exact.
func TestSamplesAddAfterQuantileMergeReset(t *testing.T) {
	var a, b samples
	for _, v := range []time.Duration{30, 10, 20} {
		a.add(v)
	}
	if got := a.quantile(1); got != 30 {
		t.Fatalf("max = %v; want 30", got)
	}
	a.add(5 * time.Second)
	a.add(1)
	if got := a.quantile(0); got != 1 {
		t.Errorf("after adding: min = %v; want 1", got)
	}
	if got := a.quantile(1); got != 5*time.Second {
		t.Errorf("after adding: max = %v; want 5s", got)
	}
	b.add(15)
	b.addAll(&a)
	if got, want := b.quantile(0.5), nearestRank([]time.Duration{30, 10, 20, 5 * time.Second, 1, 15}, 0.5); got != want {
		t.Errorf("merged median = %v; want %v", got, want)
	}
	b.reset()
	if b.len() != 0 || b.quantile(0.99) != 0 {
		t.Errorf("after reset: len %d, p99 %v; want 0, 0", b.len(), b.quantile(0.99))
	}
}
