package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// claimsScenario is the scenario.yaml of the claims world: the hypothesis world's configurations
// and phases, a breaker on A, and the claims under test appended after "claims:".
const claimsScenario = `name: hypothesis
timeout: 500ms
dependencies:
  - {name: A, breaker: {slow_call_threshold: 400ms}}
  - name: B
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load: {rate: 20/s}
configurations:
  - name: shared
    pools: [{name: shared, size: 10, dependencies: [A, B]}]
  - name: split
    pools: [{name: A, size: 5, dependencies: [A]}, {name: B, size: 5, dependencies: [B]}]
phases:
  - {name: baseline, duration: 10s}
  - {name: slow-a, duration: 10s, faults: [{dependency: A, type: latency, latency: 450ms}]}
  - {name: errors-a, duration: 10s, faults: [{dependency: A, type: reset}]}
  - {name: mild-a, duration: 10s, faults: [{dependency: A, type: latency, latency: 300ms}]}
claims:
`

// claimsWorld is the hypothesis world (every prediction holds) with resource samples in the
// shared configuration's slow-a phase (10 s to 20 s): pool:shared full from 10.5 s, A's calls at
// 10 in flight until the breaker on A opens at 12 s (then 0), and the pool rejecting from 11 s.
func claimsWorld() world {
	w := hypothesis()
	step := func(at time.Duration, before, after int) func(time.Duration) int {
		return func(t time.Duration) int {
			if t >= at {
				return after
			}
			return before
		}
	}
	none := func(time.Duration) uint64 { return 0 }
	res := samples("pool:shared", 10, 0, 40*time.Second, func(t time.Duration) int {
		if t >= 10500*ms_ && t < 20*time.Second {
			return 10
		}
		return 2
	}, func(t time.Duration) uint64 {
		if t < 11*time.Second {
			return 0
		}
		return uint64(t / time.Second)
	})
	res = append(res, samples("breaker:A", 1, 0, 40*time.Second, step(12*time.Second, 0, 1), none)...)
	res = append(res, samples("calls:A", 0, 0, 40*time.Second, func(t time.Duration) int {
		if t >= 10*time.Second && t < 12*time.Second {
			return 10
		}
		return 0
	}, none)...)
	w.cfgs[0].resources = res
	return w
}

// judged writes the world with the claims appended to claimsScenario, analyses it and returns
// the claims by id.
func judged(t *testing.T, w world, claims string) (*Summary, map[string]Claim) {
	t.Helper()
	dir := w.write(t, t.TempDir())
	writeClaims(t, dir, claimsScenario+claims)
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict.Note != "" {
		t.Fatalf("claims note: %s", s.Verdict.Note)
	}
	byID := map[string]Claim{}
	for _, c := range s.Verdict.Claims {
		byID[c.ID] = c
	}
	return s, byID
}

func claimYAML(id, measure, rest string) string {
	return "  - id: " + id + "\n    says: " + id + "\n    measure: " + measure + "\n" + rest
}

