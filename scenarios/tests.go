package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"go.yaml.in/yaml/v3"
)

// A test is a named, parameterised set of claims a scenario asks for in its `tests:` block and
// the loader derives from its `roles:` (seed 004's test is "isolation"): the scenario states what
// its parts are, the test states what must hold of them. Each kind is one file registering itself
// (isolation.go), as fault types do; its derived claims join the scenario's own (explicit
// `claims:` add to them) and are checked, recorded and judged like them.
//
//	tests: [isolation]                         # every parameter at its default
//	tests:
//	  - isolation: {level_factor: 0.6, within_timeouts: 4}
//	  - isolation: {except: [P1-p99-level]}    # a claim the target's design makes false

// Test is one entry of a scenario's tests: block: a registered test and its parameters (only
// those written; the rest take the test's defaults).
type Test struct {
	Name   string             `yaml:"name"`
	Params map[string]float64 `yaml:"params,omitempty"`
	// Except lists claims of the test (by id) to leave out: what the system under test is built
	// not to do (a limit without a queue does not delay the requests it starves).
	Except []string `yaml:"except,omitempty"`
}

// MarshalYAML writes t as the loader reads it: its name alone, or {name: {params, except}}.
func (t Test) MarshalYAML() (any, error) {
	if len(t.Params) == 0 && len(t.Except) == 0 {
		return t.Name, nil
	}
	m := map[string]any{}
	for k, v := range t.Params {
		m[k] = v
	}
	if len(t.Except) > 0 {
		m["except"] = t.Except
	}
	return map[string]any{t.Name: m}, nil
}

// TestParam documents one parameter of a test.
type TestParam struct {
	Name    string
	Default float64
	Doc     string
}

// testKind is a registered test.
type testKind struct {
	name string
	doc  string
	// params are its parameters with their defaults.
	params []TestParam
	// derive returns the claims the test asks of s with parameter values p (every parameter
	// present), adding to prob, at path, what in s keeps it from being derived.
	derive func(s *Scenario, p map[string]float64, prob *problems, path string) []claim.Claim
}

var testKinds = map[string]testKind{}

func registerTest(k testKind) { testKinds[k.name] = k }

// TestKinds returns the registered tests' names, sorted.
func TestKinds() []string { return slices.Sorted(maps.Keys(testKinds)) }

// TestParams returns a registered test's documentation and parameters (what docs/verdicts.md
// lists), and whether there is such a test.
func TestParams(name string) (string, []TestParam, bool) {
	k, ok := testKinds[name]
	return k.doc, k.params, ok
}

// test decodes one entry of the tests: block: a test's name, or {name: {param: number}} (and
// except: a list of its claims to leave out).
func (d *decoder) test(n *yaml.Node, p string, t *Test) {
	n = deref(n)
	switch n.Kind {
	case yaml.ScalarNode:
		t.Name = n.Value
	case yaml.MappingNode:
		if len(n.Content) != 2 {
			d.addAt(n.Line, p, "a test is its name, or {name: {parameters}}, got %d keys", len(n.Content)/2)
			return
		}
		t.Name = n.Content[0].Value
		params := deref(n.Content[1])
		pp := join(p, t.Name)
		if isNull(params) {
			return
		}
		if params.Kind != yaml.MappingNode {
			d.addAt(params.Line, pp, "expected a mapping of parameter to number, got %s", describe(params))
			return
		}
		t.Params = map[string]float64{}
		for j := 0; j+1 < len(params.Content); j += 2 {
			k, v := deref(params.Content[j]), params.Content[j+1]
			fp := join(pp, k.Value)
			d.lines[fp] = k.Line
			if k.Value == "except" {
				d.valueOf(reflect.ValueOf(&t.Except).Elem(), fieldOpts{})(v, fp)
				continue
			}
			var x float64
			before := len(d.list)
			d.floatField(&x)(v, fp)
			if len(d.list) == before {
				t.Params[k.Value] = x
			}
		}
	default:
		d.addAt(n.Line, p, "a test is its name, or {name: {parameters}}, got %s", describe(n))
	}
}

// deriveTests appends to s.Claims the claims of every test in s.Tests, each marked with its
// test's name and written where the test is (Source), and reports a test that is unknown, a
// parameter it does not take, or what in the scenario keeps it from being derived.
func (s *Scenario) deriveTests(p *problems) {
	for i, t := range s.Tests {
		path := index("tests", i)
		k, ok := testKinds[t.Name]
		if !ok {
			p.add(path, "unknown test %q (known: %s)", t.Name, strings.Join(TestKinds(), ", "))
			continue
		}
		values := map[string]float64{}
		var names []string
		for _, pr := range k.params {
			values[pr.Name] = pr.Default
			names = append(names, pr.Name)
		}
		bad := false
		for _, name := range slices.Sorted(maps.Keys(t.Params)) {
			if _, ok := values[name]; !ok {
				p.add(join(join(path, t.Name), name), "test %s takes no parameter %q (parameters: %s)", t.Name, name, strings.Join(names, ", "))
				bad = true
				continue
			}
			values[name] = t.Params[name]
		}
		if bad {
			continue
		}
		source := ""
		if s.Path != "" {
			source = fmt.Sprintf("%s:%d", s.Path, lineOf(s.lines, path))
		}
		derived := k.derive(s, values, p, path)
		for _, id := range t.Except {
			if !slices.ContainsFunc(derived, func(c claim.Claim) bool { return c.ID == id }) {
				var ids []string
				for _, c := range derived {
					ids = append(ids, c.ID)
				}
				p.add(join(join(path, t.Name), "except"), "test %s derives no claim %q here (it derives: %s)", t.Name, id, strings.Join(ids, ", "))
			}
		}
		for _, c := range derived {
			if slices.Contains(t.Except, c.ID) {
				continue
			}
			c.Test, c.Source = t.Name, source
			s.Claims = append(s.Claims, c)
		}
	}
}

// MarshalYAML writes the scenario with the claims a test derives left to the test (written once,
// in tests:), so that yaml.Marshal of a loaded scenario loads back to the same claims.
func (s Scenario) MarshalYAML() (any, error) {
	type plain Scenario // its fields and tags, not this method
	out := plain(s)
	out.Claims = s.explicitClaims()
	return out, nil
}

// explicitClaims returns the claims written in the claims: block (not derived from a test).
func (s *Scenario) explicitClaims() []claim.Claim {
	var out []claim.Claim
	for _, c := range s.Claims {
		if c.Test == "" {
			out = append(out, c)
		}
	}
	return out
}
