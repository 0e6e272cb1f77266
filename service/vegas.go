package service

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// KindVegas is an adaptive pool (Adaptive) whose limit follows concurrency-limits' VegasLimit
// (github.com/Netflix/concurrency-limits, concurrency-limits-core .../limit/VegasLimit.java),
// after TCP Vegas: it keeps the shortest round-trip time seen (the no-load RTT) and estimates the
// calls queued beyond what the dependency serves at that speed,
//
//	queue = ⌈limit × (1 − noload / rtt)⌉
//
// With log(L) = max(1, ⌊log10 L⌋): the limit grows by Beta while queue <= log(L) (no queueing),
// by log(L) while queue < Alpha, shrinks by log(L) when queue > Beta or the sample was dropped,
// and stays in between; the step is smoothed (Smoothing) and kept within [MinLimit, size]. A
// sample admitted with fewer than half the limit in flight (app-limited) leaves the limit. Every
// ProbeMultiplier × limit × j samples, j drawn uniformly from [0.5, 1), the no-load RTT is reset
// to the current sample's, so a dependency that became slower for good is learnt (the probe).
// The draws come from a generator seeded by Seed, so a run is reproducible.
const KindVegas PoolKind = "vegas"

func init() { RegisterPoolKind(&VegasParams{}) }

// VegasParams are kind vegas' parameters. Every zero value is documented; concurrency-limits'
// own defaults are named where they differ.
type VegasParams struct {
	// InitialLimit is the limit before any sample, in [MinLimit, size]. 0 means 20
	// (concurrency-limits' default), at most size.
	InitialLimit int `json:"initial_limit" yaml:"initial_limit"`
	// MinLimit is the lowest the limit goes, in [0, size]. 0 means 1 (concurrency-limits' floor).
	MinLimit int `json:"min_limit" yaml:"min_limit"`
	// Smoothing is the weight of each new estimate, in (0, 1]. 0 means 1: no smoothing.
	Smoothing float64 `json:"smoothing" yaml:"smoothing"`
	// Alpha is the queue under which Vegas grows the limit, <= Beta. 0 means 3 × log(L) of the
	// limit L of the moment.
	Alpha int `json:"alpha" yaml:"alpha"`
	// Beta is the queue over which Vegas shrinks the limit, >= Alpha. 0 means 6 × log(L).
	Beta int `json:"beta" yaml:"beta"`
	// ProbeMultiplier sets how often the no-load RTT is probed (see KindVegas), >= 0. 0 means 30.
	ProbeMultiplier int `json:"probe_multiplier" yaml:"probe_multiplier"`
	// Seed seeds the probe's draws. 0 means a seed derived from the pool's name, so every run of
	// a scenario draws the same.
	Seed int64 `json:"seed" yaml:"seed"`
}

// Kind returns KindVegas.
func (*VegasParams) Kind() PoolKind { return KindVegas }

// Check checks the bounds of the limit and the ranges of the parameters; an adaptive pool takes
// no queue and no max_wait.
func (v *VegasParams) Check(cfg PoolConfig) []FieldError {
	ps := checkAdaptive(cfg, v.InitialLimit, v.MinLimit)
	if !(v.Smoothing >= 0 && v.Smoothing <= 1) {
		ps = append(ps, FieldError{Path: "smoothing", Reason: fmt.Sprintf("must be in (0, 1] (0 = 1), got %v", v.Smoothing)})
	}
	if v.Alpha < 0 || v.Alpha > MaxPoolSize {
		ps = append(ps, FieldError{Path: "alpha", Reason: fmt.Sprintf("must be in [0, %d] (0 = 3 log10 of the limit), got %d", MaxPoolSize, v.Alpha)})
	}
	if v.Beta < 0 || v.Beta > MaxPoolSize {
		ps = append(ps, FieldError{Path: "beta", Reason: fmt.Sprintf("must be in [0, %d] (0 = 6 log10 of the limit), got %d", MaxPoolSize, v.Beta)})
	} else if v.Alpha > 0 && v.Beta > 0 && v.Beta < v.Alpha {
		ps = append(ps, FieldError{Path: "beta", Reason: fmt.Sprintf("must be at least alpha (%d), got %d", v.Alpha, v.Beta)})
	}
	if v.ProbeMultiplier < 0 || v.ProbeMultiplier > 1_000_000 {
		ps = append(ps, FieldError{Path: "probe_multiplier", Reason: fmt.Sprintf("must be in [0, 1000000] (0 = 30), got %d", v.ProbeMultiplier)})
	}
	return ps
}

