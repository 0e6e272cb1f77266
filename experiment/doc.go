// Package experiment runs a scenario: for every configuration (and repetition) it starts fresh
// fake dependencies, a Toxiproxy proxy in front of each, the service under test and one
// open-model attack per endpoint, switches faults at the phase offsets of one time line, samples
// the service's resources, and writes the raw results into a new run folder (see package rundir).
//
// It is the only package that sees every other one; it decides nothing about statistics, which
// the report computes from the files alone.
package experiment
