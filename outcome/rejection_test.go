package outcome

import "testing"

func TestRejectionKind(t *testing.T) {
	for class, want := range map[string]string{
		"rejected:full":         RejectRefused,
		"rejected:queue-full":   RejectRefused,
		"rejected:breaker-open": RejectRefused,
		"rejected:backlog-full": RejectRefused,
		"rejected:status-503":   RejectRefused,
		"rejected:unknown":      RejectRefused,
		"rejected":              RejectRefused,
		"rejected:wait-timeout": RejectWaited,
		"timeout:dependency":    "",
		"ok":                    "",
		"upstream:status-503":   "",
	} {
		if got := RejectionKind(class); got != want {
			t.Errorf("RejectionKind(%q) = %q, want %q", class, got, want)
		}
	}
}
