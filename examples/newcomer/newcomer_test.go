package newcomer

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// walkthrough is the "Walkthrough" section of docs/own-service.md, the part this test follows.
const walkthroughDoc = "../../docs/own-service.md"

// p1p2 are the claims of seed 004's isolation test a baseline and a latency phase decide.
var p1p2 = []string{
	"P1-error-level", "P1-p99-level", "P1-within-5-timeouts",
	"P2-b-served", "P2-b-fast", "P2-b-p90", "P2-a-rejected", "P2-a-rejected-fast",
}

// attempts bounds the runs judged invalid (the load generator fell behind: a busy machine)
// before the test gives up: the first and at most two more.
const attempts = 3

// A newcomer's first hour, as docs/own-service.md's walkthrough tells it: build bulkhead and the
// service, `bulkhead new` for a command target, validate, plan, shorten the time line to the two
// phases P1 and P2 need as the walkthrough says (a 30 s time line in the file's five
// repetitions), run it, and get seed 004's P1 and P2 verdicts: all eight hold. Every bulkhead
// command is the walkthrough's own line, run by a shell in the service's folder. Its wall time
// is the two builds (cached: a few seconds) and the run's ten configuration runs, six at a time:
// two 30 s time lines one after the other, about 65-70 s in all, more when a run is judged
// invalid and repeated.
func TestNewcomerWalkthrough(t *testing.T) {
	testenv.Long(t, "builds bulkhead and a service, then runs ten 30 s time lines, six at a time")
	if _, err := exec.LookPath("sh"); err != nil {
		testenv.SkipOrFail(t, "no sh to run the walkthrough's command lines: %v", err)
	}
	blocks := walkthrough(t)
	if len(blocks) != 3 || blocks[0].lang != "sh" || blocks[1].lang != "yaml" || blocks[2].lang != "sh" {
		t.Fatalf("%s: the walkthrough has %d blocks %v; this test follows sh (new, validate, plan), yaml (the phases of a first run), sh (validate, plan, run)", walkthroughDoc, len(blocks), blocks)
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(bin, "bulkhead"))
	goBuild(t, "github.com/bulkheadlab/bulkhead/examples/newcomer/storefront", filepath.Join(dir, "storefront"))
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))

	// Scaffold, validate, plan: every line must succeed as written.
	for _, line := range commands(t, blocks[0].text) {
		out := sh(t, dir, env, line, 0)
		if strings.HasPrefix(line, "bulkhead plan") && !strings.Contains(out, "claims: 11 of 11 can be decided") {
			t.Errorf("%s: the plan of the whole test does not say every claim can be decided:\n%s", line, out)
		}
	}

	// The walkthrough's edit for a first run of a minute.
	file := filepath.Join(dir, "storefront.yaml")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited, err := firstRun(string(raw), blocks[1].text)
	if err != nil {
		t.Fatalf("the walkthrough's edit does not apply to what bulkhead new wrote: %v\n%s", err, raw)
	}
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}

	var verdict *model.VerdictBlock
	var runDir string
	var invalid []string
	for _, line := range commands(t, blocks[2].text) {
		if !strings.HasPrefix(line, "bulkhead run") {
			out := sh(t, dir, env, line, 0)
			if strings.HasPrefix(line, "bulkhead plan") && !strings.Contains(out, "claims: 8 of 8 can be decided") {
				t.Errorf("%s: the plan of the first run does not say its 8 claims can be decided:\n%s", line, out)
			}
			continue
		}
		for i := 1; i <= attempts; i++ {
			out, code := shCode(t, dir, env, line)
			folder, v := readVerdict(t, dir, out)
			if code == 3 {
				t.Logf("attempt %d of %d judged invalid (a busy machine): %v", i, attempts, v.Invalid)
				invalid = append(invalid, v.Invalid...)
				continue
			}
			if code != 0 && code != 99 {
				t.Fatalf("%s: exit %d:\n%s", line, code, out)
			}
			verdict, runDir = v, folder
			if code != 0 {
				t.Errorf("%s: exit %d, want 0 (every claim holds):\n%s", line, code, out)
			}
			break
		}
	}
	if verdict == nil {
		testenv.SkipOrFail(t, "%d runs in a row judged invalid, the machine too busy for a valid run: %s", attempts, strings.Join(invalid, "; "))
	}

	if verdict.Outcome != model.OutcomePass {
		t.Errorf("verdict %s, want pass", verdict.Outcome)
	}
	var ids []string
	for _, c := range verdict.Claims {
		ids = append(ids, c.ID)
		if c.Holds == nil || !*c.Holds {
			t.Errorf("claim %s (%s): %s: %s", c.ID, c.Says, c.Verdict, c.Reason)
		}
		for _, r := range c.Require {
			if r.Verdict != model.VerdictHolds {
				t.Errorf("claim %s: precondition %s: %s: %s", c.ID, r.Rule, r.Verdict, r.Reason)
			}
		}
	}
	slices.Sort(ids)
	want := slices.Sorted(slices.Values(p1p2))
	if !slices.Equal(ids, want) {
		t.Errorf("claims judged %v, want seed 004's P1 and P2: %v", ids, want)
	}

	// What --files and --version promised: the storefront's version in every manifest.
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(runDir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Configurations) != 10 {
		t.Errorf("run.json names configuration runs %v, want shared and split, five repetitions each", run.Configurations)
	}
	for _, conf := range run.Configurations {
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(runDir, conf, rundir.ManifestFile), &m); err != nil {
			t.Fatal(err)
		}
		if m.Target == nil || m.Target.Version != "storefront 1.0.0" {
			t.Errorf("%s: manifest target %+v, want version storefront 1.0.0", conf, m.Target)
		}
	}
}

