package service

import (
	"fmt"
	"math"
	"time"
)

// KindGradient2 is an adaptive pool (Adaptive) whose limit follows concurrency-limits'
// Gradient2Limit (github.com/Netflix/concurrency-limits, concurrency-limits-core
// .../limit/Gradient2Limit.java): it compares each sample's round-trip time with a long-term
// exponential average of them, and shrinks the limit by that gradient while allowing a fixed
// amount of queueing:
//
//	long     = exponential average of the RTTs over LongWindow samples (the first 10 averaged)
//	gradient = max(0.5, min(1, RTTTolerance × long / rtt))
//	limit'   = limit × (1 − Smoothing) + (limit × gradient + QueueSize) × Smoothing
//
// kept within [MinLimit, size]. A sample admitted with fewer than half the limit in flight
// (app-limited) leaves the limit where it is. When the long average is more than twice the
// sample (latency back to normal after a long spell of load) the average decays by 5% per sample
// instead of waiting for the window. Drops are not treated apart: a timeout is a sample with a
// long round-trip time. The fixed point under a steady gradient g < 1 is QueueSize / (1 − g): with
// the defaults the limit does not fall below 8 while the gradient stays at its floor of 0.5.
const KindGradient2 PoolKind = "gradient2"

func init() { RegisterPoolKind(&Gradient2Params{}) }

// Gradient2Params are kind gradient2's parameters. Every zero value is documented;
// concurrency-limits' own defaults are named where they differ.
type Gradient2Params struct {
	// InitialLimit is the limit before any sample, in [MinLimit, size]. 0 means 20
	// (concurrency-limits' default), at most size.
	InitialLimit int `json:"initial_limit" yaml:"initial_limit"`
	// MinLimit is the lowest the limit goes, in [0, size]. 0 means 1 (concurrency-limits'
	// default is 20, which would pin a pool of 20 or fewer slots).
	MinLimit int `json:"min_limit" yaml:"min_limit"`
	// Smoothing is the weight of each new estimate, in (0, 1]. 0 means 0.2.
	Smoothing float64 `json:"smoothing" yaml:"smoothing"`
	// QueueSize is the queueing the limit allows for above the gradient's estimate, >= 0. 0 means
	// 4 (concurrency-limits' default; it has no way to ask for none either).
	QueueSize int `json:"queue_size" yaml:"queue_size"`
	// LongWindow is the number of samples of the long-term RTT average, >= 0. 0 means 600.
	LongWindow int `json:"long_window" yaml:"long_window"`
	// RTTTolerance is how much longer than the long-term average a sample may take before the
	// limit shrinks, >= 1. 0 means 1.5.
	RTTTolerance float64 `json:"rtt_tolerance" yaml:"rtt_tolerance"`
}

// Kind returns KindGradient2.
func (*Gradient2Params) Kind() PoolKind { return KindGradient2 }

// Check checks the bounds of the limit and the ranges of the parameters; an adaptive pool takes
// no queue and no max_wait.
func (g *Gradient2Params) Check(cfg PoolConfig) []FieldError {
	ps := checkAdaptive(cfg, g.InitialLimit, g.MinLimit)
	if !(g.Smoothing >= 0 && g.Smoothing <= 1) {
		ps = append(ps, FieldError{Path: "smoothing", Reason: fmt.Sprintf("must be in (0, 1] (0 = 0.2), got %v", g.Smoothing)})
	}
	if g.QueueSize < 0 || g.QueueSize > MaxPoolSize {
		ps = append(ps, FieldError{Path: "queue_size", Reason: fmt.Sprintf("must be in [0, %d] (0 = 4), got %d", MaxPoolSize, g.QueueSize)})
	}
	if g.LongWindow < 0 || g.LongWindow > 1_000_000 {
		ps = append(ps, FieldError{Path: "long_window", Reason: fmt.Sprintf("must be in [0, 1000000] (0 = 600), got %d", g.LongWindow)})
	}
	if g.RTTTolerance != 0 && !(g.RTTTolerance >= 1 && g.RTTTolerance <= 100) {
		ps = append(ps, FieldError{Path: "rtt_tolerance", Reason: fmt.Sprintf("must be in [1, 100] (0 = 1.5), got %v", g.RTTTolerance)})
	}
	return ps
}