func TestClaimsVerdicts(t *testing.T) {
	tests := []struct {
		name     string
		measure  string
		rest     string
		want     string   // verdict
		left     *float64 // nil: not checked
		right    *float64
		evidence string // substring
	}{
		// Endpoint metrics against a number. The shared /b fails 45% of slow-a (success 0.55),
		// the same in every second, so its interval is a point.
		{name: "rate below a number holds", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.6\n", want: VerdictHolds, left: f(0.55), right: f(0.6),
			evidence: "success_rate of /b in shared/slow-a = 0.55 [exact]; left - right = -0.05 [exact], needs < 0"},
		{name: "the same figure against a stricter number does not hold", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.5\n", want: VerdictDoesNotHold, left: f(0.55), right: f(0.5)},
		// Against another measure, scaled: split /b p90 21 ms vs 1.5 x its baseline 20 ms = 30.
		{name: "than with factor", measure: "{metric: p90_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<=\"\n    than: {metric: p90_ms, configuration: split, phase: baseline, endpoint: /b}\n    factor: 1.5\n",
			want: VerdictHolds, left: f(21), right: f(30),
			evidence: "1.5 x p90_ms of /b in split/baseline = 30 [exact]"},
		{name: "than with plus", measure: "{metric: p90_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \">\"\n    than: {metric: p90_ms, configuration: split, phase: baseline, endpoint: /b}\n    plus: 0.5\n",
			want: VerdictHolds, left: f(21), right: f(20.5)},
		// A p99 of 200 requests: the slowest of 200 bounds a p99 only with 87% confidence, so the
		// figure has no upper end and no claim about it can be decided.
		{name: "a p99 of 200 requests has no upper end", measure: "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<=\"\n    value: 1000\n", want: VerdictInconclusive, left: f(21),
			evidence: "p99_ms of /b in split/slow-a = 21 [21, ∞]"},
		// Times: shared /b fails every ~2.2 requests from the phase start at 20/s; the first
		// failure is the third request, 0.1 s in, and it is a rejection. Send times are exact.
		{name: "first rejection within a tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.05\n", want: VerdictHolds, left: f(0.1), right: f(0.15)},
		{name: "outside the tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.04\n", want: VerdictDoesNotHold, left: f(0.1)},
		{name: "no rejection at all is not measurable", measure: "{metric: first_rejection_s, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 1\n", want: VerdictNotMeasurable, evidence: "no request was rejected in split"},
		// Resources: pool:shared full from 10.5 s, breaker:A open from 12 s, calls:A 10 until then,
		// sampled every 100 ms (a sampled time is known to within that period).
		{name: "pool full before the breaker opened", measure: "{metric: first_saturated_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: \"<\"\n    than: {metric: first_open_s, configuration: shared, phase: slow-a, resource: breaker:A}\n",
			want: VerdictHolds, left: f(0.5), right: f(2)},
		{name: "slots held until the breaker opened", measure: "{metric: mean_in_use, configuration: shared, phase: slow-a, resource: calls:A, until: breaker:A}",
			rest: "    op: \">=\"\n    value: 10\n", want: VerdictHolds, left: f(10)},
		{name: "how long the pool was full before the breaker opened", measure: "{metric: saturated_s, configuration: shared, phase: slow-a, resource: pool:shared, until: breaker:A}",
			rest: "    op: within\n    value: 1.5\n    tolerance: 0\n", want: VerdictHolds, left: f(1.5)},
		{name: "share of the whole phase at capacity", measure: "{metric: saturated_share, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 0.95\n    tolerance: 0\n", want: VerdictHolds, left: f(0.95)},
		{name: "a sampled time within one sample period", measure: "{metric: first_rejected_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 1\n    tolerance: 0.1\n", want: VerdictHolds, left: f(1)},
		{name: "a sampled time is not known more exactly than its period", measure: "{metric: first_rejected_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 1\n    tolerance: 0\n", want: VerdictInconclusive, left: f(1)},
		{name: "rejections counted within the phase only", measure: "{metric: rejected, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 19\n    tolerance: 0\n", want: VerdictHolds, left: f(19)},
		{name: "a resource without capacity cannot saturate", measure: "{metric: saturated_share, configuration: shared, phase: slow-a, resource: calls:A}",
			rest: "    op: \">\"\n    value: 0\n", want: VerdictNotMeasurable, evidence: "calls:A has no capacity"},
		{name: "a breaker that never opened", measure: "{metric: first_open_s, configuration: shared, phase: baseline, resource: breaker:A}",
			rest: "    op: \">\"\n    value: 0\n", want: VerdictNotMeasurable, evidence: "breaker:A never reached capacity (max 0 of 1)"},
		{name: "no samples in a configuration that recorded none", measure: "{metric: max_in_use, configuration: split, phase: slow-a, resource: pool:A}",
			rest: "    op: \">\"\n    value: 0\n", want: VerdictNotMeasurable, evidence: "no resource samples were recorded in split"},
		{name: "until never reached: whole phase, and said so", measure: "{metric: max_in_use, configuration: shared, phase: baseline, resource: pool:shared, until: breaker:A}",
			rest: "    op: \"<\"\n    value: 10\n", want: VerdictHolds, left: f(2),
			evidence: "breaker:A never reached capacity in shared/baseline, so the window is the whole phase"},
		// Comparisons between configurations and preconditions.
		{name: "a difference between configurations", measure: "{metric: success_rate, configuration: split, phase: slow-a, endpoint: /b, minus: {configuration: shared}}",
			rest: "    op: \">\"\n    value: 0.4\n", want: VerdictHolds, left: f(0.45)},
		{name: "a ratio between configurations", measure: "{metric: throughput, configuration: split, phase: mild-a, endpoint: /a, over: {configuration: shared}}",
			rest: "    op: \"<\"\n    value: 0.8\n", want: VerdictHolds, left: f(0.78)},
		{name: "share of failures that are rejections", measure: "{metric: rejected_share, configuration: split, phase: slow-a, endpoint: /a}",
			rest: "    op: \">\"\n    value: 0.5\n", want: VerdictHolds, left: f(1)},
		{name: "no failures, no share", measure: "{metric: rejected_share, configuration: split, phase: baseline, endpoint: /a}",
			rest: "    op: \">\"\n    value: 0.5\n", want: VerdictNotMeasurable, evidence: "no request failed in split"},
		{name: "time to reach another endpoint's level", measure: "{metric: time_to_level_s, configuration: shared, phase: slow-a, endpoint: /b, level_of: /a}",
			rest: "    op: \"<=\"\n    value: 2.5\n", want: VerdictHolds, left: f(1)},
		{name: "an endpoint that never reaches the level", measure: "{metric: time_to_level_s, configuration: split, phase: slow-a, endpoint: /b, level_of: /a}",
			rest: "    op: \"<=\"\n    value: 2.5\n", want: VerdictNotMeasurable, evidence: "never reached half of /a's"},
		{name: "a precondition that does not hold makes the claim not measurable, naming the figure",
			measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:    "    op: \"<\"\n    value: 0.6\n    require:\n      - {measure: {metric: success_rate, configuration: shared, phase: slow-a, endpoint: /a}, op: \">=\", value: 0.99}\n",
			want:    VerdictNotMeasurable, left: f(0.55),
			evidence: "precondition not met (does not hold): success_rate of /a in shared/slow-a = 0.5 [exact]"},
		{name: "a precondition that holds lets the claim be judged",
			measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:    "    op: \"<\"\n    value: 0.6\n    require:\n      - {measure: {metric: success_rate, configuration: shared, phase: baseline, endpoint: /b}, op: \">=\", value: 0.99}\n",
			want:    VerdictHolds, left: f(0.55)},
	}
	var yaml strings.Builder
	for i, tt := range tests {
		yaml.WriteString(claimYAML(fmt.Sprintf("c%d", i), tt.measure, tt.rest))
	}
	_, got := judged(t, claimsWorld(), yaml.String())
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := got[fmt.Sprintf("c%d", i)]
			if !ok {
				t.Fatal("claim missing from the summary")
			}
			if c.Verdict != tt.want {
				t.Errorf("verdict %q, want %q (reason: %s)", c.Verdict, tt.want, c.Reason)
			}
			if (c.Holds != nil) != (tt.want == VerdictHolds || tt.want == VerdictDoesNotHold) {
				t.Errorf("holds = %v with verdict %q", c.Holds, c.Verdict)
			}
			checkNum(t, "left", c.Left, tt.left)
			checkNum(t, "right", c.Right, tt.right)
			if !strings.Contains(c.Reason, tt.evidence) {
				t.Errorf("reason %q, want it to contain %q", c.Reason, tt.evidence)
			}
		})
	}
}

