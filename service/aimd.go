package service

import (
	"fmt"
	"time"
)

// KindAIMD is an adaptive pool (Adaptive) whose limit follows concurrency-limits' AIMDLimit
// (github.com/Netflix/concurrency-limits, concurrency-limits-core .../limit/AIMDLimit.java):
// loss-based additive increase, multiplicative decrease, as TCP's congestion window. A sample
// that was dropped, or took longer than Timeout, multiplies the limit by BackoffRatio; a
// successful sample admitted while at least half the limit was in flight adds one; a sample of a
// pool far from its limit (app-limited) leaves it. The limit stays within [MinLimit, size].
//
// AIMD sees latency only through Timeout: a dependency that slows down but answers within it
// raises the limit as long as the calls keep half of it busy.
const KindAIMD PoolKind = "aimd"

func init() { RegisterPoolKind(&AIMDParams{}) }

// AIMDParams are kind aimd's parameters. Every zero value is documented; concurrency-limits'
// own defaults are named where they differ.
type AIMDParams struct {
	// InitialLimit is the limit before any sample, in [MinLimit, size]. 0 means 20
	// (concurrency-limits' default), at most size.
	InitialLimit int `json:"initial_limit" yaml:"initial_limit"`
	// MinLimit is the lowest the limit goes, in [0, size]. 0 means 1 (concurrency-limits'
	// default is 20, which would pin a pool of 20 or fewer slots).
	MinLimit int `json:"min_limit" yaml:"min_limit"`
	// BackoffRatio multiplies the limit at each drop, in [0.5, 1). 0 means 0.9.
	BackoffRatio float64 `json:"backoff_ratio" yaml:"backoff_ratio"`
	// Timeout is the round-trip time above which a successful call counts as a drop. 0 means 5s
	// (concurrency-limits' default); calls that time out are drops whatever it is.
	Timeout time.Duration `json:"timeout" yaml:"timeout"`
}

// Kind returns KindAIMD.
func (*AIMDParams) Kind() PoolKind { return KindAIMD }

// Check checks the bounds of the limit, the backoff ratio and the timeout; an adaptive pool
// takes no queue and no max_wait.
func (a *AIMDParams) Check(cfg PoolConfig) []FieldError {
	ps := checkAdaptive(cfg, a.InitialLimit, a.MinLimit)
	if a.BackoffRatio != 0 && !(a.BackoffRatio >= 0.5 && a.BackoffRatio < 1) {
		ps = append(ps, FieldError{Path: "backoff_ratio", Reason: fmt.Sprintf("must be in [0.5, 1) (0 = 0.9), got %v", a.BackoffRatio)})
	}
	if a.Timeout < 0 || a.Timeout > MaxDuration {
		ps = append(ps, FieldError{Path: "timeout", Reason: fmt.Sprintf("must be in [0, %v] (0 = 5s), got %v", MaxDuration, a.Timeout)})
	}
	return ps
}

// New returns an adaptive pool whose limit AIMD moves.
func (a *AIMDParams) New(cfg PoolConfig) Pool {
	alg, initial, minLimit := a.algorithm(cfg)
	return NewAdaptive(cfg, alg, float64(initial), minLimit, nil)
}

// algorithm returns the AIMD limit a pool of cfg starts with, its initial and minimum limit.
func (a *AIMDParams) algorithm(cfg PoolConfig) (*AIMD, int, int) {
	initial, minLimit := adaptiveBounds(cfg, a.InitialLimit, a.MinLimit)
	alg := &AIMD{Limit: initial, Min: minLimit, Max: cfg.Size, BackoffRatio: a.BackoffRatio, Timeout: a.Timeout}
	if alg.BackoffRatio == 0 {
		alg.BackoffRatio = 0.9
	}
	if alg.Timeout == 0 {
		alg.Timeout = 5 * time.Second
	}
	return alg, initial, minLimit
}

// Goroutines is 0: an adaptive pool's calls run on their callers' goroutines.
func (*AIMDParams) Goroutines(PoolConfig) int { return 0 }

// Metrics is the adaptive pools' family (see Adaptive).
func (*AIMDParams) Metrics() []PoolMetric { return adaptiveMetrics }

// String writes the parameters that are set.
func (a *AIMDParams) String() string {
	return paramString("initial_limit", a.InitialLimit, "min_limit", a.MinLimit,
		"backoff_ratio", a.BackoffRatio, "timeout", a.Timeout)
}

// AIMD is concurrency-limits' AIMDLimit with its parameters resolved: the LimitAlgorithm of kind
// aimd.
type AIMD struct {
	Limit        int // the limit now
	Min, Max     int
	BackoffRatio float64
	Timeout      time.Duration
}

// Update applies one sample: a drop, or an RTT above Timeout, multiplies the limit by
// BackoffRatio (rounding down); a success admitted with at least half the limit in flight adds
// one; the result is kept within [Min, Max].
func (a *AIMD) Update(s LimitSample) float64 {
	switch {
	case s.Dropped || s.RTT > a.Timeout:
		a.Limit = int(float64(a.Limit) * a.BackoffRatio)
	case s.InFlight*2 >= a.Limit:
		a.Limit++
	}
	a.Limit = min(a.Max, max(a.Min, a.Limit))
	return float64(a.Limit)
}

// BaseRTT is 0: AIMD compares samples with Timeout only.
func (a *AIMD) BaseRTT() time.Duration { return 0 }