type block struct{ lang, text string }

func (b block) String() string { return b.lang }

var fence = regexp.MustCompile("(?ms)^```(\\w*)\\n(.*?)^```$")

// walkthrough returns the fenced blocks of the walkthrough section of walkthroughDoc.
func walkthrough(t *testing.T) []block {
	t.Helper()
	doc, err := os.ReadFile(walkthroughDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "\n## Walkthrough")
	if !ok {
		t.Fatalf("%s has no ## Walkthrough section", walkthroughDoc)
	}
	if i := strings.Index(sec, "\n## "); i >= 0 {
		sec = sec[:i]
	}
	var out []block
	for _, m := range fence.FindAllStringSubmatch(sec, -1) {
		out = append(out, block{m[1], m[2]})
	}
	return out
}

// commands returns the command lines of a sh block, continuation lines joined.
func commands(t *testing.T, text string) []string {
	t.Helper()
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if !strings.HasPrefix(l, "bulkhead ") {
			t.Fatalf("%s: walkthrough line %q: this test runs bulkhead commands only", walkthroughDoc, l)
		}
		out = append(out, l)
	}
	return out
}

// firstRun makes the walkthrough's edit of the scenario file src: its phases: replaced by the
// walkthrough's (every line of src from phases: to the next top-level key), and the roles
// error_phase: and normal_load: deleted.
func firstRun(src, phases string) (string, error) {
	lines := strings.SplitAfter(src, "\n")
	from := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "phases:") })
	if from < 0 {
		return "", errors.New("no phases: line")
	}
	to := from + 1
	for to < len(lines) && (strings.HasPrefix(lines[to], " ") || strings.TrimSpace(lines[to]) == "") {
		to++
	}
	var out []string
	out = append(out, lines[:from]...)
	out = append(out, phases)
	deleted := 0
	for _, l := range lines[to:] {
		if k := strings.TrimSpace(l); strings.HasPrefix(l, "  ") && (strings.HasPrefix(k, "error_phase:") || strings.HasPrefix(k, "normal_load:")) {
			deleted++
			continue
		}
		out = append(out, l)
	}
	if deleted != 2 {
		return "", errors.New("roles: has no error_phase: and normal_load: lines to delete")
	}
	return strings.Join(out, ""), nil
}

func goBuild(t *testing.T, pkg, out string) {
	t.Helper()
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

// sh runs line with sh in dir and fails the test unless it exits with want; it returns what the
// command printed (stdout and stderr).
func sh(t *testing.T, dir string, env []string, line string, want int) string {
	t.Helper()
	out, code := shCode(t, dir, env, line)
	if code != want {
		t.Fatalf("%s: exit %d, want %d:\n%s", line, code, want, out)
	}
	return out
}

// shCode runs line with sh in dir and returns what it printed and its exit code.
func shCode(t *testing.T, dir string, env []string, line string) (string, int) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("$ %s\n%s", line, out.String())
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("%s: %v", line, err)
	return "", 0
}

var reportLine = regexp.MustCompile(`(?m)^report: (.*)/report\.md$`)

// readVerdict returns the run folder a bulkhead run's output names (relative to dir, where it
// ran) and the verdict block of its summary.json.
func readVerdict(t *testing.T, dir, out string) (string, *model.VerdictBlock) {
	t.Helper()
	m := reportLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the run's output names no report (report: <folder>/report.md):\n%s", out)
	}
	folder := m[1]
	if !filepath.IsAbs(folder) {
		folder = filepath.Join(dir, folder)
	}
	var s struct {
		Verdict model.VerdictBlock `json:"verdict"`
	}
	raw, err := os.ReadFile(filepath.Join(folder, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return folder, &s.Verdict
}
