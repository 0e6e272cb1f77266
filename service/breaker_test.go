package service

import (
	"testing"

	"github.com/sony/gobreaker/v2"
)

// TestBreakerTripRules drives newBreaker's rules with calls that succeed, fail or are slow (a
// success the breaker counts as a failure), without any network.
func TestBreakerTripRules(t *testing.T) {
	const (
		ok   = 'o'
		slow = 's'
	)
	tests := []struct {
		name  string
		cfg   BreakerConfig
		calls string // one rune per call, in order
		want  gobreaker.State
	}{
		// 10 fast calls, then 3 slow: 3/13 < 0.5 by the cumulative ratio, but the last MinCalls
		// calls all failed: a sliding window of 3 calls is 100% slow.
		{"a run of MinCalls slow calls trips after a healthy period", BreakerConfig{MinCalls: 3, FailureRatio: 0.5},
			"oooooooooosss", gobreaker.StateOpen},
		{"one short of MinCalls does not", BreakerConfig{MinCalls: 3, FailureRatio: 0.5},
			"oooooooooo" + "ss", gobreaker.StateClosed},
		{"a success breaks the run", BreakerConfig{MinCalls: 3, FailureRatio: 0.5},
			"oooooooooo" + "ssoss", gobreaker.StateClosed},
		// The ratio rule as before: 2 failures in 4 calls reach 0.5 once MinCalls (4) are counted (gobreaker asks on a failure).
		{"the ratio over the window still trips", BreakerConfig{MinCalls: 4, FailureRatio: 0.5},
			"osos", gobreaker.StateOpen},
		{"below MinCalls the ratio does not", BreakerConfig{MinCalls: 4, FailureRatio: 0.5},
			"sos", gobreaker.StateClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cb := newBreaker("B", tt.cfg)
			for _, c := range tt.calls {
				cb.Execute(func() (struct{}, error) { //nolint:errcheck // the state is what is checked
					if c == slow {
						return struct{}{}, errSlowCall
					}
					return struct{}{}, nil
				})
			}
			if got := cb.State(); got != tt.want {
				t.Errorf("after %q: state %v, want %v", tt.calls, got, tt.want)
			}
		})
	}
}
