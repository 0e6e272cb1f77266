package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

// runFolder writes a synthetic run folder: one configuration "shared" with a two-slot pool whose
// occupancy was sampled at 1 of 2 for two seconds, no requests, the given validity and claims
// (claims.json, "" for none). It stands in for a real run so that the exit codes of `bulkhead
// report` can be checked without running anything.
func runFolder(t *testing.T, valid bool, claims string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	cdir := filepath.Join(dir, "shared")
	if err := os.MkdirAll(filepath.Join(cdir, rundir.RawDir), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), rundir.Run{Scenario: "exit", RunID: "run", Configurations: []string{"shared"}, Started: t0, Ended: t0.Add(2 * time.Second)}))
	m := rundir.Manifest{Scenario: "exit", Configuration: "shared", Started: t0, Ended: t0.Add(2 * time.Second), Valid: valid,
		ClientTimeout: 500 * time.Millisecond,
		Topology: &outcome.Topology{Mode: outcome.ModeShared, Pools: []outcome.TopologyPool{{Name: "shared", Kind: "semaphore", Size: 2, Dependencies: []string{"A"}}},
			Endpoints: []outcome.TopologyCall{{Path: "/a", Calls: []string{"A"}}}},
		Phases:    []rundir.Phase{{Name: "baseline", Start: 0, End: 2 * time.Second}},
		Endpoints: []rundir.Endpoint{{Path: "/a", RawFile: filepath.Join(rundir.RawDir, rundir.RawFileName("/a")), Rate: 10, Arrivals: "constant"}},
	}
	if !valid {
		m.Invalid = []string{"/a: send lag p99 2ms exceeds the 1ms limit"}
	}
	must(rundir.WriteJSON(filepath.Join(cdir, rundir.ManifestFile), m))
	must(os.WriteFile(filepath.Join(cdir, m.Endpoints[0].RawFile), nil, 0o644))
	csv := "t_s,resource,capacity,in_use,rejected\n" // the first format of resources.csv, still read
	for i := range 20 {
		csv += fmt.Sprintf("%.1f,pool:shared,2,1,0\n", float64(i)/10)
	}
	must(os.WriteFile(filepath.Join(cdir, rundir.ResourcesFile), []byte(csv), 0o644))
	if claims != "" {
		must(os.WriteFile(filepath.Join(dir, rundir.ClaimsFile), []byte(claims), 0o644))
	}
	rundirtest.Seal(t, dir) // as a runner records its files
	return dir
}

const (
	claimHolds   = `[{"id": "fits", "says": "the pool never fills", "measure": {"metric": "max_in_use", "configuration": "shared", "phase": "baseline", "resource": "pool:shared"}, "op": "<=", "value": 2}]`
	claimFails   = `[{"id": "fills", "says": "the pool fills", "measure": {"metric": "max_in_use", "configuration": "shared", "phase": "baseline", "resource": "pool:shared"}, "op": ">=", "value": 2}]`
	claimUnknown = `[{"id": "none", "says": "requests were sent", "measure": {"metric": "success_rate", "configuration": "shared", "phase": "baseline", "endpoint": "/a"}, "op": ">=", "value": 0.99}]`
)

