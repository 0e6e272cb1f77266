package output

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// ciRun is a judged run with one claim of each verdict, the one that does not hold written at
// scenarios/hypothesis.yaml:189.
func ciRun(valid bool) *model.Summary {
	claim := func(id, verdict, source string) model.Claim {
		c := model.Claim{ID: id, Says: "says " + id, Source: source, ConditionResult: model.ConditionResult{
			Rule: "p99_ms of /b in split/latency < 50", Verdict: verdict, Reason: "reason of " + id}}
		if verdict != model.VerdictNotMeasurable {
			c.Left, c.Right, c.Difference = iv(70, 60, 80), iv(50, 50, 50), iv(20, 10, 30)
		}
		return c
	}
	s := &model.Summary{SchemaVersion: model.SchemaVersion, Scenario: "hypothesis", RunID: "r1", Valid: valid,
		Verdict: model.VerdictBlock{Outcome: model.OutcomeFail, Counts: map[string]int{"holds": 1, "does not hold": 1, "inconclusive": 1, "not measurable": 1},
			Claims: []model.Claim{claim("P1", model.VerdictHolds, "scenarios/hypothesis.yaml:162"), claim("P2-b-fast", model.VerdictDoesNotHold, "scenarios/hypothesis.yaml:189"),
				claim("P3", model.VerdictInconclusive, ""), claim("P4", model.VerdictNotMeasurable, "x.yaml:3")}},
		Headline: []model.Headline{{Phase: "latency", Fault: "A +450ms", Endpoint: "/b", Layouts: []model.HeadlineLayout{
			{Configuration: "shared", SuccessRate: iv(0.392, 0.351, 0.43), SuccessP99MS: iv(492, 470, 510)}}}},
	}
	if !valid {
		s.Invalid = []string{"split: /a: send lag p99 2ms exceeds the 1ms limit"}
		s.Verdict.Outcome = model.OutcomeInvalid
	}
	return s
}

type suites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suite    struct {
		Properties []junitProperty `xml:"properties>property"`
		Cases      []junitCase     `xml:"testcase"`
	} `xml:"testsuite"`
}

// The JUnit report has the run's validity and one testcase per claim; a claim passes only when
// it holds (inconclusive and not measurable fail, as the exit code has it), its failure typed by
// the verdict, its message the reason; a claim's testcase names its file and line.
func TestJUnit(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := (JUnit{Path: path}).Write(ciRun(true), "results/r1"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got suites
	if err := xml.Unmarshal(b, &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b)
	}
	if got.Tests != 5 || got.Failures != 3 {
		t.Errorf("tests %d, failures %d; want 5 (validity + 4 claims), 3\n%s", got.Tests, got.Failures, b)
	}
	cases := got.Suite.Cases
	if cases[0].Name != "the run is valid" || cases[0].Failure != nil {
		t.Errorf("first testcase %+v, want the validity, passing", cases[0])
	}
	want := []struct {
		name, failure, file string
		line                int
	}{{"P1", "", "scenarios/hypothesis.yaml", 162}, {"P2-b-fast", "does not hold", "scenarios/hypothesis.yaml", 189}, {"P3", "inconclusive", "", 0}, {"P4", "not measurable", "x.yaml", 3}}
	for i, w := range want {
		c := cases[i+1]
		typ := ""
		if c.Failure != nil {
			typ = c.Failure.Type
			if !strings.Contains(c.Failure.Message, "reason of "+w.name) {
				t.Errorf("%s: failure message %q lacks the reason", w.name, c.Failure.Message)
			}
		}
		if c.Name != w.name || typ != w.failure || c.File != w.file || c.Line != w.line {
			t.Errorf("testcase %d = %s failure %q at %s:%d; want %s %q at %s:%d", i+1, c.Name, typ, c.File, c.Line, w.name, w.failure, w.file, w.line)
		}
	}
	if !strings.Contains(string(b), `<property name="run_dir" value="results/r1">`) {
		t.Errorf("no run_dir property:\n%s", b)
	}
	t.Run("an invalid run fails its validity testcase", func(t *testing.T) {
		b, _ := junitXML(ciRun(false), "d")
		var got suites
		if err := xml.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if f := got.Suite.Cases[0].Failure; f == nil || f.Type != "invalid" || !strings.Contains(f.Message, "send lag p99 2ms") {
			t.Errorf("validity = %+v, want failed with the reason", got.Suite.Cases[0])
		}
	})
}

// The step summary says the outcome first, then the headline and the claims, and appends to
// what earlier steps wrote.
func TestSummaryMD(t *testing.T) {
	path := filepath.Join(t.TempDir(), "step.md")
	if err := os.WriteFile(path, []byte("earlier step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := (SummaryMD{Path: path}).Write(ciRun(true), "results/r1"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	got := string(b)
	for _, want := range []string{"earlier step\n### ❌ bulkhead hypothesis: fail (1 holds, 1 does not hold, 1 inconclusive, 1 not measurable)",
		"| latency (A +450ms) | /b | shared | 39.2% [35.1, 43.0] | 492 ms [470, 510] |",
		"| ❌ | P2-b-fast | says P2-b-fast | p99_ms of /b in split/latency < 50 · measured 70 [60, 80]",
		"Full report: `results/r1/report.md`"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if got := summaryMarkdown(ciRun(false), "d"); !strings.Contains(got, "⛔ bulkhead hypothesis: invalid") || !strings.Contains(got, "send lag p99 2ms") {
		t.Errorf("invalid run: %s", got)
	}
}

// Annotations point at each claim that did not hold; GitHub's form escapes what would end a
// property or the message.
func TestAnnotations(t *testing.T) {
	var plain, gh bytes.Buffer
	s := ciRun(true)
	s.Verdict.Claims[1].Says = "50%, then:\nmore"
	if err := (Annotations{W: &plain}).Write(s, ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(plain.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "scenarios/hypothesis.yaml:189: claim P2-b-fast does not hold: 50%, then: more · rule:") ||
		!strings.HasPrefix(lines[1], "claim P3 inconclusive:") || !strings.HasPrefix(lines[2], "x.yaml:3: claim P4 not measurable:") {
		t.Errorf("plain annotations:\n%s", plain.String())
	}
	if err := (Annotations{W: &gh, GitHub: true}).Write(s, ""); err != nil {
		t.Fatal(err)
	}
	first := strings.Split(gh.String(), "\n")[0]
	if want := "::error file=scenarios/hypothesis.yaml,line=189,title=claim P2-b-fast does not hold::50%25, then: more · rule:"; !strings.HasPrefix(first, want) {
		t.Errorf("github annotation %q, want it to start %q", first, want)
	}
}
