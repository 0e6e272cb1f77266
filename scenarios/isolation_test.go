package scenarios

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/claim"
)

var updateDocs = flag.Bool("update", false, "rewrite the generated test list in docs/verdicts.md")

// hypothesisWith returns the built-in hypothesis with its tests: block replaced by tests (and
// claims appended to it).
func hypothesisWith(t *testing.T, tests, claims string) (*Scenario, error) {
	t.Helper()
	raw, err := os.ReadFile("hypothesis.yaml")
	if err != nil {
		t.Fatal(err)
	}
	src := string(raw)
	i := strings.Index(src, "\ntests:")
	if i < 0 {
		t.Fatal("hypothesis.yaml has no tests: block")
	}
	j := strings.Index(src[i+1:], "\n\n")
	if j < 0 {
		j = len(src) - i - 1
	}
	src = src[:i+1] + tests + "\n" + src[i+1+j:] + claims
	return Parse("h.yaml", []byte(src))
}

// The isolation test derives seed 004's claims as hypothesis.yaml wrote them by hand (kept in
// testdata/hypothesis-explicit-claims.yaml): the same ids, figures, operators and bounds, and at
// least the same preconditions. Its new preconditions are the mechanism's (issue 26 item 6).
func TestIsolationDerivesTheHandWrittenClaims(t *testing.T) {
	old, err := Load(filepath.Join("testdata", "hypothesis-explicit-claims.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	derived, err := hypothesisWith(t, "tests: [isolation]", "")
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]claim.Claim{}
	for _, c := range derived.Claims {
		if c.Test == "" {
			continue // the file's own claims (the adaptive layout's)
		}
		if c.Test != "isolation" || !strings.HasPrefix(c.Source, "h.yaml:") {
			t.Errorf("%s: test %q, source %q; want isolation and the line of tests:", c.ID, c.Test, c.Source)
		}
		byID[c.ID] = c
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	for _, want := range old.Claims {
		got, ok := byID[want.ID]
		if !ok {
			t.Errorf("%s: not derived", want.ID)
			continue
		}
		if js(got.Condition) != js(want.Condition) || got.NormalLoad != want.NormalLoad {
			t.Errorf("%s:\n derived %s\n written %s", want.ID, js(got.Condition), js(want.Condition))
		}
		for _, r := range want.Require {
			if !slices.ContainsFunc(got.Require, func(g claim.Condition) bool { return js(g) == js(r) }) {
				t.Errorf("%s: derived preconditions lack %s", want.ID, js(r))
			}
		}
	}
	if len(byID) != len(old.Claims) {
		t.Errorf("derived %d claims, hypothesis.yaml wrote %d", len(byID), len(old.Claims))
	}
	// The mechanism: P1 needs /b's baseline latency healthy and /b's failures blamed on the
	// shared pool; P4 needs A to have failed fast.
	has := func(id, metric, phase string) bool {
		return slices.ContainsFunc(byID[id].Require, func(c claim.Condition) bool {
			return c.Measure.Metric == metric && c.Measure.Phase == phase
		})
	}
	for _, w := range []struct{ id, metric, phase string }{
		{"P1-error-level", "p99_ms", "baseline"},
		{"P1-error-level", "attributed_share", "latency"},
		{"P1-within-5-timeouts", "attributed_share", "latency"},
		{"P4-success-gap", "failure_p99_ms", "errors"},
		{"P4-p99-gap", "error_rate", "errors"},
	} {
		if !has(w.id, w.metric, w.phase) {
			t.Errorf("%s has no precondition on %s in %s", w.id, w.metric, w.phase)
		}
	}
	if r := byID["P1-error-level"].Require; !slices.ContainsFunc(r, func(c claim.Condition) bool { return c.Measure.Resource == "pool:shared" }) {
		t.Errorf("P1's mechanism precondition does not blame pool:shared: %s", js(r))
	}
}

func TestIsolationParameters(t *testing.T) {
	s, err := hypothesisWith(t, "tests:\n  - isolation: {level_factor: 0.6, within_timeouts: 4, cost: 0.1}", "")
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]claim.Claim{}
	for _, c := range s.Claims {
		ids[c.ID] = c
	}
	if c := ids["P1-error-level"]; c.Factor != 0.6 {
		t.Errorf("P1-error-level factor %v, want 0.6", c.Factor)
	}
	if c, ok := ids["P1-within-4-timeouts"]; !ok || *c.Value != 2 {
		t.Errorf("P1-within-4-timeouts = %+v, want a bound of 4 x 500 ms = 2 s", c)
	}
	if c := ids["P3-cost"]; *c.Value != 0.9 {
		t.Errorf("P3-cost bound %v, want 1 - 0.1", *c.Value)
	}
}

// Explicit claims add to a test's; what keeps a test from being derived is said with the line.
func TestIsolationErrors(t *testing.T) {
	// Appended to hypothesis.yaml's claims: block, which ends the file.
	extra := "  - id: mine\n    says: mine\n    measure: {metric: success_rate, configuration: split, phase: latency, endpoint: /b}\n    op: \">\"\n    value: 0.9\n"
	s, err := hypothesisWith(t, "tests: [isolation]", extra)
	if err != nil {
		t.Fatal(err)
	}
	explicit := s.explicitClaims()
	if n := len(s.Claims); n != len(explicit)+11 || explicit[len(explicit)-1].ID != "mine" {
		t.Errorf("%d claims (%d explicit, the last %q), want the explicit ones, mine last, and the 11 derived", n, len(explicit), explicit[len(explicit)-1].ID)
	}
	for _, tt := range []struct{ name, tests, claims, want string }{
		{"unknown test", "tests: [isolatoin]", "", `h.yaml:`},
		{"unknown test names the known", "tests: [isolatoin]", "", `tests[0]: unknown test "isolatoin" (known: isolation)`},
		{"unknown parameter", "tests:\n  - isolation: {level: 0.6}", "", `tests[0].isolation.level: test isolation takes no parameter "level" (parameters: level_factor, within_timeouts`},
		{"a parameter that is not a number", "tests:\n  - isolation: {level_factor: half}", "", `tests[0].isolation.level_factor: expected a number`},
		{"a claim with a derived id", "tests: [isolation]", strings.Replace(extra, "id: mine", "id: P2-b-fast", 1), `duplicate claim "P2-b-fast"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := hypothesisWith(t, tt.tests, tt.claims)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
	t.Run("missing roles", func(t *testing.T) {
		raw, _ := os.ReadFile("hypothesis.yaml")
		src := strings.Replace(string(raw), "  latency_phase: latency\n", "", 1)
		_, err := Parse("h.yaml", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "tests[0]: test isolation needs roles.latency_phase") {
			t.Errorf("error %v, want it to name roles.latency_phase at tests[0]", err)
		}
	})
	t.Run("no error phase: no P4", func(t *testing.T) {
		raw, _ := os.ReadFile("hypothesis.yaml")
		src := strings.Replace(string(raw), "  error_phase: errors\n", "", 1)
		s, err := Parse("h.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(s.Claims, func(c claim.Claim) bool { return strings.HasPrefix(c.ID, "P4") }) {
			t.Error("P4 derived without an error phase")
		}
	})
	t.Run("except leaves claims out", func(t *testing.T) {
		s, err := hypothesisWith(t, "tests:\n  - isolation: {except: [P1-p99-level, P4-p99-gap], level_factor: 0.6}", "")
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(s.Claims, func(c claim.Claim) bool { return c.ID == "P1-p99-level" || c.ID == "P4-p99-gap" }) {
			t.Error("an excepted claim was derived")
		}
		out, _ := s.Marshal()
		if back, err := Parse("back.yaml", out); err != nil || len(back.Claims) != len(s.Claims) {
			t.Errorf("round trip of except: %v, %d claims want %d\n%s", err, len(back.Claims), len(s.Claims), out)
		}
		_, err = hypothesisWith(t, "tests:\n  - isolation: {except: [P9]}", "")
		if err == nil || !strings.Contains(err.Error(), `tests[0].isolation.except: test isolation derives no claim "P9" here`) {
			t.Errorf("error %v, want the unknown id named", err)
		}
	})
}

// A scenario with tests: marshals its tests, not the claims they derive: loading the result
// gives the same claims once.
func TestIsolationMarshalsAsTheTest(t *testing.T) {
	s, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "P1-error-level") || !strings.Contains(string(out), "tests:\n    - isolation") {
		t.Errorf("marshalled scenario writes the derived claims or not the test:\n%s", out)
	}
	back, err := Parse("back.yaml", out)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Claims) != len(s.Claims) {
		t.Errorf("%d claims after the round trip, want %d", len(back.Claims), len(s.Claims))
	}
}

// testsMarkdown writes the registered tests and their parameters as docs/verdicts.md lists them.
func testsMarkdown() string {
	var b strings.Builder
	for _, name := range TestKinds() {
		doc, params, _ := TestParams(name)
		b.WriteString("`" + name + "`: " + doc + ".\n\n| parameter | default | what it sets |\n|---|---|---|\n")
		for _, p := range params {
			b.WriteString("| `" + p.Name + "` | " + strconv.FormatFloat(p.Default, 'f', -1, 64) + " | " + p.Doc + " |\n")
		}
	}
	return b.String()
}

// docs/verdicts.md lists every test's parameters between two markers; `go test ./scenarios
// -run TestTestsDoc -update` rewrites them.
func TestTestsDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "docs", "verdicts.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- tests: generated from the scenarios test registry by `go test ./scenarios -run TestTestsDoc -update` -->\n", "<!-- end of tests -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated test list between %q and %q", path, begin, end)
	}
	want := testsMarkdown()
	if got := doc[i+len(begin) : j]; got != want {
		if *updateDocs {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's test list is stale: run go test ./scenarios -run TestTestsDoc -update", path)
	}
}

// A target that states its layout (target.layout) gives the test its shared resource: P1's
// mechanism precondition blames the layout's pool, not a built-in pool it does not have.
func TestIsolationReadsATargetsLayout(t *testing.T) {
	src := `name: own
timeout: 500ms
dependencies: [{name: A}, {name: B}]
endpoints: [{path: /a, calls: [A]}, {path: /b, calls: [B]}]
load: {rate: 50/s}
configurations:
  - name: shared
    target:
      command: [svc, --layout, shared, --port, "{port}"]
      layout: {mode: shared, pools: [{name: workers, dependencies: [A, B], size: 10}]}
  - name: split
    target:
      command: [svc, --layout, split, --port, "{port}"]
      layout: {mode: split, pools: [{name: A, dependencies: [A], size: 5}, {name: B, dependencies: [B], size: 5}]}
phases:
  - {name: baseline, duration: 10s}
  - {name: latency, duration: 10s, faults: [{dependency: A, type: latency, latency: 0.9x}]}
roles: {shared: shared, split: split, fault_dependency: A, affected: /a, unaffected: /b, baseline: baseline, latency_phase: latency}
tests: [isolation]
`
	s, err := Parse("own.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(s.Claims, func(c claim.Claim) bool { return c.ID == "P1-error-level" })
	if i < 0 || !slices.ContainsFunc(s.Claims[i].Require, func(c claim.Condition) bool { return c.Measure.Resource == "pool:workers" }) {
		t.Fatalf("P1 does not blame the layout's pool:workers: %+v", s.Claims)
	}
	// Without a layout pool holding A and B there is no shared resource to blame.
	_, err = Parse("own.yaml", []byte(strings.Replace(src, "{name: workers, dependencies: [A, B], size: 10}", "{name: workers, dependencies: [A], size: 10}", 1)))
	if err == nil || !strings.Contains(err.Error(), "test isolation needs a pool of configuration \"shared\"") {
		t.Errorf("err = %v, want the missing shared pool named", err)
	}
}
