package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// executeCommand runs the CLI with args and returns what it printed and its error.
func executeCommand(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	root := newRootCmd(&out, &out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const badScenario = `name: bad
timeout: 500ms
dependencies:
  - {name: A, latency: 5ms}
endpoints:
  - {path: /a, calls: [A]}
load:
  rate: 10/s
configurations:
  - {name: shared, mode: shared, size: 4, pools: default}
phases:
  - name: baseline
    duration: 1s
    faults:
      - {dependency: C, type: latency, latency: 10ms}
`

func TestValidate(t *testing.T) {
	bad := writeFile(t, "bad.yaml", badScenario)
	tests := []struct {
		name    string
		args    []string
		wantErr string // substring; "" means success
		wantOut string
	}{
		{"built-in by name", []string{"validate", "hypothesis"}, "", "ok  hypothesis"},
		{"bad file names file, line and field", []string{"validate", bad}, "bad.yaml:15: phases[0].faults[0].dependency", ""},
		{"unknown name lists the built-ins", []string{"validate", "no-such-scenario"}, "hypothesis", ""},
		{"one bad of two fails", []string{"validate", "smoke", bad}, "1 of 2 scenarios invalid", "ok  smoke"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := executeCommand(t, tt.args...)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if !strings.Contains(out, tt.wantOut) {
				t.Errorf("output %q does not contain %q", out, tt.wantOut)
			}
		})
	}
}

// Bad flags fail before anything is started or written.
func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"bad rate", []string{"--rate", "fast"}, "--rate"},
		{"zero scale", []string{"--scale", "0"}, "--scale: must be a finite number > 0"},
		{"NaN scale", []string{"--scale", "NaN"}, "--scale: must be a finite number > 0, got NaN"},
		{"infinite scale", []string{"--scale", "+Inf"}, "--scale: must be a finite number > 0"},
		{"toxiproxy with another scheme", []string{"--toxiproxy", "ftp://x"}, `scheme "ftp", want http or https`},
		{"unknown configuration", []string{"--only", "nope"}, `--only: no configuration "nope"`},
		{"zero repetitions", []string{"--repetitions", "0"}, "--repetitions"},
		{"zero lag limit", []string{"--lag-limit", "0s"}, "--lag-limit: must be > 0"},
		{"zero parallel", []string{"--parallel", "0"}, "--parallel: must be > 0"},
		{"unknown load layout", []string{"--load", "thread"}, `--load: load layout "thread": want inprocess or process`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "results")
			_, err := executeCommand(t, append([]string{"run", "smoke", "--out", out}, tt.args...)...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
			}
			if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
				t.Errorf("results folder created despite the error")
			}
		})
	}
}

