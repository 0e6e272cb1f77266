// Package sweep runs a sizing sweep: one base scenario (a shared and a split configuration, a
// latency fault on the dependency of an "affected" endpoint, and an "unaffected" endpoint) re-run
// over a grid of pool size P x fault delay as a fraction of the client timeout x request rate, and
// draws where isolation starts to matter and where it costs more than it saves.
//
// For every cell of the grid, Derive builds a scenario from the base: the shared pool scaled to P
// slots, every split pool scaled by the same factor (P/2 each for the seed-004 layout, as
// scenarios.DefaultPools has it), a time line of a baseline phase and a fault phase of equal length
// with the fault dependency delayed by fraction x timeout, and every endpoint at the cell's rate.
// Run writes each derived scenario to a file, runs it with experiment.Run into its own run folder
// inside one sweep folder, analyses it with report.Analyze, and collects the unaffected endpoint's
// fault-phase p99 and success rate and the affected endpoint's success throughput under both
// configurations.
//
//	results/<UTC timestamp>-sweep-<scenario>/   never reused
//	  sweep.json                                 Sweep: the grid, thresholds, every cell's figures and run folder
//	  sweep.md                                   findings per rate, heatmaps, the table of cells
//	  scenarios/<cell>.yaml                      the scenario each cell ran
//	  <timestamp>-<scenario>-p<P>-f<fraction>-r<rate>/   one ordinary run folder per cell
//	  plots/*.png, *.svg                         heatmaps, one figure per rate and figure of merit
//
// Cells whose run is invalid (the load generator's self-check failed, or the run was cut short)
// keep their figures but are hatched in the heatmaps and left out of the findings.
package sweep
