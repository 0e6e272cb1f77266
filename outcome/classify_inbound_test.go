package outcome

import (
	"net/http"
	"testing"
)

// An inbound endpoint's 202 accepted is a success: the item was taken, to be processed later;
// its own 503 backlog-full is a rejection like a pool's.
func TestClassifyInbound(t *testing.T) {
	tests := []struct {
		name    string
		code    uint16
		outcome string
		reason  string
		want    string
	}{
		{"202 accepted", 202, Accepted, "", ClassOK},
		{"503 backlog full", 503, Rejected, ReasonBacklogFull, "rejected:backlog-full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			h.Set(HeaderOutcome, tt.outcome)
			if tt.reason != "" {
				h.Set(HeaderReason, tt.reason)
			}
			if got := Classify(int(tt.code), h, ""); got != tt.want {
				t.Errorf("Classify = %q; want %q", got, tt.want)
			}
		})
	}
}
