package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/claim"
)

// claimsBase is a scenario with two configurations, a breaker on B and a queue on the shared
// pool, so that every kind of resource name has something to refer to. The claims of each case
// are appended at line 23.
const claimsBase = `name: c
timeout: 1s
dependencies:
  - name: A
  - {name: B, breaker: {slow_call_threshold: 500ms}}
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load:
  rate: 10/s
configurations:
  - {name: shared, mode: shared, size: 4, pools: default}
  - name: capped
    pools:
      - {name: A, size: 2, dependencies: [A]}
      - {name: B, size: 2, dependencies: [B]}
phases:
  - name: baseline
    duration: 1s
  - name: slow-b
    duration: 1s
    faults: [{dependency: B, type: latency, latency: 0.9x}]
claims:
`

func TestClaimsParse(t *testing.T) {
	s, err := Parse("c.yaml", []byte(claimsBase+`
  - id: shared-starves-a
    says: A fails with one shared pool
    measure: {metric: success_rate, configuration: shared, phase: slow-b, endpoint: /a}
    op: "<"
    value: 0.5
  - id: cap-keeps-a
    says: A stays served with B capped
    measure: {metric: success_rate, configuration: capped, phase: slow-b, endpoint: /a}
    op: ">="
    than: {metric: success_rate, configuration: capped, phase: baseline, endpoint: /a}
    factor: 0.98
  - id: queue-full-late
    says: the queue fills one second after the pool
    measure: {metric: first_saturated_s, configuration: shared, phase: slow-b, resource: queue:shared}
    op: within
    than: {metric: first_saturated_s, configuration: shared, phase: slow-b, resource: pool:shared}
    plus: 1.0
    tolerance: 0.1
  - id: b-held-slots
    says: B held slots until its breaker opened
    measure: {metric: max_in_use, configuration: shared, phase: slow-b, resource: calls:B, until: breaker:B}
    op: ">="
    value: 4
`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(s.Claims) != 4 {
		t.Fatalf("got %d claims, want 4", len(s.Claims))
	}
	c := s.Claims[1]
	if c.Op != claim.OpGreaterEq || c.Value != nil || c.Than == nil || c.Than.Phase != "baseline" || c.Factor != 0.98 {
		t.Errorf("cap-keeps-a = %+v (than %+v)", c, c.Than)
	}
	if c := s.Claims[2]; c.Op != claim.OpWithin || c.Plus != 1 || c.Tolerance != 0.1 || c.Measure.Resource != "queue:shared" {
		t.Errorf("queue-full-late = %+v", c)
	}
	if c := s.Claims[3]; c.Measure.Until != "breaker:B" || c.Value == nil || *c.Value != 4 {
		t.Errorf("b-held-slots = %+v", c)
	}
	// Each claim records where it is written (claims.json keeps it for the CI annotations).
	base := strings.Count(claimsBase, "\n")
	for i, line := range []int{base + 2, base + 7, base + 13, base + 20} {
		if want := fmt.Sprintf("c.yaml:%d", line); s.Claims[i].Source != want {
			t.Errorf("claim %s source %q, want %q", s.Claims[i].ID, s.Claims[i].Source, want)
		}
	}
}

func TestClaimsErrors(t *testing.T) {
	// Each case is one claim written at line 24 (its measure at line 27).
	claim := func(measure, rest string) string {
		return "  - id: x\n    says: something\n    op: \"<\"\n    measure: " + measure + "\n" + rest
	}
	ok := "{metric: success_rate, configuration: shared, phase: slow-b, endpoint: /a}"
	tests := []struct {
		name, claims, want string
	}{
		{"no right side", claim(ok, ""), `c.yaml:24: claims[0]: a claim needs a right side: value or than`},
		{"both sides", claim(ok, "    value: 1\n    than: "+ok+"\n"), `c.yaml:29: claims[0].than: a claim takes value or than, not both`},
		{"unknown op", strings.Replace(claim(ok, "    value: 1\n"), `"<"`, "lt", 1), `c.yaml:26: claims[0].op: unknown operator "lt" (known: <, <=, >, >=, within)`},
		{"tolerance without within", claim(ok, "    value: 1\n    tolerance: 0.1\n"), `c.yaml:29: claims[0].tolerance: only op "within" takes a tolerance`},
		{"factor written as zero", claim(ok, "    value: 1\n    factor: 0\n"), `c.yaml:29: claims[0].factor: must be > 0 when set (omit it for 1), got 0`},
		{"value not a number", claim(ok, "    value: half\n"), `c.yaml:28: claims[0].value: expected a number, got "half"`},
		{"unknown field", claim(ok, "    value: 1\n    vlaue: 2\n"), `c.yaml:29: claims[0].vlaue: unknown field "vlaue" (known: id, says, measure, op, value, than, factor, plus, tolerance, require, normal_load)`},
		{"missing measure field", claim("{metric: p99_ms, phase: slow-b, endpoint: /a}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.configuration: missing required field "configuration"`},
		{"unknown metric", claim("{metric: p98_ms, configuration: shared, phase: slow-b, endpoint: /a}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.metric: unknown metric "p98_ms"`},
		{"unknown configuration", claim("{metric: p99_ms, configuration: split, phase: slow-b, endpoint: /a}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.configuration: unknown configuration "split" (known: shared, capped)`},
		{"unknown phase", claim("{metric: p99_ms, configuration: shared, phase: slow, endpoint: /a}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.phase: unknown phase "slow" (known: baseline, slow-b)`},
		{"unknown endpoint", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /c}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.endpoint: unknown endpoint "/c" (known: /a, /b)`},
		{"endpoint metric without endpoint", claim("{metric: p99_ms, configuration: shared, phase: slow-b}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.endpoint: p99_ms is an endpoint metric: name the endpoint`},
		{"resource metric on an endpoint", claim("{metric: max_in_use, configuration: shared, phase: slow-b, endpoint: /a}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.endpoint: max_in_use is a resource metric: name a resource, not an endpoint`},
		{"pool not in the configuration", claim("{metric: max_in_use, configuration: capped, phase: slow-b, resource: pool:shared}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.resource: "pool:shared": configuration "capped" has no pool "shared" (pools: A, B)`},
		{"queue of a pool without one", claim("{metric: max_in_use, configuration: capped, phase: slow-b, resource: queue:A}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.resource: "queue:A": pool "A" of configuration "capped" has no queue`},
		{"breaker on a dependency without one", claim("{metric: first_open_s, configuration: shared, phase: slow-b, resource: breaker:A}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.resource: "breaker:A": dependency "A" declares no breaker`},
		{"first_open_s of something else", claim("{metric: first_open_s, configuration: shared, phase: slow-b, resource: pool:shared}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.metric: first_open_s is a metric of breaker:<...> resources`},
		{"unknown resource kind", claim("{metric: max_in_use, configuration: shared, phase: slow-b, resource: threads:A}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.resource: unknown resource "threads:A"`},
		{"until on an endpoint metric", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a, until: breaker:B}", "    value: 1\n"),
			`c.yaml:27: claims[0].measure.until: p99_ms takes no until`},
		{"units differ without a factor", claim(ok, "    than: {metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a}\n"),
			`c.yaml:28: claims[0].than: compares success_rate with p99_ms: different units; give a factor`},
		{"duplicate id", claim(ok, "    value: 1\n") + claim(ok, "    value: 1\n"), `c.yaml:29: claims[1].id: duplicate claim "x"`},
		{"a difference of different units", claim("{metric: success_rate, configuration: shared, phase: slow-b, endpoint: /a, minus: {metric: p99_ms}}", "    value: 0\n"),
			`claims[0].measure.minus.metric: compares success_rate with p99_ms: different units`},
		{"minus and over together", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a, minus: {phase: baseline}, over: {phase: baseline}}", "    value: 0\n"),
			`claims[0].measure.over: a measure takes minus or over, not both`},
		{"minus naming an unknown phase", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a, minus: {phase: nope}}", "    value: 0\n"),
			`claims[0].measure.minus.phase: unknown phase "nope"`},
		{"a ratio compared with a figure in ms", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a, over: {configuration: capped}}", "    than: {metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a}\n"),
			`claims[0].than: compares p99_ms with p99_ms: different units`},
		{"time to level without level_of", claim("{metric: time_to_level_s, configuration: shared, phase: slow-b, endpoint: /a}", "    value: 1\n"),
			`claims[0].measure.level_of: time_to_level_s needs level_of`},
		{"attributed share without the resource it blames", claim("{metric: attributed_share, configuration: shared, phase: slow-b, endpoint: /b}", "    value: 1\n"),
			`claims[0].measure.resource: attributed_share needs resource:`},
		{"attributed share to a pool the configuration lacks", claim("{metric: attributed_share, configuration: capped, phase: slow-b, endpoint: /b, resource: pool:shared}", "    value: 1\n"),
			`claims[0].measure.resource: "pool:shared": configuration "capped" has no pool "shared"`},
		{"level_of on another metric", claim("{metric: p99_ms, configuration: shared, phase: slow-b, endpoint: /a, level_of: /b}", "    value: 1\n"),
			`claims[0].measure.level_of: p99_ms takes no level_of (only time_to_level_s does)`},
		{"a precondition is checked like a claim", claim(ok, "    value: 1\n    require:\n      - {measure: {metric: p98_ms, configuration: shared, phase: baseline, endpoint: /b}, op: \">\", value: 1}\n"),
			`claims[0].require[0].measure.metric: unknown metric "p98_ms"`},
		{"a normal-load claim on a phase not declared normal load", claim(ok, "    value: 1\n    normal_load: true\n"),
			`claims[0].normal_load: a claim about normal load may only measure phases listed in roles.normal_load (); "slow-b" is not`},
		{"roles naming an unknown configuration", claim(ok, "    value: 1\n") + "roles: {shared: split}\n",
			`roles.shared: unknown configuration "split"`},
		{"a split role on a shared configuration", claim(ok, "    value: 1\n") + "roles: {split: shared}\n",
			`roles.split: configuration "shared" has mode "shared", not split`},
		{"an affected endpoint that does not call the fault dependency", claim(ok, "    value: 1\n") + "roles: {fault_dependency: B, affected: /a}\n",
			`roles.affected: endpoint "/a" does not call B`},
		{"a latency phase without a latency fault on the dependency", claim(ok, "    value: 1\n") + "roles: {fault_dependency: A, latency_phase: slow-b}\n",
			`roles.latency_phase: phase "slow-b" has no latency fault on A`},
		{"a baseline with faults", claim(ok, "    value: 1\n") + "roles: {baseline: slow-b}\n",
			`roles.baseline: phase "slow-b" has faults; a baseline has none`},
		{"a normal-load phase that does not exist", claim(ok, "    value: 1\n") + "roles:\n  normal_load: [baseline, busy]\n",
			`c.yaml:30: roles.normal_load[1]: unknown phase "busy"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(claimsBase+tt.claims))
			if err == nil {
				t.Fatalf("Parse succeeded, want an error containing %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
		})
	}
}

// TestClaimsDoNotBlockServiceConfig: claims naming several configurations must not stop each
// configuration from being translated on its own (the runner validates one at a time).
func TestClaimsDoNotBlockServiceConfig(t *testing.T) {
	s, err := Parse("c.yaml", []byte(claimsBase+`
  - id: capped-b
    says: B never takes more than two slots
    measure: {metric: max_in_use, configuration: capped, phase: slow-b, resource: calls:B}
    op: "<="
    value: 2
`))
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{"A": "http://127.0.0.1:1", "B": "http://127.0.0.1:2"}
	for _, c := range s.Configurations {
		if _, err := s.ServiceConfig(c, urls); err != nil {
			t.Errorf("ServiceConfig(%s): %v", c.Name, err)
		}
	}
}
