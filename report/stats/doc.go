// Package stats computes the report's statistics from request records (model.Record): exact
// nearest-rank quantiles, the figures of one slice of requests (Compute), of one time bucket
// (ComputeBucket) and of a whole time line (Timeline, BucketSpans), the log-scaled latency
// histograms, and each figure's mean, 95% confidence interval and spread across repetitions
// (Aggregate, MeanCI). The rules (which request belongs where, what a success is) are stated in
// package report's documentation.
package stats
