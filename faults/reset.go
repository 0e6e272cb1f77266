package faults

// Reset resets the connection at the first data: Toxiproxy's reset_peer toxic with timeout 0.
// The caller sees "connection reset by peer" within about a millisecond. On the downstream stream
// the dependency has served the request by then; on the upstream stream it never sees it.
//
// A reset_peer toxic added while a pooled connection is open closes that connection with a FIN,
// not an RST (Toxiproxy sets SO_LINGER 0 only on connections opened while the toxic exists), so a
// GET on it reads EOF and Go's transport retries it on a fresh connection, which is reset.
type Reset struct{}

func init() { Register(&Reset{}) }

// Name returns "reset".
func (*Reset) Name() string { return "reset" }

// Check finds nothing: reset has no parameters.
func (*Reset) Check() []Problem { return nil }

// Effect is a reset_peer toxic with timeout 0.
func (*Reset) Effect() Effect { return toxic("reset_peer", map[string]int64{"timeout": 0}) }

// Symptom is a fast error.
func (*Reset) Symptom() Symptom { return Symptom{FastError: true} }

// String is empty: no amounts.
func (*Reset) String() string { return "" }
