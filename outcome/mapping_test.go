package outcome

import (
	"net/http"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestMappingClassify(t *testing.T) {
	custom := &Mapping{
		Statuses: map[int]string{503: "rejected:full", 500: "upstream:crash", 429: "rejected:rate"},
		Header:   "X-Limit-Reason",
		Values:   map[string]string{"Concurrency": "rejected:full", "deadline": "timeout:dependency"},
	}
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	tests := []struct {
		name    string
		m       *Mapping
		code    int
		headers http.Header
		err     string
		want    string
	}{
		// Defaults: a nil or zero Mapping.
		{name: "nil 200", code: 200, want: "ok"},
		{name: "nil 202", code: 202, want: "ok"},
		{name: "nil 503", code: 503, want: "rejected:status-503"},
		{name: "nil 429", code: 429, want: "rejected:status-429"},
		{name: "nil 504", code: 504, want: "timeout:dependency"},
		{name: "nil 500", code: 500, want: "upstream:status-500"},
		{name: "nil 502", code: 502, want: "upstream:status-502"},
		{name: "nil 404", code: 404, want: "other:status-404"},
		{name: "nil 302", code: 302, want: "other:status-302"},
		{name: "zero 503", m: &Mapping{}, code: 503, want: "rejected:status-503"},
		{name: "refused", err: `dial tcp 127.0.0.1:1: connect: connection refused`, want: "connection:refused"},
		{name: "reset", err: `read: connection reset by peer`, want: "connection:reset"},
		{name: "eof", err: `Get "http://x/a": EOF`, want: "connection:eof"},
		{name: "client timeout", err: `context deadline exceeded (Client.Timeout exceeded while awaiting headers)`, want: "timeout:client"},
		{name: "custom transport error ignores mapping", m: custom, err: `connection refused`, want: "connection:refused"},
		// The built-in contract wins where its headers are present.
		{name: "contract headers", m: custom, code: 503, headers: contract(Rejected, ReasonQueueFull), want: "rejected:queue-full"},
		{name: "contract 504", code: 504, headers: contract(Timeout, ""), want: "timeout:dependency"},
		// Statuses.
		{name: "custom 503", m: custom, code: 503, want: "rejected:full"},
		{name: "custom 500", m: custom, code: 500, want: "upstream:crash"},
		{name: "custom 429", m: custom, code: 429, want: "rejected:rate"},
		{name: "custom falls back to defaults", m: custom, code: 504, want: "timeout:dependency"},
		{name: "custom 200 not listed", m: custom, code: 200, want: "ok"},
		// Header, before statuses, case-insensitive on the value.
		{name: "header value", m: custom, code: 500, headers: hdr("X-Limit-Reason", "concurrency"), want: "rejected:full"},
		{name: "header other value", m: custom, code: 503, headers: hdr("X-Limit-Reason", "DEADLINE"), want: "timeout:dependency"},
		{name: "header unknown value falls to statuses", m: custom, code: 500, headers: hdr("X-Limit-Reason", "other"), want: "upstream:crash"},
		{name: "status mapping can override 2xx", m: &Mapping{Statuses: map[int]string{203: "other:degraded"}}, code: 203, want: "other:degraded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Classify(tt.code, tt.headers, tt.err); got != tt.want {
				t.Errorf("Classify(%d, %v, %q) = %q; want %q", tt.code, tt.headers, tt.err, got, tt.want)
			}
		})
	}
}

func TestMappingValidate(t *testing.T) {
	tests := []struct {
		name string
		m    *Mapping
		want []string // substrings of the error; none means valid
	}{
		{name: "nil", m: nil},
		{name: "zero", m: &Mapping{}},
		{name: "good", m: &Mapping{Statuses: map[int]string{503: "rejected:full", 200: "ok"}, Header: "X-R", Values: map[string]string{"a": "timeout"}}},
		{name: "unknown type", m: &Mapping{Statuses: map[int]string{503: "refused:full"}},
			want: []string{`cfg.outcomes.statuses[503]: class "refused:full": type "refused" is not one of ok, timeout`}},
		{name: "bad detail", m: &Mapping{Statuses: map[int]string{503: "rejected:Full Pool"}}, want: []string{`statuses[503]: class "rejected:Full Pool": detail`}},
		{name: "empty detail", m: &Mapping{Statuses: map[int]string{503: "rejected:"}}, want: []string{`statuses[503]`}},
		{name: "ok with detail", m: &Mapping{Statuses: map[int]string{200: "ok:fine"}}, want: []string{`ok takes no detail`}},
		{name: "not a status", m: &Mapping{Statuses: map[int]string{99: "ok", 600: "ok"}}, want: []string{`statuses[99]: status 99`, `statuses[600]: status 600`}},
		{name: "values without header", m: &Mapping{Values: map[string]string{"x": "ok"}}, want: []string{`cfg.outcomes.values: set without header`}},
		{name: "bad value class", m: &Mapping{Header: "X", Values: map[string]string{"x": "nope"}}, want: []string{`values["x"]: class "nope"`}},
		{name: "values differing in case only", m: &Mapping{Header: "X", Values: map[string]string{"Full": "rejected:full", "full": "rejected:other"}}, want: []string{`values["full"]: same value as "Full"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.m.Validate("cfg.outcomes")
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate = %v; want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil; want an error containing %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q; want it to contain %q", err, w)
				}
			}
		})
	}
}

// A scenario writes the mapping in YAML; it decodes into Mapping with its codes as map keys.
func TestMappingYAML(t *testing.T) {
	const doc = `
statuses:
  503: rejected:full
  500: upstream:crash
header: X-Limit-Reason
values:
  concurrency: rejected:full
`
	var m Mapping
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	if m.Statuses[503] != "rejected:full" || m.Statuses[500] != "upstream:crash" || m.Header != "X-Limit-Reason" || m.Values["concurrency"] != "rejected:full" {
		t.Fatalf("decoded %+v", m)
	}
	if err := m.Validate("outcomes"); err != nil {
		t.Fatal(err)
	}
	if got, want := m.String(), "header X-Limit-Reason: concurrency rejected:full; 500 upstream:crash; 503 rejected:full; then defaults"; !strings.HasPrefix(got, want) {
		t.Errorf("String = %q; want prefix %q", got, want)
	}
	if got := (*Mapping)(nil).String(); !strings.HasPrefix(got, "defaults (") {
		t.Errorf("nil String = %q", got)
	}
}

func TestMappingBlame(t *testing.T) {
	m := &Mapping{Blame: map[string]string{"timeout:late-socket": "queue:agent-{dependency}", "rejected:wait-timeout": "queue:A"}}
	if err := m.Validate("outcomes"); err != nil {
		t.Fatal(err)
	}
	if r, ok := m.BlameFor("timeout:late-socket", "B"); !ok || r != "queue:agent-B" {
		t.Errorf("BlameFor(late-socket, B) = %q, %v", r, ok)
	}
	if _, ok := m.BlameFor("timeout:dependency", "B"); ok {
		t.Error("a class the mapping names no resource for was charged")
	}
	if _, ok := (*Mapping)(nil).BlameFor("timeout:x", "A"); ok {
		t.Error("a nil mapping blamed something")
	}
	bad := &Mapping{Blame: map[string]string{"ok": "pool:a", "timeout:x": "socket:a", "weird": "pool:a"}}
	err := bad.Validate("outcomes")
	for _, want := range []string{`outcomes.blame["ok"]: a success`, `outcomes.blame["timeout:x"]: resource "socket:a": kind "socket"`, `outcomes.blame["weird"]: class "weird"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %v, want it to say %s", err, want)
		}
	}
}
