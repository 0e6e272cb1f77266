package faults

import "time"

// SlowClose holds the close of a connection for Delay after the other side closed it:
// Toxiproxy's slow_close toxic. Data flows unchanged, so it only shows where the close ends an
// answer: a response read to the end of the connection (no Content-Length, Connection: close)
// arrives Delay late, while a keep-alive response with a length is read whole before any close.
type SlowClose struct {
	// Delay is how long the close is held; may be written "2x timeout". Toxiproxy counts whole
	// milliseconds, so it must round to at least 1ms.
	Delay time.Duration `yaml:"delay" json:"delay_ns"`
}

func init() { Register(&SlowClose{}) }

// Name returns "slow_close".
func (*SlowClose) Name() string { return "slow_close" }

// Check wants a delay of at least 1ms.
func (s *SlowClose) Check() []Problem {
	if millis(s.Delay) < 1 {
		return []Problem{problemf("delay", "a slow_close fault needs delay > 0 (at least 1ms, Toxiproxy's unit), got %v", s.Delay)}
	}
	return nil
}

// Effect is a slow_close toxic, in milliseconds.
func (s *SlowClose) Effect() Effect {
	return toxic("slow_close", map[string]int64{"delay": millis(s.Delay)})
}

// Symptom claims nothing: it depends on how each answer ends.
func (*SlowClose) Symptom() Symptom { return Symptom{} }

// String writes the delay ("1s").
func (s *SlowClose) String() string { return s.Delay.String() }
