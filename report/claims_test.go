package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
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
func judged(t *testing.T, w world, claims string) (*model.Summary, map[string]model.Claim) {
	t.Helper()
	dir := w.write(t, t.TempDir())
	writeClaims(t, dir, claimsScenario+claims)
	rundirtest.Seal(t, dir)
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Verdict.Note != "" {
		t.Fatalf("claims note: %s", s.Verdict.Note)
	}
	byID := map[string]model.Claim{}
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
		// Endpoint metrics against a number. The shared /b fails 45% of slow-a (success 0.55 of
		// 200 requests), the same in every second: its interval is still the binomial's (Wilson),
		// never a point, and only a declared number is exact.
		{name: "rate below a number holds", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.7\n", want: model.VerdictHolds, left: f(0.55), right: f(0.7),
			evidence: "success_rate of /b in shared/slow-a = 0.55 [0.481, 0.617]; left - right = -0.15 [-0.219, -0.083], needs < 0"},
		{name: "a rate's binomial interval leaves 0.6 undecided", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.6\n", want: model.VerdictInconclusive, left: f(0.55)},
		{name: "the same figure against a stricter number does not hold", measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 0.4\n", want: model.VerdictDoesNotHold, left: f(0.55), right: f(0.4)},
		// Against another measure, scaled: split /b p90 21 ms vs 1.5 x its baseline 20 ms = 30.
		{name: "than with factor", measure: "{metric: p90_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<=\"\n    than: {metric: p90_ms, configuration: split, phase: baseline, endpoint: /b}\n    factor: 1.5\n",
			want: model.VerdictHolds, left: f(21), right: f(30),
			evidence: "1.5 x p90_ms of /b in split/baseline = 30 [30, 30]"},
		{name: "than with plus", measure: "{metric: p90_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \">\"\n    than: {metric: p90_ms, configuration: split, phase: baseline, endpoint: /b}\n    plus: 0.5\n",
			want: model.VerdictHolds, left: f(21), right: f(20.5)},
		// A p99 of 200 requests: the slowest of 200 bounds a p99 only with 87% confidence, so the
		// figure has no upper end and no claim about it can be decided.
		{name: "a p99 of 200 requests has no upper end", measure: "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<=\"\n    value: 1000\n", want: model.VerdictInconclusive, left: f(21),
			evidence: "p99_ms of /b in split/slow-a = 21 [21, ∞]"},
		// Times: shared /b fails every ~2.2 requests from the phase start at 20/s; the first
		// failure is the third request, 0.1 s in, and it is a rejection. Send times are exact.
		{name: "first rejection within a tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.05\n", want: model.VerdictHolds, left: f(0.1), right: f(0.15)},
		{name: "outside the tolerance", measure: "{metric: first_rejection_s, configuration: shared, phase: slow-a, endpoint: /b}",
			rest: "    op: within\n    value: 0.15\n    tolerance: 0.04\n", want: model.VerdictDoesNotHold, left: f(0.1)},
		{name: "no rejection at all is not measurable", measure: "{metric: first_rejection_s, configuration: split, phase: slow-a, endpoint: /b}",
			rest: "    op: \"<\"\n    value: 1\n", want: model.VerdictNotMeasurable, evidence: "no request was rejected in split"},
		// resources: pool:shared full from 10.5 s, breaker:A open from 12 s, calls:A 10 until then,
		// sampled every 100 ms (a sampled time is known to within that period).
		{name: "pool full before the breaker opened", measure: "{metric: first_saturated_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: \"<\"\n    than: {metric: first_open_s, configuration: shared, phase: slow-a, resource: breaker:A}\n",
			want: model.VerdictHolds, left: f(0.5), right: f(2)},
		{name: "slots held until the breaker opened", measure: "{metric: mean_in_use, configuration: shared, phase: slow-a, resource: calls:A, until: breaker:A}",
			rest: "    op: \">=\"\n    value: 10\n", want: model.VerdictHolds, left: f(10)},
		// Figures read from 100 ms point samples decide nothing finer than a sample period.
		{name: "how long the pool was full before the breaker opened", measure: "{metric: saturated_s, configuration: shared, phase: slow-a, resource: pool:shared, until: breaker:A}",
			rest: "    op: within\n    value: 1.5\n    tolerance: 0.1\n", want: model.VerdictHolds, left: f(1.5)},
		{name: "a duration from samples is not known to better than a sample period", measure: "{metric: saturated_s, configuration: shared, phase: slow-a, resource: pool:shared, until: breaker:A}",
			rest: "    op: within\n    value: 1.5\n    tolerance: 0.05\n", want: model.VerdictInconclusive, left: f(1.5)},
		{name: "share of the whole phase at capacity", measure: "{metric: saturated_share, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 0.95\n    tolerance: 0.01\n", want: model.VerdictHolds, left: f(0.95)},
		{name: "a sampled time within one sample period", measure: "{metric: first_rejected_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 1\n    tolerance: 0.1\n", want: model.VerdictHolds, left: f(1)},
		{name: "a sampled time is not known more exactly than its period", measure: "{metric: first_rejected_s, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 1\n    tolerance: 0\n", want: model.VerdictInconclusive, left: f(1)},
		{name: "rejections counted within the phase only", measure: "{metric: rejected, configuration: shared, phase: slow-a, resource: pool:shared}",
			rest: "    op: within\n    value: 19\n    tolerance: 0\n", want: model.VerdictHolds, left: f(19)},
		{name: "a resource without capacity cannot saturate", measure: "{metric: saturated_share, configuration: shared, phase: slow-a, resource: calls:A}",
			rest: "    op: \">\"\n    value: 0\n", want: model.VerdictNotMeasurable, evidence: "calls:A has no capacity"},
		{name: "a breaker that never opened", measure: "{metric: first_open_s, configuration: shared, phase: baseline, resource: breaker:A}",
			rest: "    op: \">\"\n    value: 0\n", want: model.VerdictNotMeasurable, evidence: "breaker:A never reached capacity (max 0 of 1)"},
		{name: "no samples in a configuration that recorded none", measure: "{metric: max_in_use, configuration: split, phase: slow-a, resource: pool:A}",
			rest: "    op: \">\"\n    value: 0\n", want: model.VerdictNotMeasurable, evidence: "no resource samples were recorded in split"},
		{name: "until never reached: whole phase, and said so", measure: "{metric: max_in_use, configuration: shared, phase: baseline, resource: pool:shared, until: breaker:A}",
			rest: "    op: \"<\"\n    value: 10\n", want: model.VerdictHolds, left: f(2),
			evidence: "breaker:A never reached capacity in shared/baseline, so the window is the whole phase"},
		// Comparisons between configurations and preconditions.
		// One repetition of each configuration shows no variation between runs: however clear
		// the difference, a comparison of configurations stays inconclusive without a noise
		// floor (TestNoiseFloor declares one).
		{name: "a difference between configurations on one repetition each", measure: "{metric: success_rate, configuration: split, phase: slow-a, endpoint: /b, minus: {configuration: shared}}",
			rest: "    op: \">\"\n    value: 0.3\n", want: model.VerdictInconclusive, left: f(0.45),
			evidence: "compares configurations (split, shared) on one repetition each"},
		{name: "a ratio between configurations on one repetition each", measure: "{metric: throughput, configuration: split, phase: mild-a, endpoint: /a, over: {configuration: shared}}",
			rest: "    op: \"<\"\n    value: 0.9\n", want: model.VerdictInconclusive, left: f(0.78),
			evidence: "run 2 or more repetitions or declare a noise_floor"},
		{name: "share of failures that are rejections", measure: "{metric: rejected_share, configuration: split, phase: slow-a, endpoint: /a}",
			rest: "    op: \">\"\n    value: 0.5\n", want: model.VerdictHolds, left: f(1)},
		{name: "no failures, no share", measure: "{metric: rejected_share, configuration: split, phase: baseline, endpoint: /a}",
			rest: "    op: \">\"\n    value: 0.5\n", want: model.VerdictNotMeasurable, evidence: "no request failed in split"},
		{name: "time to reach another endpoint's level", measure: "{metric: time_to_level_s, configuration: shared, phase: slow-a, endpoint: /b, level_of: /a}",
			rest: "    op: \"<=\"\n    value: 2.5\n", want: model.VerdictHolds, left: f(1)},
		// A level never reached within the phase: the claim that it is reached does not hold.
		{name: "an endpoint that never reaches the level", measure: "{metric: time_to_level_s, configuration: split, phase: slow-a, endpoint: /b, level_of: /a}",
			rest: "    op: \"<=\"\n    value: 2.5\n", want: model.VerdictDoesNotHold, evidence: "/b never reached half of /a's error rate within split/slow-a"},
		{name: "a precondition that does not hold makes the claim not measurable, naming the figure",
			measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:    "    op: \"<\"\n    value: 0.6\n    require:\n      - {measure: {metric: success_rate, configuration: shared, phase: slow-a, endpoint: /a}, op: \">=\", value: 0.99}\n",
			want:    model.VerdictNotMeasurable, left: f(0.55),
			evidence: "precondition not met (does not hold): success_rate of /a in shared/slow-a = 0.5 [0.431, 0.569]"},
		{name: "a precondition that holds lets the claim be judged",
			measure: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:    "    op: \"<\"\n    value: 0.7\n    require:\n      - {measure: {metric: success_rate, configuration: shared, phase: baseline, endpoint: /b}, op: \">=\", value: 0.95}\n",
			want:    model.VerdictHolds, left: f(0.55)},
		// 200 of 200 served bound the failure rate only below 1.9%: "at least 99%" is not shown.
		{name: "200 of 200 do not show 99%",
			measure: "{metric: success_rate, configuration: shared, phase: baseline, endpoint: /b}",
			rest:    "    op: \">=\"\n    value: 0.99\n", want: model.VerdictInconclusive, left: f(1),
			evidence: "= 1 [0.981, 1]"},
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
			if (c.Holds != nil) != (tt.want == model.VerdictHolds || tt.want == model.VerdictDoesNotHold) {
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

// TestNoiseFloor: with one repetition a comparison of configurations is decided only beyond the
// noise floor the scenario declares: split serves /b 0.45 better than shared in slow-a.
func TestNoiseFloor(t *testing.T) {
	diff := claimYAML("gap", "{metric: success_rate, configuration: split, phase: slow-a, endpoint: /b, minus: {configuration: shared}}", "    op: \">\"\n    value: 0.3\n")
	for _, tt := range []struct {
		floor, want string
	}{
		{"0.02", model.VerdictHolds},       // run-to-run movement of 2 points: 0.45 clears 0.3
		{"0.2", model.VerdictInconclusive}, // of 20 points: it does not
		{"50%", model.VerdictInconclusive}, // relative: half of each side's rate
		{"", model.VerdictInconclusive},    // none declared
	} {
		t.Run("floor "+tt.floor, func(t *testing.T) {
			sc := claimsScenario
			if tt.floor != "" {
				sc = strings.Replace(sc, "claims:\n", "noise_floor: {success_rate: "+tt.floor+"}\nclaims:\n", 1)
			}
			dir := claimsWorld().write(t, t.TempDir())
			writeClaims(t, dir, sc+diff)
			rundirtest.Seal(t, dir)
			s, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c := s.Verdict.Claims[0]; c.Verdict != tt.want {
				t.Errorf("verdict %q, want %q: %s", c.Verdict, tt.want, c.Reason)
			}
		})
	}
}

func f(v float64) *float64 { return &v }

func checkNum(t *testing.T, what string, got *model.Interval, want *float64) {
	t.Helper()
	switch {
	case want == nil:
	case got == nil:
		t.Errorf("%s = null, want %v", what, *want)
	case model.Round3(got.Value) != *want:
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
	if c.Holds != nil || c.Verdict != model.VerdictNotMeasurable || c.Left == nil || c.Left.Value != 0.55 ||
		!strings.HasPrefix(c.Reason, "no verdict: the run is invalid; measured: success_rate of /b in shared/slow-a = 0.55") {
		t.Errorf("claim on an invalid run = %+v, want listed without a verdict, with its numbers", c)
	}
	if s.Verdict.Outcome != model.OutcomeInvalid {
		t.Errorf("outcome %q, want %q", s.Verdict.Outcome, model.OutcomeInvalid)
	}
	if l := output.Lines(s); !strings.Contains(l, "claim x not measurable: x\n  rule: success_rate of /b in shared/slow-a < 0.6 · no verdict: the run is invalid") {
		t.Errorf("Verdicts() = %q, want the claim listed without a verdict", output.Lines(s))
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
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.ClaimsFile), sc.AllClaims()); err != nil {
		t.Fatal(err)
	}
}

// TestClaimsSource: claims come from the run's claims.json; a run that recorded none has none.
// A claims.json that does not decode says why instead of failing the report, and is an
// integrity error, as is one deleted after the run, edited, or added to a run without claims:
// never "no claims", never a pass.
func TestClaimsSource(t *testing.T) {
	one := `[{"id": "P1", "measure": {"metric": "success_rate", "configuration": "shared", "phase": "slow-a", "endpoint": "/b"}, "op": "<", "value": 0.6}]`
	tests := []struct {
		name    string
		claims  string // "" = no claims.json
		after   string // claims.json's content after the run ("-" deleted, "" unchanged)
		want    int
		note    string
		invalid string // in the run's invalid reasons; "" for a valid run
	}{
		{"no claims.json: no claims, no note", "", "", 0, "", ""},
		{"no claims", "[]", "", 0, "", ""},
		{"claims.json that does not decode", "{\"id\": 1", "", 0, "claims not judged: read claims.json: ", "integrity: claims.json: does not decode"},
		{"claims.json deleted after the run", one, "-", 0, "claims not judged: claims.json is missing, yet the run recorded 1 claim(s)",
			"integrity: claims.json: missing, yet the run was judged by 1 claim(s) (P1)"},
		{"claims.json turned to garbage after the run", one, "{{{", 0, "claims not judged: read claims.json: ", "integrity: claims.json: 1 lines, 3 bytes"},
		{"claims.json added after the run", "", one, 1, "", "integrity: claims.json: not written by the runner"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := claimsWorld().write(t, t.TempDir())
			path := filepath.Join(dir, rundir.ClaimsFile)
			if tt.claims != "" {
				if err := os.WriteFile(path, []byte(tt.claims), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rundirtest.Seal(t, dir) // as the runner wrote it
			switch tt.after {
			case "":
			case "-":
				os.Remove(path)
			default:
				os.WriteFile(path, []byte(tt.after), 0o644)
			}
			s, err := Analyze(dir)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			v := s.Verdict
			if len(v.Claims) != tt.want || !strings.HasPrefix(v.Note, tt.note) || (tt.note == "") != (v.Note == "") {
				t.Errorf("claims %d, note %q; want %d claims and a note starting %q", len(v.Claims), v.Note, tt.want, tt.note)
			}
			if why := strings.Join(s.Invalid, "\n"); tt.invalid == "" && !s.Valid || tt.invalid != "" && (s.Valid || !strings.Contains(why, tt.invalid) || v.Outcome != model.OutcomeInvalid) {
				t.Errorf("valid %v, outcome %s, invalid:\n%s\nwant invalid %q", s.Valid, v.Outcome, why, tt.invalid)
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
	claims := claimYAML("shared-starves-b", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.7\n") +
		claimYAML("split-rejects-none", "{metric: first_rejection_s, configuration: split, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 1\n")
	writeClaims(t, dir, claimsScenario+claims)
	if _, err := generate(t, dir, false); err != nil {
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
	if len(sum.Verdict.Claims) != 2 || sum.Verdict.Outcome != model.OutcomeFail || !strings.Contains(sum.Verdict.Method, "Student's t over the repetitions") {
		t.Fatalf("summary.json verdict = %+v, want 2 claims, outcome fail and the method", sum.Verdict)
	}
	first, second := sum.Verdict.Claims[0], sum.Verdict.Claims[1]
	left, _ := first["left"].(map[string]any)
	if first["id"] != "shared-starves-b" || first["holds"] != true || first["verdict"] != model.VerdictHolds || left["value"] != 0.55 ||
		left["lo"] != 0.480756151 || left["hi"] != 0.617359316 || left["basis"] != model.BasisOneRun ||
		first["says"] == "" || first["rule"] == "" || first["reason"] == "" {
		b, _ := json.Marshal(first)
		t.Errorf("summary.json claim = %s", b)
	}
	if v, ok := second["holds"]; !ok || v != nil || second["left"] != nil || second["verdict"] != model.VerdictNotMeasurable {
		b, _ := json.Marshal(second)
		t.Errorf("not measurable claim = %s, want holds and left null", b)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"## Claims\n",
		"**Method.** 95% intervals: a figure is measured in each repetition",
		"| shared-starves-b | shared-starves-b | **holds** | 0.55 [0.481, 0.617] | 0.7 [exact] | -0.15 [-0.219, -0.083] | success_rate of /b in shared/slow-a = 0.55 [0.481, 0.617]",
		"| split-rejects-none | split-rejects-none | not measurable | – | – | – |",
		"- **shared-starves-b**: success_rate of /b in shared/slow-a < 0.7.",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
