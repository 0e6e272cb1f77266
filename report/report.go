package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/headline"
	"github.com/bulkheadlab/bulkhead/report/ingest"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/report/verdict"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// ErrNoRun is returned when a folder is not a run folder (no run.json and no configuration
// folder with a manifest).
var ErrNoRun = ingest.ErrNoRun

// ErrInProgress is returned for a run folder whose runner is still running: nothing is read or
// written until it has ended.
var ErrInProgress = ingest.ErrInProgress

// ErrOutInRaw is returned by Compare when the output folder lies inside a raw results folder.
var ErrOutInRaw = errors.New("output folder inside a raw results folder")

// ErrOutExists is returned by Compare when the output folder already exists: a comparison never
// overwrites earlier results.
var ErrOutExists = errors.New("output folder already exists; choose a new one")

// Analyze reads the run folder runDir and computes its Summary without writing anything: the
// statistics, time lines and exhausted resources (package ingest), the aggregates across
// repetitions (package stats), the verdicts on the scenario's claims (package verdict) and the
// headline (package headline). It
// blocks while it streams every raw file (one configuration at a time, holding about 24 bytes
// per request of that configuration). It fails if run.json or a manifest cannot be read or a
// raw file is corrupt; a configuration listed in run.json but missing on disk only fails the
// run when the run is not marked partial (then it makes the run invalid instead).
func Analyze(runDir string) (*model.Summary, error) {
	s, _, err := analyze(runDir)
	return s, err
}

// analyze is Analyze, also returning the claims the run was judged on; it keeps the requests of
// the endpoints keepAlso names too (see ingest.Run).
func analyze(runDir string, keepAlso ...string) (*model.Summary, []claim.Claim, error) {
	s, claims, note, err := ingest.Run(runDir, model.DefaultBucket, keepAlso...)
	if err != nil {
		return nil, nil, err
	}
	s.Aggregates = stats.Aggregate(s.Configurations)
	s.Verdict = verdict.Judge(s, claims, note)
	s.Headline = headline.Of(s, verdict.NewEstimator(s))
	return s, claims, nil
}

// Options tunes GenerateWith. The zero value is what Generate does.
type Options struct {
	// Outputs lists what to write and print, in order; nil means output.Defaults() (the plots,
	// report.md and summary.json).
	Outputs []output.Output
}

// Generate analyses runDir (see Analyze) and writes summary.json, report.md and the plots
// (plots/*.png and *.svg) into it, replacing earlier ones. It never writes inside a configuration
// folder. It blocks until every file is written; on error some outputs may already have been
// replaced (each file is written atomically), and the Summary is returned when the analysis
// itself succeeded.
func Generate(runDir string) (*model.Summary, error) {
	return GenerateWith(runDir, Options{})
}

// GenerateWith is Generate with options: it analyses runDir, then runs each of o.Outputs in
// order, stopping at the first that fails.
func GenerateWith(runDir string, o Options) (*model.Summary, error) {
	s, err := Analyze(runDir)
	if err != nil {
		return nil, err
	}
	outs := o.Outputs
	if outs == nil {
		outs = output.Defaults()
	}
	for _, out := range outs {
		if err := out.Write(s, runDir); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Compare analyses each run folder and writes into outDir a compare.md laying the runs side by
// side, the first the one the others are compared with (verdicts; claim by claim and for the
// headline, each run's figure and its change from the first with a 95% interval; the unaffected
// endpoint's figures per configuration) and comparison plots under outDir/plots (per fault
// phase, one line per run from every repetition; see output.WriteComparison). outDir must not exist yet (ErrOutExists: earlier results are never
// overwritten) and must not lie inside a raw results folder (ErrOutInRaw). It blocks until every
// file is written; on error some files may be written.
func Compare(outDir string, runDirs ...string) error {
	if len(runDirs) == 0 {
		return fmt.Errorf("compare: no run folders given")
	}
	out, err := filepath.Abs(outDir)
	if err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	var runs []output.Run
	var keep []string // the endpoints the first run's claims measure: every run keeps their requests
	for _, d := range runDirs {
		s, claims, err := analyze(d, keep...)
		if err != nil {
			return fmt.Errorf("compare %s: %w", d, err)
		}
		for _, c := range s.Configurations {
			raw, err := filepath.Abs(filepath.Join(d, c.Name, rundir.RawDir))
			if err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			if out == raw || strings.HasPrefix(out, raw+string(filepath.Separator)) {
				return fmt.Errorf("compare: %s: %w", outDir, ErrOutInRaw)
			}
		}
		runs = append(runs, output.Run{S: s, Claims: claims})
		if len(runs) == 1 {
			keep = ingest.ClaimEndpoints(claims)
		}
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := os.Mkdir(out, 0o755); err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("compare: %s: %w", outDir, ErrOutExists)
		}
		return fmt.Errorf("compare: %w", err)
	}
	if err := output.WriteComparison(outDir, runs); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}
