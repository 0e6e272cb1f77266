// Package confidence computes the 95% intervals a verdict rests on: pure, deterministic
// functions of a run's numbers (no random draws, so the same run folder always gives the same
// intervals), tested for coverage on simulated runs with a known truth.
//
// A figure (a success rate, a p99 of successes, a throughput) is measured in every repetition of
// a configuration. Its interval has to contain three layers of variation: between requests,
// between the seconds of one run (requests of the same second share a pool's state; a queue
// that filled in one second drains in the next), and between runs (the machine's moment: an
// A/A pair of identical runs moves latency figures by 5-10%). The method:
//
//   - Within a repetition, a figure's variance comes from its block scores (Ratio, Sum,
//     Quantile): the run is cut into 1 s blocks, each block's score is its linearised share of
//     the figure's error, and the variance is nb/(nb-1)·Σscore², widened by the blocks' serial
//     correlation (Inflation). A quantile's scores are Woodruff's (through the share of requests
//     below it); it has no upper end when too few effective requests lie above it. Fewer than
//     MinBlocks blocks give no variance at all.
//   - Across repetitions, the figure is their mean, and its variance the spread of the
//     repetition values over R, read with Student's t on R-1 degrees of freedom: the spread
//     contains the within-run noise and the run-to-run variation alike, and t keeps the
//     interval honest for three repetitions (t = 4.30, not 1.96). The spread is floored where it
//     is implausibly small for the within noise the repetitions show (see collect), and a rate
//     is never narrower than its binomial variance.
//   - A comparison (a difference, a ratio, a difference of differences) is linearised: each
//     configuration's part carries its own repetitions, parts are independent, and the parts'
//     intervals are combined by MOVER (Newcombe's hybrid score interval for two rates) with
//     Welch-Satterthwaite degrees of freedom, so both sides' variation between repetitions
//     counts.
//   - A lone rate gets a Wilson interval on its effective sample size (Korn and Graubard's
//     degrees-of-freedom adjustment): 150 of 150 bound the failure rate only below 2.5%, and no
//     rate on finite data has a zero-width interval.
//   - With one repetition there is no spread between runs to read: the interval contains the
//     run's own noise only and Estimate.RunToRun says so; a noise floor the scenario declares
//     (Figure.Floor) stands in for the missing spread. Figures read once from a time line (an
//     event time, a resource figure) are point figures: with one repetition they decide nothing
//     finer than their resolution.
//
// Anchors: Kayenta's judge (Mann-Whitney with a Hodges-Lehmann interval that must clear a share
// of the effect, not only zero) for judging a whole interval against an effect; Cameron,
// Gelbach and Miller (2008) and Bell and McCaffrey (2002) for few clusters (the nb/(nb-1)
// correction and t with G-1 degrees of freedom; a bootstrap over 1-3 clusters covered the truth
// 16-61% of the time in this project's own simulation, which is why there is no bootstrap and a
// minimum of blocks); Hartung and Knapp for t over few studies with a within-study floor.
//
// The tests in calibration_test.go are the proof: 1,000 simulated runs per case, rates near 0
// and 1, quantiles, and ratios and differences between configurations, each within 93-97%.
package confidence
