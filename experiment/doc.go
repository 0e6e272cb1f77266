// Package experiment runs a scenario in two steps. First it plans every configuration run
// (configurations x repetitions) without touching the network, the clock or the disk: the
// manifest-to-be, one open-model attack per endpoint with its arrival offset, the phases with
// their faults resolved, the sampling period and the lag limit (NewPlan, Plans). Then it
// executes the plans, several at once where the machine allows (DefaultParallel): each gets
// fresh fake dependencies, a Toxiproxy proxy in front of each, the system under test started
// through the target seam (package target), and its load, in this process or as a child
// process of the same binary (`bulkhead attack`, package attack; Options.Load); faults switch at the phase offsets of
// one time line, the target's resources are sampled, and the raw results go into one new run
// folder (see package rundir).
//
// It is the only package that sees every other one; it decides nothing about statistics, which
// the report computes from the files alone.
package experiment
