package outcome

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// Mapping classifies the responses of a target that does not speak the outcome contract (a
// service that is not ours sends no X-Bulkhead-* headers): by status code, optionally by one
// response header, else by defaults. The scenario loader embeds it as a configuration's
// `outcomes:`; the zero Mapping is valid and applies the defaults only.
//
// For one response, the first rule that applies wins:
//
//  1. a transport error (code 0): as Classify (timeout:client, connection:refused, ...);
//  2. the response carries X-Bulkhead-Outcome: the built-in contract (Classify), so the built-in
//     service run as an external target keeps its detailed classes;
//  3. Header is set, the response carries it and Values maps its value: that class;
//  4. Statuses maps the code: that class;
//  5. 2xx: ok;
//  6. the defaults: 503 rejected:status-503, 504 timeout:dependency, 429 rejected:status-429,
//     other 5xx upstream:status-NNN, anything else other:status-NNN.
//
// Classes are "<type>" or "<type>:<detail>" with a type of ClassTypes; Validate checks them.
type Mapping struct {
	// Statuses maps a status code to a class, e.g. 503: rejected:full, 500: upstream:crash.
	Statuses map[int]string `yaml:"statuses,omitempty" json:"statuses,omitempty"`
	// Header names a response header whose value picks the class through Values (e.g.
	// "X-Limit-Reason" with "concurrency": "rejected:full"). Unset, no header is read.
	Header string `yaml:"header,omitempty" json:"header,omitempty"`
	// Values maps Header's value (compared case-insensitively) to a class.
	Values map[string]string `yaml:"values,omitempty" json:"values,omitempty"`
	// Blame names, per class, the resource of the target that a failure of that class is
	// charged to, as the target itself says ("timeout:late-socket": "queue:sockets"); the
	// report's order of evidence takes the target's own word first. {dependency} in a name
	// stands for the dependency of the failing call ("pool:agent-{dependency}"). A class the
	// target names no resource for is still its own word: the report says so.
	Blame map[string]string `yaml:"blame,omitempty" json:"blame,omitempty"`
}

// BlameFor returns the resource m charges a failure of class on a call to dependency dep to,
// and false when m names none.
func (m *Mapping) BlameFor(class, dep string) (string, bool) {
	if m == nil {
		return "", false
	}
	r, ok := m.Blame[class]
	if !ok {
		return "", false
	}
	return strings.ReplaceAll(r, "{dependency}", dep), true
}

// Classifier is the shape of Classify and Mapping.Classify: the class of one response from its
// status code (0 for a transport error), its headers and the transport error's text.
type Classifier func(code int, h http.Header, errText string) string

var (
	_ Classifier = Classify
	_ Classifier = (*Mapping)(nil).Classify
)

// Classify returns the class of one response by the rules of the type comment. A nil *Mapping
// applies the defaults. It never panics, whatever the input.
func (m *Mapping) Classify(code int, h http.Header, errText string) string {
	if code == 0 {
		return classifyTransport(errText)
	}
	if h.Get(HeaderOutcome) != "" {
		return Classify(code, h, errText)
	}
	if m != nil {
		if m.Header != "" && len(m.Values) > 0 {
			if v := h.Get(m.Header); v != "" {
				for val, class := range m.Values {
					if strings.EqualFold(val, v) {
						return class
					}
				}
			}
		}
		if class, ok := m.Statuses[code]; ok {
			return class
		}
	}
	detail := "status-" + strconv.Itoa(code)
	switch {
	case code >= 200 && code < 300:
		return ClassOK
	case code == http.StatusServiceUnavailable, code == http.StatusTooManyRequests:
		return ClassRejected + ":" + detail
	case code == http.StatusGatewayTimeout:
		return ClassTimeout + ":dependency"
	case code >= 500 && code < 600:
		return ClassUpstream + ":" + detail
	}
	return ClassOther + ":" + detail
}

