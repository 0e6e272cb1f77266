package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// ErrOutInRaw is returned by Compare when the output folder lies inside a raw results folder.
var ErrOutInRaw = errors.New("output folder inside a raw results folder")

// ErrOutExists is returned by Compare when the output folder already exists: a comparison never
// overwrites earlier results.
var ErrOutExists = errors.New("output folder already exists; choose a new one")

// Analyze reads the run folder runDir and computes its Summary without writing anything. It
// blocks while it streams every raw file (one configuration at a time, holding about 24 bytes per
// request of that configuration). It fails if run.json or a manifest cannot be read or a raw file
// is corrupt; a configuration listed in run.json but missing on disk only fails the run when the
// run is not marked partial (then it makes the run invalid instead).
func Analyze(runDir string) (*Summary, error) {
	return analyze(runDir, DefaultBucket)
}

func analyze(runDir string, bucket time.Duration) (*Summary, error) {
	run, err := readRun(runDir)
	if err != nil {
		return nil, err
	}
	s := &Summary{Scenario: run.Scenario, RunID: run.RunID, Description: run.Description, Command: run.Command,
		Partial: run.Partial, Valid: true, BucketS: bucket.Seconds(), LatencyBinsMS: HistogramEdgesMS(), dir: runDir}
	claims, note := readClaims(runDir)
	keep := claimEndpoints(claims)
	for _, name := range run.Configurations {
		why, err := missingConfiguration(runDir, name)
		if err != nil {
			return nil, err
		}
		if why != "" {
			s.Invalid = append(s.Invalid, name+": "+why)
			s.Missing = append(s.Missing, name)
			continue
		}
		c, err := loadConfiguration(runDir, name, bucket, keep)
		if err != nil {
			return nil, err
		}
		if s.Scenario == "" {
			s.Scenario = c.manifest.Scenario
		}
		summarizeGroups(c) // many endpoints: one row and one invalid reason per group (groups.go)
		markReached(c)
		if !c.Valid {
			if len(c.Invalid) == 0 {
				s.Invalid = append(s.Invalid, name+": manifest marked invalid")
			}
			for _, r := range c.Invalid {
				s.Invalid = append(s.Invalid, name+": "+r)
			}
		}
		s.Configurations = append(s.Configurations, *c)
	}
	if len(s.Configurations) == 0 {
		s.Invalid = append(s.Invalid, "no configuration has data: the run stopped before its first configuration finished starting")
	}
	s.Valid = len(s.Invalid) == 0
	s.Aggregates = aggregate(s.Configurations)
	roles, rnote := readRoles(runDir)
	s.Roles = roles
	s.groupRoles()
	if note == "" {
		note = rnote
	}
	s.judge(claims, note)
	return s, nil
}

// markReached marks the phases of an interrupted configuration that it never got to, and the
// one it was cut short in, so that no report says of a phase that never ran that nothing ran out
// and no request failed. The interruption time is the manifest's end; a configuration without
// one (the process died) keeps every phase as reached.
func markReached(c *Configuration) {
	for i := range c.Phases {
		c.Phases[i].Reached = true
	}
	m := c.manifest
	if !c.Partial || m == nil || m.Ended.IsZero() || !m.Ended.After(m.Started) {
		return
	}
	at := m.Ended.Sub(m.Started)
	sec := at.Seconds()
	c.InterruptedAtS = &sec
	for i := range c.Phases {
		ph := &c.Phases[i]
		switch {
		case at <= ph.start:
			ph.Reached = false
			ph.Sentence = fmt.Sprintf("not reached (the run was interrupted at %.1f s)", sec)
		case at < ph.end:
			ph.CutShort = true
			ph.Sentence += fmt.Sprintf(" (the phase was cut short: the run was interrupted at %.1f s)", sec)
		}
	}
}

// Generate analyses runDir (see Analyze) and writes summary.json, report.md and the plots
// (plots/*.png and *.svg) into it, replacing earlier ones. It never writes inside a configuration
// folder. It blocks until every file is written; on error some outputs may already have been
// replaced (each file is written atomically), and the Summary is returned when the analysis
// itself succeeded.
func Generate(runDir string) (*Summary, error) {
	return GenerateWith(runDir, GenerateOptions{})
}

// GenerateOptions tunes GenerateWith. The zero value is what Generate does.
type GenerateOptions struct {
	// MemberStats keeps, for a run whose endpoints were grouped (more than eight endpoints: the
	// faulted ones alone, the rest as "others (N)"), every member's attack, pools, per-phase
	// statistics and aggregates in summary.json. Off by default: for seed 003's 500 partners they
	// make summary.json about 12 MB, against well under 1 MB with the groups' figures alone.
	// report.md and the plots show groups either way.
	MemberStats bool
}

// GenerateWith is Generate with options.
func GenerateWith(runDir string, o GenerateOptions) (*Summary, error) {
	return generate(runDir, DefaultBucket, true, o)
}

func generate(runDir string, bucket time.Duration, plots bool, o ...GenerateOptions) (*Summary, error) {
	var opt GenerateOptions
	if len(o) > 0 {
		opt = o[0]
	}
	s, err := analyze(runDir, bucket)
	if err != nil {
		return nil, err
	}
	jobs := s.plotJobs()
	if plots {
		if err := rundir.NotSymlink(filepath.Join(runDir, rundir.PlotsDir)); err != nil {
			return s, err
		}
		if err := drawAll(filepath.Join(runDir, rundir.PlotsDir), jobs); err != nil {
			return s, err
		}
	}
	if err := rundir.WriteFile(filepath.Join(runDir, rundir.ReportFile), []byte(s.markdown(jobs))); err != nil {
		return s, fmt.Errorf("write report: %w", err)
	}
	js := s
	if !opt.MemberStats {
		js = s.withoutMembers()
	}
	if err := rundir.WriteJSON(filepath.Join(runDir, rundir.SummaryFile), js); err != nil {
		return s, fmt.Errorf("write summary: %w", err)
	}
	return s, nil
}

// Verdicts returns a few lines for a terminal: each verdict with its evidence, then the
// exhausted-resource sentence of every phase that had a fault or failures, or that an
// interrupted run never reached.
func (s *Summary) Verdicts() string {
	var b strings.Builder
	if !s.Valid {
		fmt.Fprintf(&b, "no verdicts: the run is invalid: %s\n", strings.Join(s.Invalid, "; "))
	}
	s.claimVerdicts(&b)
	for _, c := range s.Configurations {
		for _, ph := range c.Phases {
			if len(ph.Faults) > 0 || ph.Cause != nil || !ph.Reached {
				fmt.Fprintf(&b, "%s, %s: %s\n", c.Name, ph.Name, ph.Sentence)
			}
		}
	}
	return b.String()
}

// Compare analyses each run folder and writes into outDir a compare.md laying the runs side by
// side (verdicts, and the unaffected endpoint's figures per configuration) and comparison plots
// under outDir/plots. outDir must not exist yet (ErrOutExists: earlier results are never
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
	var sums []*Summary
	for _, d := range runDirs {
		s, err := Analyze(d)
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
		sums = append(sums, s)
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
	jobs := compareJobs(sums)
	if err := drawAll(filepath.Join(outDir, rundir.PlotsDir), jobs); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if err := rundir.WriteFile(filepath.Join(outDir, "compare.md"), []byte(compareMarkdown(sums, jobs))); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	return nil
}
