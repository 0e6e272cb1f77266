package faults

import "fmt"

// Bandwidth lets data through at RateKBps: Toxiproxy's bandwidth toxic. How late an answer is
// depends on its size.
type Bandwidth struct {
	// RateKBps is the rate in KB/s; must be > 0.
	RateKBps int `yaml:"rate_kbps" json:"rate_kbps"`
}

func init() { Register(&Bandwidth{}) }

// Name returns "bandwidth".
func (*Bandwidth) Name() string { return "bandwidth" }

// Check wants a rate above 0.
func (b *Bandwidth) Check() []Problem {
	if b.RateKBps <= 0 {
		return []Problem{problemf("rate_kbps", "a bandwidth fault needs rate_kbps > 0, got %d", b.RateKBps)}
	}
	return nil
}

// Effect is a bandwidth toxic.
func (b *Bandwidth) Effect() Effect {
	return toxic("bandwidth", map[string]int64{"rate": int64(b.RateKBps)})
}

// Symptom claims nothing: the delay depends on the size of each answer.
func (*Bandwidth) Symptom() Symptom { return Symptom{} }

// String writes "64 KB/s".
func (b *Bandwidth) String() string { return fmt.Sprintf("%d KB/s", b.RateKBps) }
