package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The hint after an invalid run names the cause its manifests show, and none when no load
// generator fell behind (an interrupted run is invalid for being cut short).
func TestBehindHint(t *testing.T) {
	tests := []struct {
		name string
		res  experiment.Result
		want string // "" = no hint
	}{
		{"interrupted, nothing fell behind", experiment.Result{Parallel: 6, Steal: -1}, ""},
		{"several runs at once", experiment.Result{Parallel: 6, Load: experiment.LoadProcess, Behind: []string{"shared-r2"}, Steal: 0.002},
			"the load generator of shared-r2 fell behind its schedule while 6 configuration runs shared this machine's CPU; --parallel 1"},
		{"the hypervisor took the CPU", experiment.Result{Parallel: 6, Behind: []string{"split"}, Steal: 0.12},
			"while the hypervisor took up to 12.0% of a CPU"},
		{"one at a time", experiment.Result{Parallel: 1, Behind: []string{"split", "shared"}, Steal: -1},
			"the load generator of split, shared fell behind its schedule with one configuration run at a time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := behindHint(&tt.res)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("hint %q, want one containing %q", got, tt.want)
			}
		})
	}
}

// bulkhead report --junit and --summary-md write the CI files beside the usual outputs, and
// run refuses them with --no-report (there is no report to take them from).
func TestReportCIFlags(t *testing.T) {
	dir := runFolder(t, true, strings.Replace(claimFails, `"says"`, `"source": "s.yaml:7", "says"`, 1))
	junit, step := filepath.Join(t.TempDir(), "junit.xml"), filepath.Join(t.TempDir(), "step.md")
	out, err := executeCommand(t, "report", dir, "--junit", junit, "--summary-md", step)
	if exitCode(t.Context(), err, true) != ExitClaims {
		t.Fatalf("err = %v, want exit %d", err, ExitClaims)
	}
	if !strings.Contains(out, "s.yaml:7: claim fills does not hold: the pool fills") {
		t.Errorf("the claim that did not hold is not located at its line:\n%s", out)
	}
	j, jerr := os.ReadFile(junit)
	m, merr := os.ReadFile(step)
	if jerr != nil || merr != nil || !strings.Contains(string(j), `<failure type="does not hold"`) || !strings.Contains(string(j), `file="s.yaml" line="7"`) ||
		!strings.Contains(string(m), "bulkhead ") {
		t.Errorf("junit %v %s\nsummary %v %s", jerr, j, merr, m)
	}
	if _, err := executeCommand(t, "run", "smoke", "--no-report", "--junit", junit); err == nil || !strings.Contains(err.Error(), "--no-report") {
		t.Errorf("run --no-report --junit: %v, want a usage error", err)
	}
}

// bulkhead report writes report.md, report.html and summary.json, and draws the plot files only
// with --plots (most of a report's time); report.md then links the figures in report.html.
func TestReportPlotsOnlyWhenAsked(t *testing.T) {
	dir := runFolder(t, true, claimHolds)
	if _, err := executeCommand(t, "report", dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if _, err := os.Stat(filepath.Join(dir, rundir.PlotsDir)); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(string(md), "](report.html#fig-") {
		t.Errorf("without --plots: plots/ %v; report.md should link report.html's figures", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		t.Error(err)
	}
	if _, err := executeCommand(t, "report", dir, "--plots"); err != nil {
		t.Fatal(err)
	}
	pngs, _ := filepath.Glob(filepath.Join(dir, rundir.PlotsDir, "*.png"))
	md, _ = os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if len(pngs) == 0 || !strings.Contains(string(md), "](plots/") {
		t.Errorf("with --plots: %d PNGs; report.md should link them", len(pngs))
	}
}
