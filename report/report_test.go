package report

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldenWorld is the hypothesis world with resource samples: the shared pool fills 1.5 s into
// the latency fault, the split A pool at once.
func goldenWorld() world {
	w := hypothesis()
	full := func(from time.Duration) func(time.Duration) int {
		return func(t time.Duration) int {
			if t >= from && t < 20*time.Second {
				return 10
			}
			return 2
		}
	}
	none := func(time.Duration) uint64 { return 0 }
	w.cfgs[0].resources = samples("pool:shared", 10, 0, 40*time.Second, full(11500*ms_), none)
	w.cfgs[1].resources = append(
		samples("pool:A", 5, 0, 40*time.Second, func(t time.Duration) int { return min(5, full(10*time.Second)(t)) }, none),
		samples("pool:B", 5, 0, 40*time.Second, func(time.Duration) int { return 1 }, none)...)
	return w
}

func TestReportGolden(t *testing.T) {
	dir := goldenWorld().write(t, t.TempDir())
	if _, err := generate(t, dir, false); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.md")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestReportGolden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report.md differs from %s (run with -update after checking the change):\n%s", golden, firstDiff(string(got), string(want)))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return ""
}

func TestSummaryRoundTrips(t *testing.T) {
	dir := goldenWorld().write(t, t.TempDir())
	if _, err := generate(t, dir, false); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var back model.Summary
	if err := json.Unmarshal(first, &back); err != nil {
		t.Fatal(err)
	}
	second, err := json.MarshalIndent(&back, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(first), bytes.TrimSpace(second)) {
		t.Errorf("summary.json does not round-trip:\n%s", firstDiff(string(second), string(first)))
	}
	t.Run("the issue's example fields are present", func(t *testing.T) {
		ph := back.Configurations[0].Phases[0]
		if back.Scenario != "hypothesis" || back.RunID == "" || !back.Valid || back.Configurations[0].Fault != "latency+reset" ||
			ph.Name != "baseline" || ph.EndS != 10 || ph.Endpoints["/a"].Requests != 200 || ph.Exhausted[0].Resource != "pool:shared" {
			t.Errorf("summary = %+v", back.Configurations[0].Phases[0])
		}
	})
}

// hashTree returns a hash of every file under dir.
func hashTree(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGenerateWritesOutputsAndLeavesConfigurationsAlone(t *testing.T) {
	testenv.Long(t, "draws every plot")
	dir := goldenWorld().write(t, t.TempDir())
	before := map[string][32]byte{}
	for _, c := range []string{"shared", "split"} {
		for k, v := range hashTree(t, filepath.Join(dir, c)) {
			before[k] = v
		}
	}
	s, err := Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	after := map[string][32]byte{}
	for _, c := range []string{"shared", "split"} {
		for k, v := range hashTree(t, filepath.Join(dir, c)) {
			after[k] = v
		}
	}
	if len(after) != len(before) {
		t.Errorf("configuration folders had %d files, now %d", len(before), len(after))
	}
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed", k)
		}
	}
	report, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range output.PlotsOf(s) {
		for _, ext := range []string{".png", ".svg"} {
			if _, err := os.Stat(filepath.Join(dir, rundir.PlotsDir, j.File+ext)); err != nil {
				t.Errorf("plot %s%s: %v", j.File, ext, err)
			}
		}
		if !strings.Contains(string(report), "(plots/"+j.File+".png)\n\n[SVG](plots/"+j.File+".svg)") {
			t.Errorf("report.md does not embed %s with a link to its SVG", j.File)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Error(err)
	}
}

