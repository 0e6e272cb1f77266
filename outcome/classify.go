package outcome

import (
	"net/http"
	"strconv"
	"strings"
)

// Class type prefixes: a class is "<type>" or "<type>:<detail>".
const (
	// ClassOK is a 2xx response. It has no detail.
	ClassOK = "ok"
	// ClassTimeout is "timeout:dependency" (the service's 504) or "timeout:client" (the load
	// generator's own timeout fired).
	ClassTimeout = "timeout"
	// ClassRejected is the service's 503 rejection, detailed by its reason: "rejected:full",
	// "rejected:queue-full", "rejected:wait-timeout", "rejected:breaker-open".
	ClassRejected = "rejected"
	// ClassUpstream is the service's 502, detailed by its cause: "upstream:reset",
	// "upstream:status-500", ...
	ClassUpstream = "upstream"
	// ClassConnection is a transport error between the load generator and the service:
	// "connection:refused", "connection:reset", "connection:eof".
	ClassConnection = "connection"
	// ClassOther is anything else: "other:status-404" for a status without the outcome contract,
	// "other:<words>" for an unrecognised transport error.
	ClassOther = "other"
)

// ClassTypes lists the class types in the order reports show them.
var ClassTypes = []string{ClassOK, ClassTimeout, ClassRejected, ClassUpstream, ClassConnection, ClassOther}

// ClassType returns the type prefix of class: the text before the first ':' ("rejected" for
// "rejected:full", "ok" for "ok").
func ClassType(class string) string {
	t, _, _ := strings.Cut(class, ":")
	return t
}

// ClassDetail returns the detail of class: the text after the first ':' ("full" for
// "rejected:full", "" for "ok").
func ClassDetail(class string) string {
	_, d, _ := strings.Cut(class, ":")
	return d
}

// Classify returns the class of one response from its status code (0 for a transport error), its
// outcome headers (HeaderOutcome, HeaderReason) and, for transport errors, the error text. It is
// the one classifier: the load generator stores its answer with every result, and the report
// falls back on it for results stored without one. The set of classes is bounded: details are
// sanitised and never carry ports or addresses.
//
//	2xx (an inbound endpoint's 202 accepted too)  ok
//	503 + outcome rejected                rejected:<reason>       (reason "unknown" if missing)
//	504 + outcome timeout                 timeout:dependency
//	502 + outcome upstream                upstream:<reason>       (reason "unknown" if missing)
//	any other status                      other:status-NNN
//	transport error: timeout/deadline     timeout:client
//	connection refused / reset / EOF      connection:refused / connection:reset / connection:eof
//	other transport errors                other:<last words of the error, letters only>
func Classify(code int, h http.Header, errText string) string {
	if code == 0 {
		return classifyTransport(errText)
	}
	if code >= 200 && code < 300 {
		return ClassOK
	}
	outcome := h.Get(HeaderOutcome)
	reason := sanitize(h.Get(HeaderReason), true)
	if reason == "" {
		reason = "unknown"
	}
	switch {
	case code == 503 && outcome == Rejected:
		return ClassRejected + ":" + reason
	case code == 504 && outcome == Timeout:
		return ClassTimeout + ":dependency"
	case code == 502 && outcome == Upstream:
		return ClassUpstream + ":" + reason
	}
	return ClassOther + ":status-" + strconv.Itoa(code)
}

func classifyTransport(msg string) string {
	low := strings.ToLower(msg)
	switch {
	case msg == "":
		return ClassOther + ":no-response"
	case strings.Contains(low, "client.timeout"), strings.Contains(low, "deadline exceeded"),
		strings.Contains(low, "timeout"):
		return ClassTimeout + ":client"
	case strings.Contains(low, "connection refused"):
		return ClassConnection + ":refused"
	case strings.Contains(low, "connection reset"):
		return ClassConnection + ":reset"
	case strings.Contains(low, "eof"):
		return ClassConnection + ":eof"
	}
	// Go's errors read "op url: op addr: detail"; the last segment is the detail and the earlier
	// ones carry addresses.
	last := msg
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		last = msg[i+2:]
	}
	if d := sanitize(last, false); d != "" {
		return ClassOther + ":" + d
	}
	return ClassOther + ":transport"
}

// maxDetail bounds the length of a class detail.
const maxDetail = 40

// sanitize lowercases s and keeps letters (and digits when digits is true), turning every other
// run of characters into one '-', trimmed and cut to maxDetail.
func sanitize(s string, digits bool) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		ok := (c >= 'a' && c <= 'z') || (digits && c >= '0' && c <= '9')
		switch {
		case ok:
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
		default:
			dash = true
		}
		if b.Len() >= maxDetail {
			break
		}
	}
	out := b.String()
	if len(out) > maxDetail {
		out = strings.TrimRight(out[:maxDetail], "-")
	}
	return out
}
