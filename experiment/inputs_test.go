package experiment_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// serveChild is the first argument that makes TestMain's process a tiny service: it answers
// every request 200 on 127.0.0.1:<port> until killed.
const serveChild = "serve-child"

func serveChildMain(port string) int {
	err := http.ListenAndServe(net.JoinHostPort("127.0.0.1", port), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	fmt.Fprintln(os.Stderr, err)
	return 1
}

// A command target's files: are copied into the run folder with their SHA-256 in run.json, the
// target starts from the copies, its version: output is in the manifest, and the run folder's
// scenario.yaml runs again with the original folder gone (issue 22: "<folder>/scenario.yaml
// re-runs").
func TestRunFolderScenarioReruns(t *testing.T) {
	testenv.Long(t, "runs two 1 s time lines with a command target")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	svc := filepath.Join(src, "svc")
	must(t, os.MkdirAll(filepath.Join(svc, "conf"), 0o755))
	must(t, os.WriteFile(filepath.Join(svc, "serve.sh"), []byte("exec \"$EXE\" "+serveChild+" \"$1\"\n"), 0o755))
	must(t, os.WriteFile(filepath.Join(svc, "VERSION"), []byte("svc 9.1\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(svc, "conf", "pool.cfg"), []byte("size 4\n"), 0o644))
	path := filepath.Join(src, "scenario.yaml")
	must(t, os.WriteFile(path, []byte(`name: rerun
timeout: 200ms
dependencies: [{name: A}]
endpoints: [{path: /a, calls: [A]}]
load: {rate: 20/s, timeout: 1s}
phases: [{name: p, duration: 1s}]
configurations:
  - name: mine
    target:
      command: [sh, serve.sh, "{port}"]
      dir: svc
      files: [serve.sh, VERSION, conf]
      env: {EXE: "`+exe+`"}
      version: [cat, VERSION]
      layout: {mode: shared, pools: [{name: all, dependencies: [A]}]}
`), 0o644))
	first := runRerun(t, path)
	ran := filepath.Join(first, rundir.ScenarioFile)
	asRun, err := os.ReadFile(ran)
	must(t, err)
	if !strings.Contains(string(asRun), "dir: target-files/mine") {
		t.Errorf("scenario as run does not start the target from the copies:\n%s", asRun)
	}
	// The original folder goes: the run folder alone must hold what the target needs.
	must(t, os.RemoveAll(src))
	second := runRerun(t, ran)
	a, b := inputs(t, first), inputs(t, second)
	for _, f := range []string{"serve.sh", "VERSION", "conf/pool.cfg"} {
		rel := "target-files/mine/" + f
		if a[rel] == "" || a[rel] != b[rel] {
			t.Errorf("%s: sha256 %q in the first run, %q in the re-run; want the same, recorded", rel, a[rel], b[rel])
		}
	}
}

// runRerun runs the scenario at path into a new results folder and checks what the run folder
// records of its target: the version in the manifest, and its inputs as the report verifies them.
func runRerun(t *testing.T, path string) string {
	t.Helper()
	sc, err := scenarios.Open(path)
	must(t, err)
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir()})
	must(t, err)
	m := readManifest(t, filepath.Join(res.Dir, "mine"))
	if m.Target == nil || m.Target.Version != "svc 9.1" || !strings.HasSuffix(m.Target.Description, ", version svc 9.1") {
		t.Errorf("manifest target %+v, want version svc 9.1", m.Target)
	}
	if n, _ := countRaw(t, filepath.Join(res.Dir, "mine", m.Endpoints[0].RawFile)); n == 0 {
		t.Errorf("no results: the target did not serve")
	}
	var run rundir.Run
	must(t, rundir.ReadJSON(filepath.Join(res.Dir, rundir.RunFile), &run))
	if errs := rundir.VerifyRun(res.Dir, &run); len(errs) > 0 {
		t.Errorf("run folder does not verify: %v", errs)
	}
	return res.Dir
}

// inputs maps each input run.json records to its SHA-256.
func inputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	var run rundir.Run
	must(t, rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run))
	out := map[string]string{}
	for _, f := range run.Files {
		out[f.Path] = f.SHA256
	}
	return out
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