func f(v float64) *float64 { return &v }

func checkNum(t *testing.T, what string, got *Interval, want *float64) {
	t.Helper()
	switch {
	case want == nil:
	case got == nil:
		t.Errorf("%s = null, want %v", what, *want)
	case round3(got.Value) != *want:
		t.Errorf("%s = %v, want %v", what, got.Value, *want)
	}
}

// TestClaimsInvalidRun: an invalid run lists its claims without verdicts, but still shows what
// was measured.
func TestClaimsInvalidRun(t *testing.T) {
	w := claimsWorld()
	w.cfgs[1].valid, w.cfgs[1].invalid = false, []string{"/a: send lag p99 2ms exceeds the 1ms limit"}
	s, got := judged(t, w, claimYAML("x", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n"))
	c := got["x"]
	if c.Holds != nil || c.Verdict != VerdictNotMeasurable || c.Left == nil || c.Left.Value != 0.55 ||
		!strings.HasPrefix(c.Reason, "no verdict: the run is invalid; measured: success_rate of /b in shared/slow-a = 0.55") {
		t.Errorf("claim on an invalid run = %+v, want listed without a verdict, with its numbers", c)
	}
	if s.Verdict.Outcome != OutcomeInvalid {
		t.Errorf("outcome %q, want %q", s.Verdict.Outcome, OutcomeInvalid)
	}
	if !strings.Contains(s.Verdicts(), "claim x not measurable: no verdict: the run is invalid") {
		t.Errorf("Verdicts() = %q, want the claim listed without a verdict", s.Verdicts())
	}
}

// writeClaims records the claims of a scenario file's text in dir as the runner does
// (claims.json), after loading them with the scenario loader.
func writeClaims(t *testing.T, dir, scenario string) {
	t.Helper()
	sc, err := scenarios.Parse("test.yaml", []byte(scenario))
	if err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.ClaimsFile), sc.Claims); err != nil {
		t.Fatal(err)
	}
}

