package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/sweep"
)

// TestSweepFlags checks that the flags reach the grid: defaults are sweep.DefaultGrid, and each
// flag replaces its dimension.
func TestSweepFlags(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		want  sweep.Grid
		phase time.Duration
		bad   bool
	}{
		{"defaults", []string{"hypothesis"}, sweep.DefaultGrid, sweep.DefaultPhaseDuration, false},
		{"every flag", []string{"hypothesis", "--sizes", "2,6", "--fractions", "0.8,1.0", "--rates", "10/s", "--phase-duration", "2s"},
			sweep.Grid{Sizes: []int{2, 6}, Fractions: []float64{0.8, 1}, Rates: []float64{10}}, 2 * time.Second, false},
		{"bad size", []string{"hypothesis", "--sizes", "0"}, sweep.Grid{}, 0, true},
		{"bad rate", []string{"hypothesis", "--rates", "fast"}, sweep.Grid{}, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sweep.Grid
			var opts *sweepOptions
			cmd := newSweepCmd(func(_ *cobra.Command, o *sweepOptions) error {
				opts = o
				var err error
				got, err = sweepGrid(o)
				return err
			})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tt.bad {
				if !errors.Is(err, sweep.ErrBadGrid) {
					t.Errorf("err = %v, want ErrBadGrid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmtGrid(got) != fmtGrid(tt.want) || opts.PhaseDuration != tt.phase || opts.Scenario != "hypothesis" {
				t.Errorf("grid %v phase %v, want %v phase %v", got, opts.PhaseDuration, tt.want, tt.phase)
			}
		})
	}
}

// A scenario's sweep: block replaces the default grid part by part; a flag given replaces the
// block's part.
func TestSweepBlockDefaults(t *testing.T) {
	block := &scenarios.SweepSpec{Sizes: []int{2, 6}, Rates: []float64{10}, PhaseDuration: time.Second}
	tests := []struct {
		name  string
		args  []string
		want  sweep.Grid
		phase time.Duration
	}{
		{"the block over the defaults", []string{"hypothesis"},
			sweep.Grid{Sizes: []int{2, 6}, Fractions: sweep.DefaultGrid.Fractions, Rates: []float64{10}}, time.Second},
		{"a flag over the block", []string{"hypothesis", "--sizes", "8", "--phase-duration", "2s"},
			sweep.Grid{Sizes: []int{8}, Fractions: sweep.DefaultGrid.Fractions, Rates: []float64{10}}, 2 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got sweep.Grid
			var opts *sweepOptions
			cmd := newSweepCmd(func(cmd *cobra.Command, o *sweepOptions) error {
				applySweepBlock(cmd, o, block)
				opts = o
				var err error
				got, err = sweepGrid(o)
				return err
			})
			cmd.SetArgs(tt.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if fmtGrid(got) != fmtGrid(tt.want) || opts.PhaseDuration != tt.phase {
				t.Errorf("grid %v phase %v, want %v phase %v", got, opts.PhaseDuration, tt.want, tt.phase)
			}
		})
	}
}

func fmtGrid(g sweep.Grid) string {
	return joinInts(g.Sizes) + "|" + joinNums(g.Fractions, "") + "|" + joinNums(g.Rates, "")
}

// writeSweep writes a sweep folder holding only a one-cell sweep.json.
func writeSweep(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	sw := sweep.Sweep{Scenario: "hypothesis", SweepID: "x", Base: "builtin:hypothesis",
		Grid:       sweep.Grid{Sizes: []int{4}, Fractions: []float64{1}, Rates: []float64{20}},
		Roles:      sweep.Roles{Shared: "shared", Split: "split", FaultDependency: "A", Affected: "/a", Unaffected: "/b", BaseSize: 10, Timeout: 500 * time.Millisecond},
		Thresholds: sweep.DefaultThresholds, PhaseDurationS: 3, LagLimitMS: 10,
		Cells: []sweep.CellResult{{Cell: sweep.Cell{Size: 4, Fraction: 1, Rate: 20}, RunDir: "run", Valid: true, SplitPools: []int{2, 2},
			Shared: &sweep.Figures{UnaffectedSuccessRate: 0.5, AffectedThroughputRPS: 10, UnaffectedP99MS: 400},
			Split:  &sweep.Figures{UnaffectedSuccessRate: 1, AffectedThroughputRPS: 5, UnaffectedP99MS: 8}}},
	}
	if err := rundir.WriteJSON(filepath.Join(dir, sweep.SweepFile), sw); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A sweep folder is re-reported from its sweep.json by `sweep --report` and by `report`, which
// recognises it by that file; nothing runs.
func TestSweepReport(t *testing.T) {
	testenv.Long(t, "draws heatmaps")
	tests := []struct {
		name string
		args func(dir string) []string
	}{
		{"sweep --report", func(dir string) []string { return []string{"sweep", "--report", dir} }},
		{"report on a sweep folder", func(dir string) []string { return []string{"report", dir} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeSweep(t)
			out, err := executeCommand(t, tt.args(dir)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if !strings.Contains(out, "isolation starts to matter") || !strings.Contains(out, "report: "+filepath.Join(dir, sweep.ReportFile)) {
				t.Errorf("output:\n%s", out)
			}
			for _, f := range []string{sweep.ReportFile, "plots/unaffected-success-r20.png"} {
				if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	t.Run("--report takes no scenario", func(t *testing.T) {
		_, err := executeCommand(t, "sweep", "--report", writeSweep(t), "hypothesis")
		if err == nil || !strings.Contains(err.Error(), "takes no scenario") {
			t.Errorf("err = %v", err)
		}
	})
}
