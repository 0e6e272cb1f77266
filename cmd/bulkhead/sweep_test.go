package main

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/spf13/cobra"

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

func fmtGrid(g sweep.Grid) string {
	return joinInts(g.Sizes) + "|" + joinNums(g.Fractions, "") + "|" + joinNums(g.Rates, "")
}
