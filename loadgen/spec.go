package loadgen

import (
	"fmt"
	"time"
)

// Pacer kinds (PacerSpec.Kind).
const (
	PacerConstant  = "constant"
	PacerPoisson   = "poisson"
	PacerPiecewise = "piecewise"
)

// PacerSpec describes a Pacer in data, so that a load generator in another process builds the
// very same schedule: DescribePacer(p).Pacer() schedules every hit at exactly the offset p does.
// Durations are integer nanoseconds in JSON.
type PacerSpec struct {
	// Kind is PacerConstant, PacerPoisson or PacerPiecewise.
	Kind string `json:"kind"`
	// Freq hits per Per: a constant pacer (vegeta's ConstantPacer fields).
	Freq int           `json:"freq,omitempty"`
	Per  time.Duration `json:"per_ns,omitempty"`
	// Rate (per second) and Seed: a Poisson pacer.
	Rate float64 `json:"rate,omitempty"`
	Seed int64   `json:"seed,omitempty"`
	// Segments: a piecewise pacer.
	Segments []SegmentSpec `json:"segments,omitempty"`
	// Lead moves the whole schedule earlier (Shifted); 0 leaves it.
	Lead time.Duration `json:"lead_ns,omitempty"`
}

// SegmentSpec is a Segment in JSON.
type SegmentSpec struct {
	Start time.Duration `json:"start_ns"`
	Rate  float64       `json:"rate"`
}

// DescribePacer returns the spec of p: a ConstantPacer, *PoissonPacer or PiecewisePacer,
// optionally inside one Shifted. Any other pacer is an error wrapping ErrInvalid naming its type.
func DescribePacer(p Pacer) (PacerSpec, error) {
	var lead time.Duration
	if s, ok := p.(Shifted); ok {
		p, lead = s.Pacer, s.Lead
	}
	var s PacerSpec
	switch q := p.(type) {
	case ConstantPacer:
		s = PacerSpec{Kind: PacerConstant, Freq: q.Freq, Per: q.Per}
	case *PoissonPacer:
		s = PacerSpec{Kind: PacerPoisson, Rate: q.rate, Seed: q.seed}
	case PiecewisePacer:
		s = PacerSpec{Kind: PacerPiecewise}
		for _, g := range q.segs {
			s.Segments = append(s.Segments, SegmentSpec{Start: g.start, Rate: g.rate})
		}
	default:
		return PacerSpec{}, fmt.Errorf("pacer %T cannot be described for another process: %w", p, ErrInvalid)
	}
	s.Lead = lead
	return s, nil
}

// Pacer builds the pacer s describes. A spec that does not describe a valid pacer (an unknown
// kind, a bad rate, segments NewPiecewisePacer refuses, a negative lead) is an error wrapping
// ErrInvalid that names the field.
func (s PacerSpec) Pacer() (Pacer, error) {
	var p Pacer
	switch s.Kind {
	case PacerConstant:
		if s.Freq <= 0 || s.Per <= 0 {
			return nil, fmt.Errorf("freq %d per %v: both must be positive: %w", s.Freq, s.Per, ErrInvalid)
		}
		cp := ConstantPacer{}
		cp.Freq, cp.Per = s.Freq, s.Per
		p = cp
	case PacerPoisson:
		pp, err := NewPoissonPacer(s.Rate, s.Seed)
		if err != nil {
			return nil, fmt.Errorf("rate: %w", err)
		}
		p = pp
	case PacerPiecewise:
		segs := make([]Segment, len(s.Segments))
		for i, g := range s.Segments {
			segs[i] = Segment{Start: g.Start, Rate: g.Rate}
		}
		pw, err := NewPiecewisePacer(segs)
		if err != nil {
			return nil, fmt.Errorf("segments: %w", err)
		}
		p = pw
	default:
		return nil, fmt.Errorf("kind %q: want %s, %s or %s: %w", s.Kind, PacerConstant, PacerPoisson, PacerPiecewise, ErrInvalid)
	}
	switch {
	case s.Lead < 0:
		return nil, fmt.Errorf("lead_ns %v must not be negative: %w", s.Lead, ErrInvalid)
	case s.Lead > 0:
		return Shifted{Pacer: p, Lead: s.Lead}, nil
	}
	return p, nil
}

// Settings are a Run's options resolved to values, all but the classifier (a function): what a
// load generator in another process needs to run as this one would. Durations are integer
// nanoseconds in JSON.
type Settings struct {
	Timeout     time.Duration `json:"timeout_ns"`
	MaxWorkers  uint64        `json:"max_workers"`
	Connections int           `json:"connections"`
	LagLimit    time.Duration `json:"lag_limit_ns"`
	KeepAlive   bool          `json:"keep_alive"`
	NoWarm      bool          `json:"no_warm,omitempty"`
}

// Resolve applies opts, in any order, to the defaults and returns the resulting settings. It
// does not validate them (Start does).
func Resolve(opts ...Opt) Settings {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	return Settings{Timeout: o.timeout, MaxWorkers: o.maxWorkers, Connections: o.connections, LagLimit: o.lagLimit, KeepAlive: o.keepAlive, NoWarm: o.noWarm}
}

// Opts returns the options that give a Run these settings.
func (s Settings) Opts() []Opt {
	opts := []Opt{WithTimeout(s.Timeout), WithMaxWorkers(s.MaxWorkers), WithConnections(s.Connections),
		WithLagLimit(s.LagLimit), WithKeepAlive(s.KeepAlive)}
	if s.NoWarm {
		opts = append(opts, WithoutWarm())
	}
	return opts
}
