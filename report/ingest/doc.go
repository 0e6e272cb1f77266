// Package ingest reads a run folder (see package rundir) into a model.Summary: run.json, each
// configuration's manifest, raw results and resources.csv, the claims and roles the runner
// recorded. It streams the raw files into compact request records, computes the statistics and
// time lines with package stats and what ran out with package attribution, and groups the
// endpoints of a scenario with many of them (groups.go). It never writes.
package ingest