func TestCompare(t *testing.T) {
	testenv.Long(t, "draws plots")
	one := hypothesis().write(t, t.TempDir())
	w := hypothesis()
	w.cfgs[0].profiles["slow-a"]["/b"] = prof{lat: 20 * ms_}
	two := w.write(t, t.TempDir())
	// One claim: /b stays served under the shared pool while A is slow. Run one starves /b (55%),
	// run two does not.
	served := claimYAML("b-served", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \">=\"\n    value: 0.9\n")
	for _, dir := range []string{one, two} {
		writeClaims(t, dir, claimsScenario+served)
		rundirtest.Seal(t, dir)
	}

	t.Run("refuses an output folder inside raw results", func(t *testing.T) {
		err := Compare(filepath.Join(one, "shared", rundir.RawDir, "cmp"), one, two)
		if !errors.Is(err, ErrOutInRaw) {
			t.Fatalf("err = %v, want ErrOutInRaw", err)
		}
	})
	t.Run("writes compare.md and plots", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "cmp")
		if err := Compare(out, one, two); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(out, "compare.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(md), "| true | fail | 1 does not hold |") || !strings.Contains(string(md), "| true | pass | 1 holds |") {
			t.Errorf("compare.md lacks the verdict rows (one run failing its claim, one passing):\n%s", md)
		}
		// Run 1 starves /b (55%), run 2 does not: the claim's verdicts differ and the change of its
		// figure, 0.45, has an interval clear of 0; split's /b did not change: its interval holds 0.
		for _, re := range []string{
			`\| b-served \| success_rate of /b in shared/slow-a >= 0\.9 \| does not hold 0\.55 \[[^]]+\] \| holds 1 \[[^]]+\] \| 0\.45 \[0\.[1-9][0-9]*, 0\.[0-9]+\] \|`,
			`\| slow-a \(A \+450ms\) \| /b \| shared \| success rate \| 0\.55 \[[^]]+\] \| 1 \[[^]]+\] \| 0\.45 \[0\.[1-9]`,
			`\| slow-a \(A \+450ms\) \| /b \| split \| success rate \| 1 \[[^]]+\] \| 1 \[[^]]+\] \| 0 \[-[0-9.]+, [0-9.]+\] \|`,
		} {
			if !regexp.MustCompile(re).Match(md) {
				t.Errorf("compare.md has no line matching %s:\n%s", re, md)
			}
		}
		for _, f := range []string{"compare-runs-slow-a-b-p99.png", "compare-runs-slow-a-b-success.svg", "compare-runs-errors-a-b-p99.png"} {
			if _, err := os.Stat(filepath.Join(out, rundir.PlotsDir, f)); err != nil {
				t.Error(err)
			}
		}
		// A second comparison into the same folder would overwrite the first: refused.
		if err := Compare(out, one); !errors.Is(err, ErrOutExists) {
			t.Errorf("second Compare into %s: err = %v, want ErrOutExists", out, err)
		}
		if md2, _ := os.ReadFile(filepath.Join(out, "compare.md")); string(md2) != string(md) {
			t.Error("the first comparison's compare.md was changed")
		}
	})
}

