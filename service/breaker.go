package service

import (
	"context"
	"errors"
	"time"

	"github.com/sony/gobreaker/v2"
)

// Breaker defaults, applied where BreakerConfig fields are zero.
const (
	DefaultBreakerMinCalls     = 10
	DefaultBreakerFailureRatio = 0.5
	DefaultBreakerOpenTimeout  = 5 * time.Second
)

// newBreaker builds the circuit breaker of one dependency. It trips when, in the current window,
// at least MinCalls calls were counted and failures/calls >= FailureRatio, or when the last
// MinCalls calls all failed. The second rule is the failure ratio over a count-based sliding
// window of the last MinCalls calls (Resilience4j's COUNT_BASED window), which gobreaker's
// cumulative counts cannot express: with Interval 0 they are never cleared, so a long healthy
// period would otherwise dilute a run of slow calls for as long again (a breaker that "trips
// after ten slow calls" would not trip for minutes after a busy morning). A failure is an error
// of the call, a timeout, or a successful call slower than SlowCallThreshold (a slow dependency
// answering 200 is the case a plain failure counter cannot see). Not counted: pool
// rejections (they say nothing about the dependency) and calls abandoned because the request
// went away or a sibling call failed.
func newBreaker(name string, cfg BreakerConfig) *gobreaker.CircuitBreaker[struct{}] {
	minCalls := cfg.MinCalls
	if minCalls == 0 {
		minCalls = DefaultBreakerMinCalls
	}
	ratio := cfg.FailureRatio
	if ratio == 0 {
		ratio = DefaultBreakerFailureRatio
	}
	open := cfg.OpenTimeout
	if open <= 0 {
		open = DefaultBreakerOpenTimeout
	}
	return gobreaker.NewCircuitBreaker[struct{}](gobreaker.Settings{
		Name:     name,
		Interval: cfg.Interval,
		Timeout:  open,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			n := c.TotalSuccesses + c.TotalFailures
			return c.ConsecutiveFailures >= minCalls || (n >= minCalls && float64(c.TotalFailures) >= ratio*float64(n))
		},
		IsExcluded: func(err error) bool {
			var rej *RejectedError
			if errors.As(err, &rej) {
				return true
			}
			return errors.Is(err, context.Canceled) && !errors.Is(err, ErrTimeout)
		},
	})
}
