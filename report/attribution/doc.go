// Package attribution says which bounded resource ran out in each phase of a configuration and
// what each failure is attributed to (the rules are in package report's documentation), with the
// one sentence per phase the reports print. It accounts resources.csv exactly where the run
// wrote the interval columns (resources.go), and from point samples for older folders.
package attribution
