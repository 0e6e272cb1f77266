package faults

import "strconv"

// HTTPError makes the dependency itself answer every request with an error status, at once
// (dependency.Server.SetFailing). Toxiproxy works on TCP and cannot produce it, so it takes no
// toxicity or direction. Requests the dependency was already waiting on still answer 200.
type HTTPError struct {
	// Status is the status answered; 0 means 500. Set, it must be 400 to 599.
	Status int `yaml:"status,omitempty" json:"status,omitempty"`
}

// defaultStatus is what a Status of 0 answers: 500 Internal Server Error.
const defaultStatus = 500

func init() { Register(&HTTPError{}) }

// Name returns "http-error".
func (*HTTPError) Name() string { return "http-error" }

// Check wants an error status, 400 to 599, or 0.
func (h *HTTPError) Check() []Problem {
	if h.Status != 0 && (h.Status < 400 || h.Status > 599) {
		return []Problem{problemf("status", "must be an error status, 400 to 599 (0 means 500), got %d", h.Status)}
	}
	return nil
}

// Effect switches the dependency to answer the status.
func (h *HTTPError) Effect() Effect { return Effect{Status: h.status()} }

// Symptom is a fast error.
func (*HTTPError) Symptom() Symptom { return Symptom{FastError: true} }

// String writes the status when it is not the default 500.
func (h *HTTPError) String() string {
	if h.status() == defaultStatus {
		return ""
	}
	return strconv.Itoa(h.Status)
}

func (h *HTTPError) status() int {
	if h.Status == 0 {
		return defaultStatus
	}
	return h.Status
}