// New returns an adaptive pool whose limit Vegas moves.
func (v *VegasParams) New(cfg PoolConfig) Pool {
	alg, initial, minLimit := v.algorithm(cfg)
	return NewAdaptive(cfg, alg, float64(initial), minLimit, nil)
}

// algorithm returns the Vegas limit a pool of cfg starts with, its initial and minimum limit.
func (v *VegasParams) algorithm(cfg PoolConfig) (*Vegas, int, int) {
	initial, minLimit := adaptiveBounds(cfg, v.InitialLimit, v.MinLimit)
	seed := v.Seed
	if seed == 0 {
		h := fnv.New64a()
		h.Write([]byte(cfg.Name))
		seed = int64(h.Sum64())
	}
	alg := &Vegas{Estimate: float64(initial), Min: minLimit, Max: cfg.Size, Smoothing: or(v.Smoothing, 1),
		Alpha: v.Alpha, Beta: v.Beta, ProbeMultiplier: or(v.ProbeMultiplier, 30),
		rng: rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))}
	alg.jitter = alg.draw()
	return alg, initial, minLimit
}

// Goroutines is 0: an adaptive pool's calls run on their callers' goroutines.
func (*VegasParams) Goroutines(PoolConfig) int { return 0 }

// Metrics is the adaptive pools' family (see Adaptive).
func (*VegasParams) Metrics() []PoolMetric { return adaptiveMetrics }

// String writes the parameters that are set.
func (v *VegasParams) String() string {
	return paramString("initial_limit", v.InitialLimit, "min_limit", v.MinLimit, "smoothing", v.Smoothing,
		"alpha", v.Alpha, "beta", v.Beta, "probe_multiplier", v.ProbeMultiplier, "seed", v.Seed)
}

// Vegas is concurrency-limits' VegasLimit with its parameters resolved: the LimitAlgorithm of
// kind vegas. Alpha or Beta 0 follow the limit (3 and 6 × log(L)).
type Vegas struct {
	Estimate        float64 // the limit's estimate now
	Min, Max        int
	Smoothing       float64
	Alpha, Beta     int
	ProbeMultiplier int
	NoLoad          time.Duration // the no-load RTT, 0 before the first sample

	rng        *rand.Rand
	jitter     float64 // this probe period's draw in [0.5, 1)
	probeCount int
}

func (v *Vegas) draw() float64 { return 0.5 + v.rng.Float64()/2 }

// log10 is concurrency-limits' Log10RootIntFunction: max(1, ⌊log10 l⌋).
func log10(l int) int {
	if l < 10 {
		return 1
	}
	return max(1, int(math.Log10(float64(l))))
}

// Update applies one sample (see KindVegas) and returns the new estimate.
func (v *Vegas) Update(s LimitSample) float64 {
	if s.RTT <= 0 {
		return v.Estimate // no measure (a clock that did not move)
	}
	v.probeCount++
	if v.jitter*float64(v.ProbeMultiplier)*v.Estimate <= float64(v.probeCount) {
		v.jitter, v.probeCount = v.draw(), 0
		v.NoLoad = s.RTT
		return v.Estimate
	}
	if v.NoLoad == 0 || s.RTT < v.NoLoad {
		v.NoLoad = s.RTT
		return v.Estimate
	}
	l := int(v.Estimate)
	queue := int(math.Ceil(v.Estimate * (1 - float64(v.NoLoad)/float64(s.RTT))))
	var next float64
	switch alpha, beta, threshold := or(v.Alpha, 3*log10(l)), or(v.Beta, 6*log10(l)), log10(l); {
	case s.Dropped:
		next = v.Estimate - float64(log10(l))
	case float64(s.InFlight)*2 < v.Estimate:
		return v.Estimate // app-limited: no evidence about the limit
	case queue <= threshold:
		next = v.Estimate + float64(beta)
	case queue < alpha:
		next = v.Estimate + float64(log10(l))
	case queue > beta:
		next = v.Estimate - float64(log10(l))
	default:
		return v.Estimate // within [alpha, beta]: the sweet spot
	}
	next = math.Max(float64(v.Min), math.Min(float64(v.Max), next))
	v.Estimate = (1-v.Smoothing)*v.Estimate + v.Smoothing*next
	return v.Estimate
}

// BaseRTT is the no-load RTT.
func (v *Vegas) BaseRTT() time.Duration { return v.NoLoad }
