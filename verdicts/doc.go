// Package verdicts holds the verdict engine's negative controls: end-to-end runs of scenario
// variants of seed 004 (hypothesis), each built so that one prediction must not hold (a pool
// large enough to absorb the stall, a weak fault, a low rate, an unaffected endpoint broken
// from the start, a stall where fast errors should be, identical layouts, a second stall where
// normal load should be, the busy phase weakened, three endpoints with Poisson arrivals; and
// issue 26's three: the unaffected dependency failing fast where a claim asks "fast", a 1 s
// phase, 150 requests all served against a one-point bound), and the scaled-down hypothesis
// itself, whose claims must keep holding. A control whose run the machine never lets be valid
// skips on a developer's machine and fails in CI. The tests run real services, Toxiproxy and load for
// several minutes; they are skipped with -short. Run them alone on the machine: every figure is a
// measurement.
package verdicts
