// Package model holds the data every job of the report shares: the Summary of a run folder as
// summary.json writes it (configurations, phases, per-endpoint statistics, the time line's
// buckets, the exhausted resources, the aggregates across repetitions and the verdict block),
// and the compact request records the statistics and the verdict engine read.
//
// The types carry no behaviour beyond small queries (Group, Phase, EndpointPaths) and the
// formatting of a figure (Num, Interval.String). Fields tagged json:"-" are kept in memory for
// the jobs that need them (the verdict engine's requests, the plots' percentile curves, the
// resource samples) and never written to summary.json.
//
// Who fills what: package ingest reads a run folder into a Summary (package stats computes the
// statistics, package attribution what ran out); package verdict judges the claims into
// Summary.Verdict; package output renders it.
package model
