package ingest

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Run reads the run folder runDir into a Summary: every configuration's statistics, time line
// (buckets of width bucket) and exhausted resources, the endpoint groups of a run with many
// endpoints, and the declared roles. It also returns the scenario's claims (claims.json) and a
// note saying why they or the roles could not be read ("" when they could). The Summary's
// Aggregates and Verdict are left for the caller (package report fills them).
//
// It blocks while it streams every raw file (one configuration at a time, holding about 24
// bytes per request of that configuration; the requests of the endpoints a claim measures are
// kept on the configuration for the verdict engine, and so are those of the headline's: the
// declared unaffected endpoints, or without roles those calling no faulted dependency, and every
// endpoint group's). It fails if run.json or a manifest cannot
// be read or a raw file is corrupt; a configuration listed in run.json but missing on disk only
// fails the run when the run is not marked partial (then it makes the run invalid instead).
// keepAlso names more endpoints whose requests to keep (a comparison judging one run's claims on
// another run).
func Run(runDir string, bucket time.Duration, keepAlso ...string) (*model.Summary, []claim.Claim, string, error) {
	run, madeUp, err := readRun(runDir)
	if err != nil {
		return nil, nil, "", err
	}
	s := &model.Summary{SchemaVersion: model.SchemaVersion, Scenario: run.Scenario, RunID: run.RunID, Description: run.Description, Command: run.Command,
		Partial: run.Partial, Valid: true, BucketS: bucket.Seconds(), LatencyBinsMS: stats.HistogramEdgesMS(), Dir: runDir}
	// The folder is held to what the runner recorded (rundir.VerifyRun, VerifyConfiguration):
	// every way it differs makes it invalid, naming the file.
	if madeUp {
		s.Invalid = append(s.Invalid, rundir.RunFile+": missing: the run's own record, without which none of its files can be verified")
	} else {
		for _, e := range rundir.VerifyRun(runDir, run) {
			s.Invalid = append(s.Invalid, e.Error())
		}
	}
	claims, note := readClaims(runDir, run)
	if p := claimsProblem(runDir, run, claims, note); p != "" {
		s.Invalid = append(s.Invalid, p)
	}
	roles, rnote := readRoles(runDir)
	keep := claimEndpoints(claims)
	for _, ep := range append(roles.Unaffected, keepAlso...) {
		keep[ep] = true // the headline's endpoint (package headline), and those the caller asks for
	}
	for _, name := range run.Configurations {
		why, err := missingConfiguration(runDir, name)
		if err != nil {
			return nil, nil, "", err
		}
		if why != "" {
			// A partial run is judged as far as it got: what it never reached or lost to the
			// interruption is said, not held against the rest. A start that failed is a failure.
			if run.Partial && !madeUp && (!strings.HasPrefix(why, "not started: ") || strings.Contains(why, "interrupted")) {
				s.NotReached = append(s.NotReached, name+": "+why)
			} else {
				s.Invalid = append(s.Invalid, name+": "+why)
			}
			s.Missing = append(s.Missing, name)
			continue
		}
		// A configuration whose files are not what the runner wrote is not analysed: no figure
		// of it is believed. One whose manifest merely says what cannot be is analysed, invalid.
		problems, changed, err := verifyConfiguration(runDir, name)
		if err != nil {
			return nil, nil, "", err
		}
		if changed {
			for _, p := range problems {
				s.Invalid = append(s.Invalid, name+": not analysed: "+p)
			}
			s.Missing = append(s.Missing, name)
			continue
		}
		c, err := loadConfiguration(runDir, name, bucket, keep)
		// A result no measurement gives, or files that do not read in a folder already found
		// wanting (a cut-off folder edited to say complete): not analysed, and said why.
		if errors.Is(err, rundir.ErrIntegrity) || err != nil && len(problems) > 0 {
			for _, p := range problems {
				s.Invalid = append(s.Invalid, name+": "+p)
			}
			s.Invalid = append(s.Invalid, name+": not analysed: "+err.Error())
			s.Missing = append(s.Missing, name)
			continue
		}
		if err != nil {
			return nil, nil, "", err
		}
		if len(problems) > 0 {
			c.Valid = false
			c.Invalid = append(c.Invalid, problems...)
		}
		if s.Scenario == "" {
			s.Scenario = c.Manifest.Scenario
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
		// Nothing to judge, so nothing was judged as far as it got: the configurations the
		// interruption took are why, and the reason says so itself (a CI reading the verdict
		// block's invalid list sees "cut off", not only that nothing is left).
		why := "no configuration has data to analyse"
		if len(s.NotReached) > 0 {
			why += " (" + strings.Join(s.NotReached, "; ") + ")"
		}
		s.Invalid = append(s.Invalid, why)
	}
	s.Valid = len(s.Invalid) == 0
	s.Roles = roles
	groupRoles(s)
	if note == "" {
		note = rnote
	}
	return s, claims, note, nil
}

// verifyConfiguration checks configuration name's folder against its manifest
// (rundir.VerifyConfiguration) and returns the problems found, and whether a file is not what
// the runner wrote (rundir.ErrChanged). It fails only when the manifest cannot be read.
func verifyConfiguration(runDir, name string) (problems []string, changed bool, err error) {
	dir, err := rundir.Inside(runDir, name)
	if err != nil {
		return nil, false, fmt.Errorf("configuration %s: %w", name, err)
	}
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		return nil, false, fmt.Errorf("configuration %s: read manifest: %w", name, err)
	}
	for _, e := range rundir.VerifyConfiguration(dir, &m) {
		problems = append(problems, e.Error())
		changed = changed || errors.Is(e, rundir.ErrChanged)
	}
	return problems, changed, nil
}

// markReached marks the phases of an interrupted configuration that it never got to, and the
// one it was cut short in, so that no report says of a phase that never ran that nothing ran out
// and no request failed. The interruption time is the manifest's end; a configuration without
// one (the process died) keeps every phase as reached.
func markReached(c *model.Configuration) {
	for i := range c.Phases {
		c.Phases[i].Reached = true
	}
	m := c.Manifest
	if !c.Partial || m == nil || m.Ended.IsZero() || !m.Ended.After(m.Started) {
		return
	}
	at := m.Ended.Sub(m.Started)
	sec := at.Seconds()
	c.InterruptedAtS = &sec
	for i := range c.Phases {
		ph := &c.Phases[i]
		switch {
		case at <= ph.Start:
			ph.Reached = false
			ph.Sentence = fmt.Sprintf("not reached (the run was interrupted at %.1f s)", sec)
		case at < ph.End:
			ph.CutShort = true
			ph.Sentence += fmt.Sprintf(" (the phase was cut short: the run was interrupted at %.1f s)", sec)
		}
	}
}

// ClaimEndpoints returns the endpoints whose requests claims measure, sorted.
func ClaimEndpoints(claims []claim.Claim) []string {
	return slices.Sorted(maps.Keys(claimEndpoints(claims)))
}