// Each exit code of the CI contract, from the command line down (docs/ci.md, "Exit codes").
func TestExitCodes(t *testing.T) {
	bad := writeFile(t, "bad.yaml", badScenario)
	tests := []struct {
		name    string
		args    func(t *testing.T) []string
		want    int
		outcome string // the verdict block's outcome on stdout with --json; "" = not checked
	}{
		{"valid, every claim holds", func(t *testing.T) []string { return []string{"report", runFolder(t, true, claimHolds), "--json"} }, ExitOK, "pass"},
		{"valid, no claims", func(t *testing.T) []string { return []string{"report", runFolder(t, true, ""), "--json"} }, ExitOK, "pass"},
		{"a claim does not hold", func(t *testing.T) []string { return []string{"report", runFolder(t, true, claimFails), "--json"} }, ExitClaims, "fail"},
		{"a claim is not measurable", func(t *testing.T) []string { return []string{"report", runFolder(t, true, claimUnknown), "--json"} }, ExitClaims, "fail"},
		{"the run is invalid", func(t *testing.T) []string { return []string{"report", runFolder(t, false, claimHolds), "--json"} }, ExitInvalid, "invalid"},
		{"claims.json deleted after a run whose claim did not hold", func(t *testing.T) []string {
			dir := runFolder(t, true, claimFails)
			os.Remove(filepath.Join(dir, rundir.ClaimsFile))
			return []string{"report", dir, "--json"}
		}, ExitInvalid, "invalid"},
		{"a run still in progress", func(t *testing.T) []string {
			dir := runFolder(t, true, claimHolds)
			var run rundir.Run
			if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
				t.Fatal(err)
			}
			run.State = rundir.StateRunning
			if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
				t.Fatal(err)
			}
			lock, err := rundir.LockRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { lock.Unlock() })
			return []string{"report", dir}
		}, ExitUsage, ""},
		{"not a run folder", func(t *testing.T) []string { return []string{"report", t.TempDir()} }, ExitUsage, ""},
		{"a folder that does not exist", func(t *testing.T) []string { return []string{"report", filepath.Join(t.TempDir(), "nope")} }, ExitUsage, ""},
		{"an unknown flag", func(t *testing.T) []string { return []string{"report", "--nope", "x"} }, ExitUsage, ""},
		{"a missing argument", func(t *testing.T) []string { return []string{"run"} }, ExitUsage, ""},
		{"an unknown command", func(t *testing.T) []string { return []string{"runn", "smoke"} }, ExitUsage, ""},
		{"a scenario that does not validate", func(t *testing.T) []string {
			return []string{"run", bad, "--out", filepath.Join(t.TempDir(), "results")}
		}, ExitUsage, ""},
		{"an override that does not fit", func(t *testing.T) []string {
			return []string{"run", "smoke", "--scale", "0", "--out", filepath.Join(t.TempDir(), "results")}
		}, ExitUsage, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := runCLI(context.Background(), tt.args(t), &out, &errOut)
			if got != tt.want {
				t.Fatalf("exit %d, want %d\nstdout: %s\nstderr: %s", got, tt.want, out.String(), errOut.String())
			}
			if tt.outcome == "" {
				return
			}
			var v struct {
				Outcome string `json:"outcome"`
				RunDir  string `json:"run_dir"`
			}
			if err := json.Unmarshal(out.Bytes(), &v); err != nil {
				t.Fatalf("stdout is not the verdict block: %v\n%s", err, out.String())
			}
			if v.Outcome != tt.outcome || v.RunDir == "" {
				t.Errorf("verdict block outcome %q run_dir %q, want %q and the folder", v.Outcome, v.RunDir, tt.outcome)
			}
			if !strings.Contains(errOut.String(), "report: ") {
				t.Errorf("the human lines did not go to stderr: %q", errOut.String())
			}
		})
	}
}

// An interrupted run exits 130 whatever else went wrong; a plain failure of a command that ran
// exits 1.
func TestExitCodeOf(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		err     error
		reached bool
		want    int
	}{
		{"no error", context.Background(), nil, true, ExitOK},
		{"interrupted run", context.Background(), fmt.Errorf("run: %w", experiment.ErrInterrupted), true, ExitInterrupted},
		{"cancelled context", cancelled, errors.New("stopped"), true, ExitInterrupted},
		{"interrupted even when the claims failed", cancelled, withCode(ExitClaims, errors.New("1 of 1")), true, ExitInterrupted},
		{"a failure while running", context.Background(), errors.New("disk full"), true, ExitError},
		{"rejected before running", context.Background(), errors.New("unknown flag"), false, ExitUsage},
		{"a code carried up", context.Background(), fmt.Errorf("wrapped: %w", withCode(ExitInvalid, errors.New("invalid"))), true, ExitInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := exitCode(tt.ctx, tt.err, tt.reached); got != tt.want {
				t.Errorf("exitCode = %d, want %d", got, tt.want)
			}
		})
	}
}

// bulkhead report takes the run folder as the user's shell names it: ".", from inside it, and a
// relative path (issue 22: "report ." failed with "leads outside the run folder").
func TestReportRelativeFolder(t *testing.T) {
	dir := runFolder(t, true, claimHolds)
	for _, c := range []struct{ cwd, arg string }{
		{dir, "."},
		{dir, "./"},
		{filepath.Dir(dir), filepath.Base(dir)},
		{filepath.Join(dir, "shared"), ".."},
	} {
		t.Run(c.arg, func(t *testing.T) {
			t.Chdir(c.cwd)
			out, err := executeCommand(t, "report", c.arg)
			if err != nil {
				t.Fatalf("report %s from %s: %v\n%s", c.arg, c.cwd, err, out)
			}
			if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
				t.Errorf("no summary.json written: %v", err)
			}
		})
	}
}
