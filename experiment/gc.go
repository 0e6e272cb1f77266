package experiment

import "runtime/debug"

// Garbage collection of a run with many dependencies.
//
// A configuration run keeps every part of the bench in this one process, and with hundreds of
// dependencies most of its live heap is per-connection buffers that no setting of ours sizes:
// the embedded Toxiproxy copies each direction of each proxied connection through two 32 KB
// io.Copy buffers (128 KB per connection; 70 MB of the partners scenario's ~110 MB live heap).
// Go's default GOGC=100 lets the heap grow to twice the live heap between collections, so
// that scenario peaked at 300 MB resident; at GOGC=50, 231 MB (e2e's TestFigurePartnersPeakRSS).
// What it costs and changes: more frequent collections (walmart's send-lag p99 1.9-2.4 ms
// against 0.7-1.0 ms in the same measurement, under the scenario's 10 ms bound), and lower
// heap figures in resources.csv than Go's default would show. The live heap is the same, both
// configurations run under the same setting, and run.json records it. A load generator child
// process gets the same setting through its environment (GOGC).
const (
	// manyDependencies is the number of dependencies from which a run collects garbage at
	// leanGCPercent.
	manyDependencies = 100
	// leanGCPercent is the GOGC percentage such a run uses.
	leanGCPercent = 50
)

// gcPercentFor returns the GOGC percentage to run plans at, or 0 to leave the runtime's setting:
// leanGCPercent when a plan has manyDependencies dependencies or more and the environment does
// not set GOGC (the user's setting wins).
func gcPercentFor(plans []*Plan, env func(string) string) int {
	if env("GOGC") != "" {
		return 0
	}
	for _, p := range plans {
		if len(p.Scenario.Dependencies) >= manyDependencies {
			return leanGCPercent
		}
	}
	return 0
}

// setGCPercent sets the GOGC percentage (percent > 0) and returns a function that restores the
// previous one; with percent 0 it changes nothing.
func setGCPercent(percent int) (restore func()) {
	if percent <= 0 {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
