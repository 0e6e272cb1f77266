package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

// validate --json prints one object on stdout whether or not the files are valid: each
// argument with its figures, or its problems located by file, line and field.
func TestValidateJSON(t *testing.T) {
	bad := writeFile(t, "bad.yaml", badScenario)
	out, err := executeCommand(t, "validate", "--json", "smoke", bad, "no-such-scenario")
	if err == nil || exitCode(t.Context(), err, true) != ExitUsage {
		t.Fatalf("err = %v, want a usage error", err)
	}
	var v validation
	if jerr := json.Unmarshal([]byte(out), &v); jerr != nil {
		t.Fatalf("stdout is not one JSON object: %v\n%s", jerr, out)
	}
	if v.Valid || len(v.Scenarios) != 3 {
		t.Fatalf("= %+v, want invalid with 3 entries", v)
	}
	ok, b, missing := v.Scenarios[0], v.Scenarios[1], v.Scenarios[2]
	if !ok.Valid || ok.Name != "smoke" || ok.Configurations == 0 || ok.Problems != nil {
		t.Errorf("smoke = %+v, want valid with its figures", ok)
	}
	if b.Valid || len(b.Problems) == 0 || !strings.HasSuffix(b.Problems[0].File, "bad.yaml") || b.Problems[0].Line != 15 ||
		b.Problems[0].Field != "phases[0].faults[0].dependency" || b.Problems[0].Message == "" {
		t.Errorf("bad.yaml = %+v, want its problem at line 15, field phases[0].faults[0].dependency", b)
	}
	if missing.Valid || len(missing.Problems) != 1 || missing.Problems[0].File != "" || !strings.Contains(missing.Problems[0].Message, "not found") {
		t.Errorf("no-such-scenario = %+v, want one problem with the message only", missing)
	}
	out, err = executeCommand(t, "validate", "--json", "hypothesis")
	if err != nil || !strings.HasPrefix(strings.TrimSpace(out), "{") || !json.Valid([]byte(out)) {
		t.Errorf("valid: err %v, stdout %q; want a JSON object only", err, out)
	}
}

// validate says, before anything runs, which figures of the claims the planned requests cannot
// bound: here a baseline of 3 s at 50/s holds 150 requests, and "at least 99% served" needs 381
// even if every one is.
func TestValidateSaysWhatThePlanCannotBound(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	raw := strings.Replace(string(sc.Raw), "  - name: baseline\n    duration: 12s", "  - name: baseline\n    duration: 3s", 1)
	raw = strings.Replace(raw, "repetitions: 5", "repetitions: 1", 1)
	f := writeFile(t, "short.yaml", raw)
	out, err := executeCommand(t, "validate", f)
	if err != nil {
		t.Fatalf("validate: %v\n%s", err, out)
	}
	for _, want := range []string{
		"of the claims cannot be bounded by the planned requests",
		"P2-b-fast: p99_ms of /b in split/baseline needs >= 6 one-second blocks with one repetition, the phase has 3",
		"P1-error-level: success_rate of /b in shared/baseline >= 0.99 needs >= 381 requests even if every one counts, the plan gives 150",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate printed:\n%s\nwant a line containing %q", out, want)
		}
	}
	out, err = executeCommand(t, "validate", "--json", f)
	var v validation
	if jerr := json.Unmarshal([]byte(out), &v); err != nil || jerr != nil || len(v.Scenarios) != 1 || len(v.Scenarios[0].Infeasible) == 0 {
		t.Errorf("validate --json: err %v, %v; want the infeasible figures listed:\n%s", err, jerr, out)
	}
}

// list prints every built-in's whole description (refilled, never cut mid-sentence) and counts
// in the singular for one ("1 configuration", issue 22).
func TestListWholeDescriptionsAndPlurals(t *testing.T) {
	out, err := executeCommand(t, "list")
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, n := range scenarios.Names() {
		sc, err := scenarios.Open(n)
		if err != nil {
			t.Fatal(err)
		}
		if desc := strings.Join(strings.Fields(sc.Description), " "); !strings.Contains(flat, desc) {
			t.Errorf("%s: the whole description %q is not in the list:\n%s", n, desc, out)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if len(line) > 4+listWidth {
			t.Errorf("line longer than %d: %q", 4+listWidth, line)
		}
	}
	if strings.Contains(out, "1 configurations") || strings.Contains(out, "1 repetitions") || !strings.Contains(out, "1 configuration x") {
		t.Errorf("plurals: want '1 configuration x' (orders) and never '1 configurations':\n%s", out)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0 claims", 1: "1 claim", 2: "2 claims"} {
		if got := count(n, "claim"); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
}
