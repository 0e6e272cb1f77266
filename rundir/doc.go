// Package rundir is the on-disk layout of one run: the contract between the experiment runner,
// which writes it, and the report, which reads nothing else.
//
//	results/<run-id>/                    run-id = <UTC timestamp>-<scenario>, never reused
//	  run.json                           Run: scenario, run id, configurations, overrides, parallel
//	  scenario.yaml                      the scenario as run (resolved, overrides applied)
//	  scenario.source.yaml               the scenario file as given
//	  claims.json                        the claims as run
//	  <configuration>[-r<rep>]/          one folder per configuration and repetition
//	    manifest.json                    Manifest
//	    raw/<endpoint>.json              vegeta JSON-lines results, one file per endpoint
//	    resources.csv                    resource time series (ResourceCSVHeader)
//	    dependencies.csv                 each dependency's answers, timed on its side (DependencyCSVHeader)
//	  summary.json, report.md, plots/    written by the report
//
// The runner records what it wrote: run.json its inputs and claim ids, each manifest its data
// files (FileRecord: bytes, lines, sha256), and it holds the folder's lock while it runs
// (LockRun). VerifyRun and VerifyConfiguration hold a folder to those records, and InProgress
// tells a run in progress from one cut off; docs/run-folder.md gives the rules.
//
// Raw results are vegeta Results (readable by `vegeta report` and `vegeta plot`), one attack per
// endpoint with a gapless Seq. Response headers are reduced to the service's X-Bulkhead-* outcome
// headers, plus two the load generator adds:
//
//	X-Loadgen-Scheduled   the scheduled send offset from the attack start, in nanoseconds
//	X-Loadgen-Class       the classified outcome (see outcome.Classify): "ok", "timeout:dependency",
//	                      "timeout:client", "rejected:full", "upstream:reset", "connection:refused", ...
package rundir
