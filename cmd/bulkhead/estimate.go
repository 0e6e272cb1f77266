package main

import (
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// checkEstimate prints what running sc with parallel configuration runs at once (load generators laid out as load) needs
// (scenarios.Estimate; parallel as experiment.Parallel resolves it) and, when that is more than
// this machine offers where the results go, returns an error saying what is short, unless force;
// then it says so and returns nil. The disk counts the report's plots, summary and report.md
// too, unless noReport (the run writes raw results only). It starts nothing and writes nothing
// to disk.
func checkEstimate(w io.Writer, sc *scenarios.Scenario, resultsDir string, parallel int, load string, force, noReport bool) error {
	// What experiment.Run will run at once; an error there is Run's to report.
	if plans, err := experiment.Plans(sc, 0); err == nil {
		if n, err := experiment.Parallel(sc, plans, parallel, runtime.NumCPU(), load); err == nil {
			parallel = n
		}
	}
	parallel = max(parallel, 1)
	est := sc.Estimate(parallel)
	if noReport {
		est.ReportBytes, est.Plots = 0, 0
	}
	fmt.Fprintf(w, "estimate: %s\n", est)
	m := machine(resultsDir)
	over := est.Exceeds(m)
	if len(over) == 0 {
		return nil
	}
	fmt.Fprintf(w, "machine:  %s\n", m)
	if force {
		fmt.Fprintf(w, "--force: starting although the run needs %s\n", strings.Join(over, "; "))
		return nil
	}
	return fmt.Errorf("the run needs more than this machine has (--force starts it anyway):\n  %s", strings.Join(over, "\n  "))
}
