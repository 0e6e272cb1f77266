// Package testenv decides what a test may do when its environment is missing something: a test
// that cannot run here (no Node.js, not root, a machine too busy for a valid run) skips on a
// developer's machine but fails in CI, where a skip would let the suite pass without testing.
//
// Every skip in the repository goes through this package (TestNoBareSkips checks it), so the
// reason a test did not run is one of three, each with its own call:
//
//   - SkipOrFail: the environment lacks something the test needs. Skips locally, fails in CI.
//   - Long: the test runs a real time line, builds a binary or draws many plots. It belongs to
//     the end-to-end tier of make test (no -short, no race detector) and skips in the short,
//     race-checked tier. A real time line never runs under -race: the detector slows the load
//     generator several-fold and every such run would be judged invalid.
//   - Figure: an opt-in measurement behind an environment variable; it produces a figure, not a
//     verdict, so it skips in CI too.
//
// CI is detected from the CI environment variable, set to "true" by GitHub Actions, GitLab CI and
// this project's .ci/run.
package testenv

import (
	"os"
	"testing"
)

// InCI reports whether the tests run in CI (the environment variable CI is "true" or "1").
func InCI() bool {
	v := os.Getenv("CI")
	return v == "true" || v == "1"
}

// RaceEnabled reports whether the test binary was built with the race detector.
func RaceEnabled() bool { return raceEnabled }

// SkipOrFail skips the test with the formatted reason on a developer's machine; in CI it fails the
// test with the same reason instead, since a required test that skips there has not been run. It
// does not return.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("required test cannot run (a skip fails in CI): "+format, args...)
	}
	t.Skipf(format, args...)
}

// Long skips the test, with the reason given, under -short or when the race detector is on; it
// returns otherwise. It skips in CI as well: make test's end-to-end tier runs without -short and
// without -race, and runs it there.
func Long(t testing.TB, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: " + why)
	}
	if raceEnabled {
		t.Skip("-race (long tests run in the end-to-end tier, without the race detector): " + why)
	}
}

// Figure skips the test unless the environment variable env is set to a non-empty value: the
// test is a measurement a person asks for (its figure goes into docs/measurements.md), not a check
// CI needs. what says what it measures.
func Figure(t testing.TB, env, what string) {
	t.Helper()
	if os.Getenv(env) == "" {
		t.Skipf("a measurement (%s): set %s=1 to run it", what, env)
	}
}