// New returns an adaptive pool whose limit Gradient2 moves.
func (g *Gradient2Params) New(cfg PoolConfig) Pool {
	alg, initial, minLimit := g.algorithm(cfg)
	return NewAdaptive(cfg, alg, float64(initial), minLimit, nil)
}

// algorithm returns the Gradient2 limit a pool of cfg starts with, its initial and minimum limit.
func (g *Gradient2Params) algorithm(cfg PoolConfig) (*Gradient2, int, int) {
	initial, minLimit := adaptiveBounds(cfg, g.InitialLimit, g.MinLimit)
	alg := &Gradient2{Estimate: float64(initial), Min: minLimit, Max: cfg.Size,
		Smoothing: or(g.Smoothing, 0.2), QueueSize: or(g.QueueSize, 4), RTTTolerance: or(g.RTTTolerance, 1.5),
		Long: ExpAverage{Window: or(g.LongWindow, 600), Warmup: 10}}
	return alg, initial, minLimit
}

// Goroutines is 0: an adaptive pool's calls run on their callers' goroutines.
func (*Gradient2Params) Goroutines(PoolConfig) int { return 0 }

// Metrics is the adaptive pools' family (see Adaptive).
func (*Gradient2Params) Metrics() []PoolMetric { return adaptiveMetrics }

// String writes the parameters that are set.
func (g *Gradient2Params) String() string {
	return paramString("initial_limit", g.InitialLimit, "min_limit", g.MinLimit, "smoothing", g.Smoothing,
		"queue_size", g.QueueSize, "long_window", g.LongWindow, "rtt_tolerance", g.RTTTolerance)
}

// Gradient2 is concurrency-limits' Gradient2Limit with its parameters resolved: the
// LimitAlgorithm of kind gradient2.
type Gradient2 struct {
	Estimate     float64 // the limit's estimate now
	Min, Max     int
	Smoothing    float64
	QueueSize    int
	RTTTolerance float64
	Long         ExpAverage // the long-term RTT average, in nanoseconds
}

// Update applies one sample (see KindGradient2) and returns the new estimate.
func (g *Gradient2) Update(s LimitSample) float64 {
	if s.RTT <= 0 {
		return g.Estimate // no measure (a clock that did not move)
	}
	short := float64(s.RTT)
	long := g.Long.Add(short)
	if long/short > 2 {
		g.Long.Value *= 0.95
	}
	if float64(s.InFlight) < g.Estimate/2 {
		return g.Estimate // app-limited: no evidence about the limit
	}
	gradient := math.Max(0.5, math.Min(1, g.RTTTolerance*long/short))
	next := g.Estimate*gradient + float64(g.QueueSize)
	next = g.Estimate*(1-g.Smoothing) + next*g.Smoothing
	g.Estimate = math.Max(float64(g.Min), math.Min(float64(g.Max), next))
	return g.Estimate
}

// BaseRTT is the long-term average RTT.
func (g *Gradient2) BaseRTT() time.Duration { return time.Duration(g.Long.Value) }

// ExpAverage is concurrency-limits' ExpAvgMeasurement: the plain mean of the first Warmup
// samples, then an exponential average with factor 2 / (Window + 1).
type ExpAverage struct {
	Window, Warmup int
	Value          float64
	n              int
	sum            float64
}

// Add takes one sample and returns the average.
func (e *ExpAverage) Add(x float64) float64 {
	if e.n < e.Warmup {
		e.n++
		e.sum += x
		e.Value = e.sum / float64(e.n)
		return e.Value
	}
	f := 2 / float64(e.Window+1)
	e.Value = e.Value*(1-f) + x*f
	return e.Value
}