// The smoke scenario runs end to end through the CLI and ends with the report's path.
func TestRunSmokeEndToEnd(t *testing.T) {
	testenv.Long(t, "runs a 3 s scenario twice")
	root := filepath.Join(t.TempDir(), "results")
	// This checks the command's wiring, not the machine's timing: under -race the load generator
	// is several times slower, so the send-lag bound is loosened (and recorded in the run).
	out, err := executeCommand(t, "run", "smoke", "--out", root, "--plain", "--lag-limit", "50ms")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*-smoke"))
	if len(dirs) != 1 {
		t.Fatalf("run folders: %v", dirs)
	}
	for _, f := range []string{rundir.RunFile, rundir.SummaryFile, rundir.ReportFile} {
		if _, err := os.Stat(filepath.Join(dirs[0], f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if !strings.Contains(out, "report: "+filepath.Join(dirs[0], rundir.ReportFile)) {
		t.Errorf("output does not end with the report path:\n%s", out)
	}
	// Re-reporting regenerates from the raw files.
	if out, err := executeCommand(t, "report", dirs[0]); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
}

func TestServePortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = executeCommand(t, "serve", "--dep", "A=http://127.0.0.1:1", "--addr", l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "--addr "+l.Addr().String()) {
		t.Fatalf("err = %v, want one naming --addr", err)
	}
}

func TestReportMissingFolder(t *testing.T) {
	_, err := executeCommand(t, "report", filepath.Join(t.TempDir(), "nope"))
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v, want one naming the folder", err)
	}
}

// --only keeps a scenario with claims about other configurations runnable: those claims are
// left out, with a note, instead of failing validation. The folder records the scenario as run
// (one configuration, scaled) and the overrides, so a report on it judges what ran.
func TestRunOnlyLeavesOutClaimsAboutOtherConfigurations(t *testing.T) {
	testenv.Long(t, "runs a 1 s scenario")
	root := filepath.Join(t.TempDir(), "results")
	// The send-lag bound is loosened: this checks --only's wiring, and under -race the load
	// generator is several times slower.
	out, err := executeCommand(t, "run", "carriers", "--only", "breaker", "--scale", "0.05", "--no-report",
		"--out", root, "--plain", "--lag-limit", "1s")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "--only: leaving out") {
		t.Errorf("no note about the claims left out:\n%s", out)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*-carriers"))
	if len(dirs) != 1 {
		t.Fatalf("run folders: %v", dirs)
	}
	asRun, err := scenarios.Load(filepath.Join(dirs[0], rundir.ScenarioFile))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := scenarios.Open("carriers")
	if len(asRun.Configurations) != 1 || asRun.Duration() >= orig.Duration() {
		t.Errorf("scenario as run: %d configurations, %v (file: %v)", len(asRun.Configurations), asRun.Duration(), orig.Duration())
	}
	var run struct {
		Overrides scenarios.Overrides `json:"overrides"`
	}
	if err := rundir.ReadJSON(filepath.Join(dirs[0], rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if run.Overrides.Scale != 0.05 || len(run.Overrides.Only) != 1 {
		t.Errorf("run.json overrides %+v, want scale 0.05 and only breaker", run.Overrides)
	}
}

// serve builds its service through the same validation as a scenario: a path the router would
// read as a pattern is an error naming the field, not a panic.
func TestServeRefusesRouterPatterns(t *testing.T) {
	tests := []struct{ endpoint, want string }{
		{"/{=A", `endpoints[0].path: "/{" holds { or }, which the router reads as a wildcard pattern`},
		{"/metrics=A", `endpoints[0].path: "/metrics" collides with the service's own /metrics`},
		{"/a/../b=A", `endpoints[0].path: "/a/../b" is not a clean path`},
	}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			_, err := executeCommand(t, "serve", "--dep", "A=http://127.0.0.1:1", "--endpoint", tt.endpoint, "--addr", "127.0.0.1:0")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

const absurdScenario = `name: absurd
timeout: 500ms
dependencies:
  - {name: A, latency: 5ms}
endpoints:
  - {path: /a, calls: [A]}
load:
  rate: 1000000/s
configurations:
  - {name: shared, mode: shared, size: 4, pools: default}
phases:
  - name: forever
    duration: 1000h
`

// A run that needs more than the machine has is refused before anything starts, with the
// estimate printed; it validates, so only the estimate stops it.
func TestRunRefusesTheAbsurd(t *testing.T) {
	if machine(t.TempDir()) == (scenarios.Machine{}) {
		testenv.SkipOrFail(t, "this system reports nothing about its machine, so no run is refused")
	}
	file := writeFile(t, "absurd.yaml", absurdScenario)
	if _, err := executeCommand(t, "validate", file); err != nil {
		t.Fatalf("validate: %v", err)
	}
	out := filepath.Join(t.TempDir(), "results")
	printed, err := executeCommand(t, "run", file, "--out", out)
	if err == nil || !strings.Contains(err.Error(), "the run needs more than this machine has") || !strings.Contains(err.Error(), "PiB of raw results") {
		t.Fatalf("err = %v, want the refusal naming the raw results", err)
	}
	if !strings.Contains(printed, "estimate: 3.6e+12 requests") || !strings.Contains(printed, "machine:") {
		t.Errorf("printed %q, want the estimate and the machine", printed)
	}
	if _, statErr := os.Stat(out); !os.IsNotExist(statErr) {
		t.Errorf("results folder created despite the refusal")
	}
}
