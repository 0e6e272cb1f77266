package faults

import (
	"fmt"
	"time"
)

// Slicer cuts the data into chunks of about AverageSize bytes (± SizeVariation), sent Delay
// apart: Toxiproxy's slicer toxic. It exercises a reader's handling of short reads, and with a
// delay it makes an answer late in proportion to its size.
type Slicer struct {
	// AverageSize is the mean chunk size in bytes; must be > 0.
	AverageSize int `yaml:"average_size" json:"average_size"`
	// SizeVariation varies each chunk by up to ± this many bytes; 0 to AverageSize-1.
	SizeVariation int `yaml:"size_variation,omitempty" json:"size_variation,omitempty"`
	// Delay is the pause after each chunk; may be written "0.01x timeout". Toxiproxy counts
	// whole microseconds. 0 means none.
	Delay time.Duration `yaml:"delay,omitempty" json:"delay_ns,omitempty"`
}

func init() { Register(&Slicer{}) }

// Name returns "slicer".
func (*Slicer) Name() string { return "slicer" }

// Check wants a positive size, a variation below it and a delay of 0 or at least 1µs.
func (s *Slicer) Check() []Problem {
	var ps []Problem
	if s.AverageSize <= 0 {
		ps = append(ps, problemf("average_size", "a slicer fault needs average_size > 0 (bytes), got %d", s.AverageSize))
	}
	if s.SizeVariation < 0 || (s.AverageSize > 0 && s.SizeVariation >= s.AverageSize) {
		ps = append(ps, problemf("size_variation", "must be >= 0 and below average_size %d, got %d", s.AverageSize, s.SizeVariation))
	}
	if s.Delay < 0 || (s.Delay > 0 && micros(s.Delay) < 1) {
		ps = append(ps, problemf("delay", "must be 0 or at least 1µs, got %v", s.Delay))
	}
	return ps
}

// Effect is a slicer toxic, its delay in microseconds.
func (s *Slicer) Effect() Effect {
	return toxic("slicer", map[string]int64{
		"average_size": int64(s.AverageSize), "size_variation": int64(s.SizeVariation), "delay": micros(s.Delay),
	})
}

// Symptom claims nothing: the delay depends on the size of each answer.
func (*Slicer) Symptom() Symptom { return Symptom{} }

// String writes "64±16 B every 1ms", "64 B".
func (s *Slicer) String() string {
	out := fmt.Sprintf("%d B", s.AverageSize)
	if s.SizeVariation > 0 {
		out = fmt.Sprintf("%d±%d B", s.AverageSize, s.SizeVariation)
	}
	if s.Delay > 0 {
		out += " every " + s.Delay.String()
	}
	return out
}
