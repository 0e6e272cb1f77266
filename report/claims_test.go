package report

import (
	"encoding/json"
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
	if s.ClaimsNote != "" {
		t.Fatalf("claims note: %s", s.ClaimsNote)
	}
	byID := map[string]Claim{}
	for _, c := range s.Claims {
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
		left     *float64 // nil: not checked (or expected null when want is not measurable)
		right    *float64
		evidence string // substring
	}{
		// Endpoint metrics against a number. The shared /b fails 45% of slow-a (success 0.55).
		{name: "rate below a number holds", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.6\n", want: VerdictHolds, left: f(0.55), right: f(0.6),
			evidence: "success_rate of /b in shared/slow-a = 0.55 < 0.6"},
		{name: "the same figure against a stricter number does not hold", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.5\n", want: VerdictDoesNotHold, left: f(0.55), right: f(0.5),
			evidence: "= 0.55 is not < 0.5"},
		// Against another measure, scaled: split /b p99 21 ms vs 1.5 x its baseline 20 ms = 30.
		{name: "than with factor", measure: "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<=\"\n    than: {metric: p99_ms, configuration: split, phase: baseline, endpoint: /b}\n    factor: 1.5\n",
			want: VerdictHolds, left: f(21), right: f(30),
			evidence: "p99_ms of /b in split/slow-a = 21 <= 30 (p99_ms of /b in split/baseline = 20, x 1.5)"},
		{name: "than with plus", measure: "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \">\"\n    than: {metric: p99_ms, configuration: split, phase: baseline, endpoint: /b}\n    plus: 0.5\n",
			want: VerdictHolds, left: f(21), right: f(20.5)},
		// Times: shared /b fails every ~2.2 requests from the phase start at 20/s; the first
		// failure is the third request, 0.1 s in, and it is a rejection.
		{name: "first rejection within a tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.05\n", want: VerdictHolds, left: f(0.1), right: f(0.15),
			evidence: "first_rejection_s of /b in shared/slow-a = 0.1, 0.05 from 0.15 (tolerance 0.05)"},
		{name: "outside the tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.04\n", want: VerdictDoesNotHold, left: f(0.1)},
		{name: "no rejection at all is not measurable", measure: "{metric: first_rejection_s, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 1\n", want: VerdictNotMeasurable, evidence: "no request was rejected in split"},
		// Resources: pool:shared full from 10.5 s, breaker:A open from 12 s, calls:A 10 until then.
		{name: "pool full before the breaker opened", measure: "{metric: first_saturated_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: \"<\"\n    than: {metric: first_open_s, configuration: shared, phase: slow-a, resource: breaker:A}\n",
			want: VerdictHolds, left: f(0.5), right: f(2)},
		{name: "slots held until the breaker opened", measure: "{metric: mean_in_use, configuration: shared, phase: slow-a, resource: calls:A, until: breaker:A}",
			rest: "    op: \">=\"\n    value: 10\n", want: VerdictHolds, left: f(10)},
		{name: "how long the pool was full before the breaker opened", measure: "{metric: saturated_s, configuration: shared, phase: slow-a, resource: pool:shared, until: breaker:A}",
			rest: "    op: within\n    value: 1.5\n    tolerance: 0\n", want: VerdictHolds, left: f(1.5)},
		{name: "share of the whole phase at capacity", measure: "{metric: saturated_share, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 0.95\n    tolerance: 0\n", want: VerdictHolds, left: f(0.95)},
		{name: "first rejection by the pool and how many", measure: "{metric: first_rejected_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 1\n    tolerance: 0\n", want: VerdictHolds, left: f(1)},
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
	}
	var yaml strings.Builder
	for i, tt := range tests {
		yaml.WriteString(claimYAML("c"+string(rune('a'+i)), tt.measure, tt.rest))
	}
	_, got := judged(t, claimsWorld(), yaml.String())
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := got["c"+string(rune('a'+i))]
			if !ok {
				t.Fatal("claim missing from the summary")
			}
			if c.Verdict != tt.want {
				t.Errorf("verdict %q, want %q (evidence: %s)", c.Verdict, tt.want, c.Evidence)
			}
			if (c.Holds == nil) != (tt.want == VerdictNotMeasurable) {
				t.Errorf("holds = %v with verdict %q", c.Holds, c.Verdict)
			}
			if tt.want == VerdictNotMeasurable && c.Left != nil && c.Right != nil {
				t.Errorf("not measurable yet left %v and right %v are both set", *c.Left, *c.Right)
			}
			checkNum(t, "left", c.Left, tt.left)
			checkNum(t, "right", c.Right, tt.right)
			if !strings.Contains(c.Evidence, tt.evidence) {
				t.Errorf("evidence %q, want it to contain %q", c.Evidence, tt.evidence)
			}
		})
	}
}

func f(v float64) *float64 { return &v }

func checkNum(t *testing.T, what string, got, want *float64) {
	t.Helper()
	switch {
	case want == nil:
	case got == nil:
		t.Errorf("%s = null, want %v", what, *want)
	case *got != *want:
		t.Errorf("%s = %v, want %v", what, *got, *want)
	}
}

// TestClaimsInvalidRun: an invalid run lists its claims without verdicts, as it gives no
// verdicts on P1-P4, but still shows what was measured.
func TestClaimsInvalidRun(t *testing.T) {
	w := claimsWorld()
	w.cfgs[1].valid, w.cfgs[1].invalid = false, []string{"/a: send lag p99 2ms exceeds the 1ms limit"}
	s, got := judged(t, w, claimYAML("x", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n"))
	c := got["x"]
	if c.Holds != nil || c.Verdict != VerdictNotMeasurable || c.Left == nil || *c.Left != 0.55 ||
		c.Evidence != "no verdict: the run is invalid; measured: success_rate of /b in shared/slow-a = 0.55 < 0.6" {
		t.Errorf("claim on an invalid run = %+v, want listed without a verdict, with its numbers", c)
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
			if len(s.Claims) != tt.want || !strings.HasPrefix(s.ClaimsNote, tt.note) || (tt.note == "") != (s.ClaimsNote == "") {
				t.Errorf("claims %d, note %q; want %d claims and a note starting %q", len(s.Claims), s.ClaimsNote, tt.want, tt.note)
			}
			if s.Claims == nil {
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
		Claims []map[string]any `json:"claims"`
	}
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.SummaryFile), &sum); err != nil {
		t.Fatal(err)
	}
	if len(sum.Claims) != 2 {
		t.Fatalf("summary.json claims = %v, want 2", sum.Claims)
	}
	first, second := sum.Claims[0], sum.Claims[1]
	if first["id"] != "shared-starves-b" || first["holds"] != true || first["left"] != 0.55 || first["right"] != 0.6 || first["says"] == "" {
		b, _ := json.Marshal(first)
		t.Errorf("summary.json claim = %s", b)
	}
	if v, ok := second["holds"]; !ok || v != nil || second["left"] != nil {
		b, _ := json.Marshal(second)
		t.Errorf("not measurable claim = %s, want holds and left null", b)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Claims\n",
		"| shared-starves-b | shared-starves-b | **holds** | 0.55 | < | 0.6 | success_rate of /b in shared/slow-a = 0.55 < 0.6 |",
		"| split-rejects-none | split-rejects-none | not measurable | – | < | 1 |",
		"- **shared-starves-b**: success_rate of /b in shared/slow-a < 0.6.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