func TestAnalyzeErrors(t *testing.T) {
	t.Run("an empty folder is not a run", func(t *testing.T) {
		if _, err := Analyze(t.TempDir()); !errors.Is(err, ErrNoRun) {
			t.Errorf("err = %v, want ErrNoRun", err)
		}
	})
	t.Run("a corrupt raw file is named, its configuration not analysed", func(t *testing.T) {
		dir := hypothesis().write(t, t.TempDir())
		raw := filepath.Join(dir, "split", rundir.RawDir, "b.json")
		if err := os.WriteFile(raw, []byte("{\"attack\": \"/b\", \"seq\": \n"), 0o644); err != nil {
			t.Fatal(err)
		}
		rundirtest.Seal(t, dir) // written so by the runner (its manifest still counting 800 sends)
		s, err := Analyze(dir)
		if err != nil {
			t.Fatal(err)
		}
		if why := strings.Join(s.Invalid, "\n"); s.Valid || !strings.Contains(why, "split: not analysed: ") || !strings.Contains(why, "b.json: result 0: ") {
			t.Errorf("valid %v, invalid:\n%s\nwant split not analysed, naming b.json's bad result", s.Valid, why)
		}
	})
	t.Run("a raw file corrupted after the run is not analysed", func(t *testing.T) {
		dir := hypothesis().write(t, t.TempDir())
		raw := filepath.Join(dir, "split", rundir.RawDir, "b.json")
		if err := os.WriteFile(raw, []byte("{\"attack\": \"/b\", \"seq\": \n"), 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Analyze(dir)
		if err != nil {
			t.Fatal(err)
		}
		if why := strings.Join(s.Invalid, "\n"); s.Valid || !strings.Contains(why, "split: not analysed: integrity: raw/b.json: 1 lines") || !slices.Contains(s.Missing, "split") {
			t.Errorf("valid %v, missing %v, invalid:\n%s\nwant split not analysed, naming raw/b.json", s.Valid, s.Missing, why)
		}
	})
}

// An interrupted configuration's phases after the interruption are "not reached", never "nothing
// ran out; no request failed", in report.md, Verdicts and summary.json (issue: polish item 3).
func TestInterruptedRunSaysWhichPhasesWereNotReached(t *testing.T) {
	dir := hypothesis().write(t, t.TempDir())
	path := filepath.Join(dir, "shared", rundir.ManifestFile)
	var m rundir.Manifest
	if err := rundir.ReadJSON(path, &m); err != nil {
		t.Fatal(err)
	}
	m.Partial, m.Valid, m.Ended = true, false, m.Started.Add(15*time.Second)
	m.Invalid = []string{"interrupted before the end of the time line"}
	if err := rundir.WriteJSON(path, m); err != nil {
		t.Fatal(err)
	}
	s, err := generate(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	const notReached = "not reached (the run was interrupted at 15.0 s)"
	tests := []struct {
		cfg, phase string
		reached    bool
		cutShort   bool
	}{
		{"shared", "baseline", true, false},
		{"shared", "slow-a", true, true},
		{"shared", "errors-a", false, false},
		{"shared", "mild-a", false, false},
		{"split", "mild-a", true, false}, // ran to the end
	}
	for _, tt := range tests {
		t.Run(tt.cfg+"/"+tt.phase, func(t *testing.T) {
			var ph *model.Phase
			for i := range s.Configurations {
				for j := range s.Configurations[i].Phases {
					if s.Configurations[i].Name == tt.cfg && s.Configurations[i].Phases[j].Name == tt.phase {
						ph = &s.Configurations[i].Phases[j]
					}
				}
			}
			if ph == nil {
				t.Fatal("phase missing")
			}
			if ph.Reached != tt.reached || ph.CutShort != tt.cutShort {
				t.Errorf("reached %t cut short %t, want %t %t", ph.Reached, ph.CutShort, tt.reached, tt.cutShort)
			}
			if got := ph.Sentence == notReached; got == tt.reached {
				t.Errorf("sentence %q", ph.Sentence)
			}
			if tt.cutShort && !strings.HasSuffix(ph.Sentence, "(the phase was cut short: the run was interrupted at 15.0 s)") {
				t.Errorf("sentence %q", ph.Sentence)
			}
		})
	}
	t.Run("Verdicts names the phases not reached", func(t *testing.T) {
		v := output.Lines(s)
		for _, want := range []string{"shared, errors-a: " + notReached, "shared, mild-a: " + notReached} {
			if !strings.Contains(v, want) {
				t.Errorf("Verdicts lacks %q:\n%s", want, v)
			}
		}
	})
	t.Run("report.md says not reached, never that nothing failed there", func(t *testing.T) {
		md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"- errors-a: " + notReached + ".", "| shared | " + notReached + " |"} {
			if !strings.Contains(string(md), want) {
				t.Errorf("report.md lacks %q", want)
			}
		}
	})
	t.Run("summary.json has reached false", func(t *testing.T) {
		var raw struct {
			Configurations []struct {
				Name           string   `json:"name"`
				InterruptedAtS *float64 `json:"interrupted_at_s"`
				Phases         []struct {
					Name    string `json:"name"`
					Reached *bool  `json:"reached"`
				} `json:"phases"`
			} `json:"configurations"`
		}
		if err := rundir.ReadJSON(filepath.Join(dir, rundir.SummaryFile), &raw); err != nil {
			t.Fatal(err)
		}
		c := raw.Configurations[0]
		if c.InterruptedAtS == nil || *c.InterruptedAtS != 15 || c.Phases[2].Reached == nil || *c.Phases[2].Reached || !*c.Phases[0].Reached {
			t.Errorf("summary.json: %+v", c)
		}
	})
}

// An interrupted run is judged as far as it got (issue 23, item 4): a claim on a phase that ran
// to its end gets its verdict, one on the phase the interruption cut short or on a configuration
// never reached is not measurable and says why, and the run is partial, not invalid; the
// configuration it never reached is named in not_reached.
func TestInterruptedRunJudgedAsFarAsItGot(t *testing.T) {
	dir := hypothesis().write(t, t.TempDir())
	path := filepath.Join(dir, "shared", rundir.ManifestFile)
	var m rundir.Manifest
	if err := rundir.ReadJSON(path, &m); err != nil {
		t.Fatal(err)
	}
	m.Partial, m.State, m.Ended = true, rundir.StateInterrupted, m.Started.Add(15*time.Second)
	if err := rundir.WriteJSON(path, m); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "split")); err != nil { // one after another: never started
		t.Fatal(err)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	run.Partial, run.State = true, rundir.StateInterrupted
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
		t.Fatal(err)
	}
	writeClaims(t, dir, claimsScenario+
		claimYAML("baseline-served", "{metric: success_rate, configuration: shared, phase: baseline, endpoint: /b}", "    op: \">=\"\n    value: 0.9\n")+
		claimYAML("slow-cut", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \">=\"\n    value: 0.9\n")+
		claimYAML("split-never", "{metric: success_rate, configuration: split, phase: baseline, endpoint: /b}", "    op: \">=\"\n    value: 0.9\n"))
	s, err := generate(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Valid || !s.Partial || len(s.NotReached) != 1 || !strings.HasPrefix(s.NotReached[0], "split: missing") {
		t.Fatalf("valid %v partial %v not reached %q invalid %q; want a valid partial run, split not reached", s.Valid, s.Partial, s.NotReached, s.Invalid)
	}
	want := map[string]struct{ verdict, reason string }{
		"baseline-served": {model.VerdictHolds, ""},
		"slow-cut":        {model.VerdictNotMeasurable, "phase slow-a of shared was cut short: the run was interrupted at 15.0 s"},
		"split-never":     {model.VerdictNotMeasurable, `no configuration "split" in the run`},
	}
	for _, c := range s.Verdict.Claims {
		w := want[c.ID]
		if c.Verdict != w.verdict || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("%s: %s (%s); want %s, saying %q", c.ID, c.Verdict, c.Reason, w.verdict, w.reason)
		}
	}
	if s.Verdict.Outcome != model.OutcomeFail {
		t.Errorf("outcome %s; want fail (two claims not measurable)", s.Verdict.Outcome)
	}
}