// Validate checks every class of m and every status code, returning one error naming each bad
// field as a path below prefix (e.g. `configurations[0].outcomes.statuses[503]`), or nil.
func (m *Mapping) Validate(prefix string) error {
	if m == nil {
		return nil
	}
	var probs []string
	codes := make([]int, 0, len(m.Statuses))
	for c := range m.Statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		field := fmt.Sprintf("%s.statuses[%d]", prefix, c)
		if c < 100 || c > 599 {
			probs = append(probs, fmt.Sprintf("%s: status %d is not an HTTP status (100..599)", field, c))
		}
		if err := checkClass(m.Statuses[c]); err != nil {
			probs = append(probs, field+": "+err.Error())
		}
	}
	if len(m.Values) > 0 && m.Header == "" {
		probs = append(probs, prefix+".values: set without header: name the response header they are values of")
	}
	vals := make([]string, 0, len(m.Values))
	for v := range m.Values {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	seen := map[string]string{}
	for _, v := range vals {
		if err := checkClass(m.Values[v]); err != nil {
			probs = append(probs, fmt.Sprintf("%s.values[%q]: %v", prefix, v, err))
		}
		if prev, dup := seen[strings.ToLower(v)]; dup {
			probs = append(probs, fmt.Sprintf("%s.values[%q]: same value as %q (values compare case-insensitively)", prefix, v, prev))
		}
		seen[strings.ToLower(v)] = v
	}
	blamed := make([]string, 0, len(m.Blame))
	for c := range m.Blame {
		blamed = append(blamed, c)
	}
	sort.Strings(blamed)
	for _, c := range blamed {
		field := fmt.Sprintf("%s.blame[%q]", prefix, c)
		if err := checkClass(c); err != nil {
			probs = append(probs, field+": "+err.Error())
		} else if ClassType(c) == ClassOK {
			probs = append(probs, field+": a success is charged to nothing")
		}
		if err := checkResourceName(strings.ReplaceAll(m.Blame[c], "{dependency}", "x")); err != nil {
			probs = append(probs, field+": "+err.Error())
		}
	}
	if len(probs) > 0 {
		return fmt.Errorf("%s", strings.Join(probs, "; "))
	}
	return nil
}

// checkResourceName returns an error unless name is "<kind>:<what>" of a known kind or one of
// the plain resource names.
func checkResourceName(name string) error {
	kind, what := SplitResource(name)
	if what == "" {
		for _, p := range PlainResources {
			if p == name {
				return nil
			}
		}
		return fmt.Errorf("resource %q is neither <kind>:<name> nor one of %s", name, strings.Join(PlainResources, ", "))
	}
	for _, k := range ResourceKinds {
		if k == kind {
			return nil
		}
	}
	return fmt.Errorf("resource %q: kind %q is not one of %s", name, kind, strings.Join(ResourceKinds, ", "))
}

// checkClass returns an error unless class is "<type>" or "<type>:<detail>" with a known type and
// a detail that sanitize keeps as it is.
func checkClass(class string) error {
	t, d, hasDetail := strings.Cut(class, ":")
	known := false
	for _, k := range ClassTypes {
		known = known || k == t
	}
	switch {
	case !known:
		return fmt.Errorf("class %q: type %q is not one of %s", class, t, strings.Join(ClassTypes, ", "))
	case hasDetail && (d == "" || sanitize(d, true) != d):
		return fmt.Errorf("class %q: detail %q must be lowercase letters, digits and single dashes, at most %d characters", class, d, maxDetail)
	case t == ClassOK && hasDetail:
		return fmt.Errorf("class %q: ok takes no detail", class)
	}
	return nil
}

// String describes m for a report: the rules m adds, in a stable order (header values, then
// status codes), followed by "then defaults (...)"; a nil or empty m is the defaults alone.
func (m *Mapping) String() string {
	const defaults = "defaults (503/429 rejected, 504 timeout, other 5xx upstream, transport errors connection or timeout:client)"
	if m == nil || (len(m.Statuses) == 0 && (m.Header == "" || len(m.Values) == 0)) {
		return defaults
	}
	var parts []string
	if m.Header != "" && len(m.Values) > 0 {
		vals := make([]string, 0, len(m.Values))
		for v, c := range m.Values {
			vals = append(vals, v+" "+c)
		}
		sort.Strings(vals)
		parts = append(parts, "header "+m.Header+": "+strings.Join(vals, ", "))
	}
	codes := make([]int, 0, len(m.Statuses))
	for c := range m.Statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	for _, c := range codes {
		parts = append(parts, strconv.Itoa(c)+" "+m.Statuses[c])
	}
	return strings.Join(parts, "; ") + "; then " + defaults
}
