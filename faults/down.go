package faults

// Down disables the dependency's proxy: its listener closes, so new calls are refused
// (ECONNREFUSED), and its live connections are closed. It is not a toxic, so it takes no
// toxicity or direction. Clearing it re-enables the proxy on the same address.
type Down struct{}

func init() { Register(&Down{}) }

// Name returns "down".
func (*Down) Name() string { return "down" }

// Check finds nothing: down has no parameters.
func (*Down) Check() []Problem { return nil }

// Effect disables the proxy.
func (*Down) Effect() Effect { return Effect{ProxyDown: true} }

// Symptom is a fast error.
func (*Down) Symptom() Symptom { return Symptom{FastError: true} }

// String is empty: no amounts.
func (*Down) String() string { return "" }
