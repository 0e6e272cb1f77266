package faults

import "fmt"

// LimitData closes the connection once Bytes have gone through it: Toxiproxy's limit_data toxic.
// Counted per connection (and per toxic), so on a kept-alive connection the answers flow until the
// budget runs out in the middle of one, which the caller reads as a cut answer (EOF); the next call
// opens a fresh connection with a fresh budget.
type LimitData struct {
	// Bytes is the budget of each connection, in bytes; must be > 0.
	Bytes int64 `yaml:"bytes" json:"bytes"`
}

func init() { Register(&LimitData{}) }

// Name returns "limit_data".
func (*LimitData) Name() string { return "limit_data" }

// Check wants a budget above 0.
func (l *LimitData) Check() []Problem {
	if l.Bytes <= 0 {
		return []Problem{problemf("bytes", "a limit_data fault needs bytes > 0, got %d", l.Bytes)}
	}
	return nil
}

// Effect is a limit_data toxic.
func (l *LimitData) Effect() Effect { return toxic("limit_data", map[string]int64{"bytes": l.Bytes}) }

// Symptom claims nothing: which calls fail depends on the size of the answers.
func (*LimitData) Symptom() Symptom { return Symptom{} }

// String writes the budget ("1000 B").
func (l *LimitData) String() string { return fmt.Sprintf("%d B", l.Bytes) }
