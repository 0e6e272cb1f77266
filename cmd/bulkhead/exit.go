package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// Exit codes of bulkhead run and bulkhead report: what a CI job branches on (docs/ci.md, "Exit
// codes"). 99 follows k6, whose failed thresholds exit 99; 130 is the shell's code for SIGINT.
const (
	// ExitOK: the run is valid and every claim holds (or the scenario makes none).
	ExitOK = 0
	// ExitError: anything else went wrong (a file could not be written, a service did not start).
	ExitError = 1
	// ExitUsage: bad scenario or usage (an unknown flag, a scenario that does not validate, a
	// folder that is not a run folder, or a run folder whose run is still in progress).
	ExitUsage = 2
	// ExitInvalid: the run is invalid (the load generator fell behind its schedule), so no claim
	// is judged.
	ExitInvalid = 3
	// ExitClaims: the run is valid but a claim does not hold, is inconclusive or not measurable.
	ExitClaims = 99
	// ExitInterrupted: interrupted (SIGINT/SIGTERM); the run folder is marked partial.
	ExitInterrupted = 130
)

// exitError carries the exit code of an error up to execute.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err (nil stays nil) so that execute exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// usageError marks err as a bad scenario or usage.
func usageError(err error) error { return withCode(ExitUsage, err) }

// exitCode maps the error a command returned to the process exit code: the code it carries,
// ExitInterrupted when the run was interrupted or ctx cancelled, ExitUsage when it failed before
// the command ran (reached is false: cobra rejected the command, flags or arguments), else
// ExitError.
func exitCode(ctx context.Context, err error, reached bool) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, experiment.ErrInterrupted) || errors.Is(ctx.Err(), context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ee):
		return ee.code
	case !reached:
		return ExitUsage
	}
	return ExitError
}

// verdictError returns the error that makes a judged run exit non-zero: ExitInvalid for an
// invalid run, ExitClaims when a claim did not hold; nil when the outcome is pass.
func verdictError(s *model.Summary) error {
	v := s.Verdict
	switch v.Outcome {
	case model.OutcomePass:
		return nil
	case model.OutcomeInvalid:
		return withCode(ExitInvalid, fmt.Errorf("the run is invalid, so no claim is judged (exit %d)", ExitInvalid))
	}
	n := len(v.Claims) - v.Counts[model.VerdictHolds]
	return withCode(ExitClaims, fmt.Errorf("%d of %d claim(s) did not hold (exit %d)", n, len(v.Claims), ExitClaims))
}

// reportError classifies an error of report.Generate: a folder that is not a run folder, or
// whose run is still in progress, is a usage error.
func reportError(err error) error {
	if errors.Is(err, report.ErrNoRun) || errors.Is(err, report.ErrInProgress) || errors.Is(err, fs.ErrNotExist) {
		return usageError(err)
	}
	return err
}

// printJSON writes the verdict block (summary.json's "verdict") to w, for scripts.
func printJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
