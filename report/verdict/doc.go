// Package verdict is the report's verdict engine: it judges a scenario's claims (package claim)
// on a run's figures with 95% intervals (package confidence computes them; engine.go states the
// method; MethodText says it in every report) and returns summary.json's verdict block. It reads
// the run through the small Figures interface (the configuration runs by name, each with its
// per-phase statistics, the requests kept for the claims' figures and the resource samples) and
// renders nothing: the claims' lines and tables are package output's.
package verdict
