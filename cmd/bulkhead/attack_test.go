package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The test binary is the bulkhead binary a `--load process` run starts as its child
// ("<exe> attack <spec>"): it runs the CLI as main does.
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "attack" {
		os.Exit(execute(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// `bulkhead run --load process` runs each configuration's load in a child `bulkhead attack`:
// the run says so as it goes, every manifest records the child, and the report reads the raw
// files the children wrote and says where the load ran.
func TestRunWithLoadProcess(t *testing.T) {
	testenv.Long(t, "runs a 3 s scenario")
	root := filepath.Join(t.TempDir(), "results")
	var out, errOut strings.Builder
	code := runCLI(context.Background(), []string{"run", "smoke", "--out", root, "--plain", "--lag-limit", "50ms", "--load", "process"}, &out, &errOut)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "load generator: child process") {
		t.Errorf("the progress does not say where the load runs:\n%s", out.String())
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*-smoke"))
	if len(dirs) != 1 {
		t.Fatalf("run folders: %v", dirs)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(dirs[0], rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	for _, c := range run.Configurations {
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(dirs[0], c, rundir.ManifestFile), &m); err != nil {
			t.Fatal(err)
		}
		if m.Load == nil || m.Load.Layout != rundir.LoadProcess || m.Load.PID == 0 {
			t.Errorf("%s: manifest load %+v; want the child process", c, m.Load)
		}
		if b, err := os.ReadFile(filepath.Join(dirs[0], c, attack.StderrFile)); err != nil || !strings.Contains(string(b), "bulkhead attack: configuration "+c) {
			t.Errorf("%s: the child's stderr log (%v) does not say what it ran: %q", c, err, b)
		}
	}
	report, err := os.ReadFile(filepath.Join(dirs[0], rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "in its own child process (`bulkhead attack`") {
		t.Errorf("report.md does not say where the load ran")
	}
}
