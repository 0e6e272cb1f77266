package faults

import (
	"fmt"
	"time"
)

// Latency holds each chunk of data for Latency, ± Jitter: Toxiproxy's latency toxic. A response
// of one chunk arrives Latency late.
type Latency struct {
	// Latency is the delay; it may be written "0.9x timeout". Toxiproxy counts whole
	// milliseconds, so it must round to at least 1ms.
	Latency time.Duration `yaml:"latency" json:"latency_ns"`
	// Jitter makes each delay Latency ± a uniform Jitter, drawn from Toxiproxy's own unseeded
	// source (not the run's seed). 0 means none.
	Jitter time.Duration `yaml:"jitter,omitempty" json:"jitter_ns,omitempty"`
}

func init() { Register(&Latency{}) }

// Name returns "latency".
func (*Latency) Name() string { return "latency" }

// Check wants a latency of at least 1ms and no negative jitter.
func (l *Latency) Check() []Problem {
	var ps []Problem
	if millis(l.Latency) < 1 {
		ps = append(ps, problemf("latency", "a latency fault needs latency > 0 (at least 1ms, Toxiproxy's unit), got %v", l.Latency))
	}
	if l.Jitter < 0 {
		ps = append(ps, problemf("jitter", "must be >= 0, got %v", l.Jitter))
	}
	return ps
}

// Effect is a latency toxic, in milliseconds.
func (l *Latency) Effect() Effect {
	return toxic("latency", map[string]int64{"latency": millis(l.Latency), "jitter": millis(l.Jitter)})
}

// Symptom is a delay of Latency.
func (l *Latency) Symptom() Symptom { return Symptom{Delay: l.Latency} }

// String writes "450ms" or "450ms±20ms".
func (l *Latency) String() string {
	if l.Jitter > 0 {
		return fmt.Sprintf("%v±%v", l.Latency, l.Jitter)
	}
	return l.Latency.String()
}