// TestClaimsSource: claims come from the run's claims.json; a run without one has none, and
// one that does not decode says why instead of failing the report.
func TestClaimsSource(t *testing.T) {
	tests := []struct {
		name   string
		claims string // "" = no claims.json
		want   int
		note   string
	}{
		{"no claims.json: no claims, no note", "", 0, ""},
		{"no claims", "[]", 0, ""},
		{"claims.json that does not decode", "{\"id\": 1", 0, "claims not judged: read claims.json: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := claimsWorld().write(t, t.TempDir())
			if tt.claims != "" {
				if err := os.WriteFile(filepath.Join(dir, rundir.ClaimsFile), []byte(tt.claims), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Analyze(dir)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			v := s.Verdict
			if len(v.Claims) != tt.want || !strings.HasPrefix(v.Note, tt.note) || (tt.note == "") != (v.Note == "") {
				t.Errorf("claims %d, note %q; want %d claims and a note starting %q", len(v.Claims), v.Note, tt.want, tt.note)
			}
			if v.Claims == nil {
				t.Error("Claims is nil: summary.json would say null instead of []")
			}
		})
	}
}

// TestClaimsOutputs: the claims reach summary.json (id, says, holds, evidence, left, right) and
// report.md (a Claims table with the numbers).
func TestClaimsOutputs(t *testing.T) {
	w := claimsWorld()
	dir := w.write(t, t.TempDir())
	claims := claimYAML("shared-starves-b", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n") +
		claimYAML("split-rejects-none", "{metric: first_rejection_s, configuration: split, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 1\n")
	writeClaims(t, dir, claimsScenario+claims)
	if _, err := generate(dir, DefaultBucket, false); err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Verdict struct {
			Outcome string           `json:"outcome"`
			Method  string           `json:"method"`
			Claims  []map[string]any `json:"claims"`
		} `json:"verdict"`
	}
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.SummaryFile), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Verdict.Claims) != 2 || sum.Verdict.Outcome != OutcomeFail || !strings.Contains(sum.Verdict.Method, "block bootstrap") {
		t.Fatalf("summary.json verdict = %+v, want 2 claims, outcome fail and the method", sum.Verdict)
	}
	first, second := sum.Verdict.Claims[0], sum.Verdict.Claims[1]
	left, _ := first["left"].(map[string]any)
	if first["id"] != "shared-starves-b" || first["holds"] != true || first["verdict"] != VerdictHolds || left["value"] != 0.55 ||
		left["lo"] != 0.55 || left["hi"] != 0.55 || first["says"] == "" || first["rule"] == "" || first["reason"] == "" {
		b, _ := json.Marshal(first)
		t.Errorf("summary.json claim = %s", b)
	}
	if v, ok := second["holds"]; !ok || v != nil || second["left"] != nil || second["verdict"] != VerdictNotMeasurable {
		b, _ := json.Marshal(second)
		t.Errorf("not measurable claim = %s, want holds and left null", b)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Claims\n",
		"**Method.** 95% intervals from a seeded block bootstrap",
		"| shared-starves-b | shared-starves-b | **holds** | 0.55 [exact] | 0.6 [exact] | -0.05 [exact] | success_rate of /b in shared/slow-a = 0.55 [exact]",
		"| split-rejects-none | split-rejects-none | not measurable | – | – | – |",
		"- **shared-starves-b**: success_rate of /b in shared/slow-a < 0.6.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
