package faults

import (
	"fmt"
	"time"
)

// Timeout drops every byte and holds the connection open: Toxiproxy's timeout toxic. With
// CloseAfter 0 the connection hangs until the caller's own timeout ends the call; otherwise
// Toxiproxy closes it after CloseAfter (the caller reads EOF). Removing the toxic closes the
// connections it was stalling.
type Timeout struct {
	// CloseAfter is how long the connection hangs before Toxiproxy closes it (its "timeout"
	// attribute); it may be written "0.5x timeout". 0, the default, hangs for good.
	CloseAfter time.Duration `yaml:"close_after,omitempty" json:"close_after_ns,omitempty"`
}

func init() { Register(&Timeout{}) }

// Name returns "timeout".
func (*Timeout) Name() string { return "timeout" }

// Check wants CloseAfter to be 0 or at least 1ms.
func (t *Timeout) Check() []Problem {
	if t.CloseAfter < 0 || (t.CloseAfter > 0 && millis(t.CloseAfter) < 1) {
		return []Problem{problemf("close_after", "must be 0 (hang) or at least 1ms, got %v", t.CloseAfter)}
	}
	return nil
}

// Effect is a timeout toxic, in milliseconds.
func (t *Timeout) Effect() Effect {
	return toxic("timeout", map[string]int64{"timeout": millis(t.CloseAfter)})
}

// Symptom is a hang when the connection is never closed.
func (t *Timeout) Symptom() Symptom { return Symptom{Hang: t.CloseAfter == 0} }

// String writes "closed after 200ms", or "" for a hang.
func (t *Timeout) String() string {
	if t.CloseAfter == 0 {
		return ""
	}
	return fmt.Sprintf("closed after %v", t.CloseAfter)
}
