package outcome

import (
	"net/http"
	"testing"
)

func contract(o, reason string) http.Header {
	h := http.Header{}
	if o != "" {
		h.Set(HeaderOutcome, o)
	}
	if reason != "" {
		h.Set(HeaderReason, reason)
	}
	h.Set(HeaderDependency, "A")
	return h
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name    string
		code    uint16
		headers http.Header
		err     string
		want    string
	}{
		// Responses of the service, by the outcome contract.
		{name: "200 ok", code: 200, headers: contract(OK, ""), want: "ok"},
		{name: "200 without headers", code: 200, want: "ok"},
		{name: "204", code: 204, want: "ok"},
		{name: "rejected full", code: 503, headers: contract(Rejected, ReasonFull), want: "rejected:full"},
		{name: "rejected queue-full", code: 503, headers: contract(Rejected, ReasonQueueFull), want: "rejected:queue-full"},
		{name: "rejected wait-timeout", code: 503, headers: contract(Rejected, ReasonWaitTimeout), want: "rejected:wait-timeout"},
		{name: "rejected breaker-open", code: 503, headers: contract(Rejected, ReasonBreakerOpen), want: "rejected:breaker-open"},
		{name: "rejected without reason", code: 503, headers: contract(Rejected, ""), want: "rejected:unknown"},
		{name: "dependency timeout", code: 504, headers: contract(Timeout, ""), want: "timeout:dependency"},
		{name: "upstream reset", code: 502, headers: contract(Upstream, "reset"), want: "upstream:reset"},
		{name: "upstream refused", code: 502, headers: contract(Upstream, "refused"), want: "upstream:refused"},
		{name: "upstream status-500", code: 502, headers: contract(Upstream, "status-500"), want: "upstream:status-500"},
		{name: "upstream conn-limit", code: 502, headers: contract(Upstream, "conn-limit"), want: "upstream:conn-limit"},
		{name: "upstream odd reason sanitised", code: 502, headers: contract(Upstream, "Weird Reason 127.0.0.1:80!"), want: "upstream:weird-reason-127-0-0-1-80"},
		// Statuses outside the contract.
		{name: "503 without outcome", code: 503, want: "other:status-503"},
		{name: "503 with the wrong outcome", code: 503, headers: contract(Timeout, ""), want: "other:status-503"},
		{name: "404", code: 404, want: "other:status-404"},
		{name: "500", code: 500, want: "other:status-500"},
		{name: "302", code: 302, want: "other:status-302"},
		// Transport errors, as net/http words them.
		{name: "client timeout awaiting headers", err: `Get "http://127.0.0.1:41234/a": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, want: "timeout:client"},
		{name: "client timeout reading body", err: `net/http: request canceled (Client.Timeout or context cancellation while reading body)`, want: "timeout:client"},
		{name: "i/o timeout", err: `Get "http://127.0.0.1:41234/a": dial tcp 127.0.0.1:41234: i/o timeout`, want: "timeout:client"},
		{name: "refused", err: `Get "http://127.0.0.1:41234/a": dial tcp 127.0.0.1:41234: connect: connection refused`, want: "connection:refused"},
		{name: "reset", err: `Get "http://127.0.0.1:41234/a": read tcp 127.0.0.1:50000->127.0.0.1:41234: read: connection reset by peer`, want: "connection:reset"},
		{name: "eof", err: `Get "http://127.0.0.1:41234/a": EOF`, want: "connection:eof"},
		{name: "unexpected eof", err: `unexpected EOF`, want: "connection:eof"},
		{name: "other keeps words, drops addresses", err: `Get "http://127.0.0.1:41234/a": dial tcp 127.0.0.1:41234: connect: no route to host`, want: "other:no-route-to-host"},
		{name: "other long text is cut", err: `x: ` + "abcdefghij abcdefghij abcdefghij abcdefghij abcdefghij", want: "other:abcdefghij-abcdefghij-abcdefghij-abcdefg"},
		{name: "other with only digits", err: `x: 127.0.0.1:80`, want: "other:transport"},
		{name: "no response at all", want: "other:no-response"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Classify(int(tt.code), tt.headers, tt.err)
			if got != tt.want {
				t.Errorf("Classify = %q; want %q", got, tt.want)
			}
			if len(got) > len(ClassOther)+1+maxDetail {
				t.Errorf("class %q is longer than a type and %d characters", got, maxDetail)
			}
		})
	}
}

func TestClassType(t *testing.T) {
	tests := []struct{ class, want string }{
		{"ok", ClassOK},
		{"rejected:full", ClassRejected},
		{"timeout:client", ClassTimeout},
		{"upstream:status-500", ClassUpstream},
		{"connection:eof", ClassConnection},
		{"other:status-404", ClassOther},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			if got := ClassType(tt.class); got != tt.want {
				t.Errorf("ClassType(%q) = %q; want %q", tt.class, got, tt.want)
			}
		})
	}
}
