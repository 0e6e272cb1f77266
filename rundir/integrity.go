package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// ErrIntegrity is wrapped by every error that says a run folder's files are not what the runner
// wrote, or its manifests say what cannot be (see VerifyRun and VerifyConfiguration).
var ErrIntegrity = errors.New("integrity")

// ErrChanged is wrapped, with ErrIntegrity, by the errors that say a file is not what the
// runner wrote: missing, changed since, or never written by it. A reader believes nothing of a
// folder that has one; the other integrity errors (a manifest without a state, without records,
// with impossible counts) make the folder invalid but leave its files readable.
var ErrChanged = errors.New("not what the runner wrote")

// FileRecord is one data file of a run folder as the runner left it: its size, its line count
// and its SHA-256. The runner records every data file of a configuration folder in the
// manifest when the configuration ends (Manifest.Files), and the run folder's own inputs in
// run.json (Run.Files); the report believes a file only when it still matches.
type FileRecord struct {
	// Path is slash-separated and relative to the folder whose record holds it.
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
	// Lines counts newline-terminated lines, plus one for a last line without a newline: for raw
	// results (JSON lines) the number of results.
	Lines  int64  `json:"lines"`
	SHA256 string `json:"sha256"`
}

// DataFile reports whether the file at rel (slash-separated, relative to a configuration folder)
// is one of its data files, which the runner records and the report verifies: every regular
// file except the manifest itself (which holds the records), the logs of processes that may
// still be writing when the configuration ends (*.log: a target's stdout and stderr, written
// until it stops after its manifest) and hidden files (the temporary files of atomic writes).
// Any new file a configuration's run writes is a data file by this rule, without being named
// here: the raw files of every shard, dependencies.csv, the load generator's event log.
func DataFile(rel string) bool {
	base := path.Base(rel)
	return rel != ManifestFile && !strings.HasSuffix(base, ".log") && !strings.HasPrefix(base, ".")
}

// tally counts and hashes what is written through it.
type tally struct {
	h     hash.Hash
	bytes int64
	lines int64
	last  byte
}

func newTally() *tally { return &tally{h: sha256.New(), last: '\n'} }

func (t *tally) Write(p []byte) (int, error) {
	t.h.Write(p)
	t.bytes += int64(len(p))
	t.lines += int64(bytes.Count(p, []byte{'\n'}))
	if len(p) > 0 {
		t.last = p[len(p)-1]
	}
	return len(p), nil
}

func (t *tally) record(rel string) FileRecord {
	lines := t.lines
	if t.last != '\n' {
		lines++
	}
	return FileRecord{Path: rel, Bytes: t.bytes, Lines: lines, SHA256: hex.EncodeToString(t.h.Sum(nil))}
}

// RecordFile reads the file at dir/rel to its end and returns its record. It fails when the file
// cannot be read or is not a regular file.
func RecordFile(dir, rel string) (FileRecord, error) {
	p := filepath.Join(dir, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil {
		return FileRecord{}, err
	}
	if !fi.Mode().IsRegular() {
		return FileRecord{}, fmt.Errorf("%s: not a regular file (%s)", rel, fi.Mode().Type())
	}
	f, err := os.Open(p)
	if err != nil {
		return FileRecord{}, err
	}
	defer f.Close()
	t := newTally()
	if _, err := io.Copy(t, f); err != nil {
		return FileRecord{}, fmt.Errorf("%s: %w", rel, err)
	}
	return t.record(rel), nil
}

// Inputs are the run folder's own files the runner writes before any configuration starts, and
// records in run.json (RecordInputs); the report's outputs beside them are not inputs.
var Inputs = []string{ScenarioFile, ScenarioSourceFile, ClaimsFile, RolesFile}

// RecordInputs records those of the Inputs present in the run folder dir, then every file under
// its TargetFilesDir (the copies CopyInputs made), sorted by path.
func RecordInputs(dir string) ([]FileRecord, error) {
	var out []FileRecord
	rels := slices.Clone(Inputs)
	err := filepath.WalkDir(filepath.Join(dir, TargetFilesDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		rels = append(rels, filepath.ToSlash(rel))
		return err
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("record %s: %w", filepath.Join(dir, TargetFilesDir), err)
	}
	for _, rel := range rels {
		r, err := RecordFile(dir, rel)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", filepath.Join(dir, rel), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// RecordData records every data file (DataFile) under dir, recursively, sorted by path. It
// blocks while it reads them all (about a second per gigabyte); call it once every writer of the
// folder has closed its files.
func RecordData(dir string) ([]FileRecord, error) {
	rels, err := dataFiles(dir)
	if err != nil {
		return nil, err
	}
	out := make([]FileRecord, 0, len(rels))
	for _, rel := range rels {
		r, err := RecordFile(dir, rel)
		if err != nil {
			return nil, fmt.Errorf("record %s: %w", filepath.Join(dir, rel), err)
		}
		out = append(out, r)
	}
	return out, nil
}

// dataFiles lists the data files under dir (slash-separated, sorted), symlinks and other
// non-regular entries included so that a check can refuse them.
func dataFiles(dir string) ([]string, error) {
	var rels []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); DataFile(rel) {
			rels = append(rels, rel)
		}
		return nil
	})
	slices.Sort(rels)
	return rels, err
}

// integrity is an ErrIntegrity naming the file at rel.
func integrity(rel, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrIntegrity, rel, fmt.Sprintf(format, args...))
}

// changed is an ErrIntegrity that is also an ErrChanged.
func changed(rel, format string, args ...any) error {
	return &changedError{integrity(rel, format, args...)}
}

type changedError struct{ error }

func (e *changedError) Unwrap() []error { return []error{e.error, ErrChanged} }

// verifyFile checks the file at dir/r.Path against r.
func verifyFile(dir string, r FileRecord) error {
	if !filepath.IsLocal(filepath.FromSlash(r.Path)) {
		return changed(r.Path, "the record names a file outside the folder")
	}
	got, err := RecordFile(dir, r.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return changed(r.Path, "missing; the runner wrote %s", describe(r))
	}
	if err != nil {
		return changed(r.Path, "%v", err)
	}
	if got.SHA256 != r.SHA256 || got.Bytes != r.Bytes || got.Lines != r.Lines {
		return changed(r.Path, "%s now; the runner wrote %s (removed, cut, edited or duplicated since)", describe(got), describe(r))
	}
	return nil
}

func describe(r FileRecord) string {
	return fmt.Sprintf("%d lines, %d bytes, sha256 %.12s", r.Lines, r.Bytes, r.SHA256)
}

// verifyFiles checks every record against dir and, with complete, that dir holds no data file the
// records do not name.
func verifyFiles(dir string, recs []FileRecord, complete bool) []error {
	var errs []error
	named := map[string]bool{}
	for _, r := range recs {
		named[r.Path] = true
	}
	// Hashing is a full read of every file (most of a large folder's verification): the files
	// are hashed on up to GOMAXPROCS goroutines, their errors kept in the records' order.
	fileErrs := make([]error, len(recs))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, r := range recs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			fileErrs[i] = verifyFile(dir, r)
		})
	}
	wg.Wait()
	for _, err := range fileErrs {
		if err != nil {
			errs = append(errs, err)
		}
	}
	if complete {
		rels, err := dataFiles(dir)
		if err != nil {
			errs = append(errs, integrity(".", "%v", err))
		}
		for _, rel := range rels {
			if !named[rel] {
				errs = append(errs, changed(rel, "not written by the runner (no record of it)"))
			}
		}
	}
	return errs
}

// VerifyRun checks run.json's records against the run folder dir: every input it recorded
// (Run.Files) is there as written, and claims.json is there exactly when the run recorded claims
// (Run.ClaimIDs). It returns one error per problem, each wrapping ErrIntegrity and naming the
// file; none when the folder is as the runner left it. It does not look at the configuration
// folders (VerifyConfiguration) nor at the report's outputs, which are rewritten at will.
func VerifyRun(dir string, run *Run) []error {
	if len(run.Files) == 0 {
		return []error{integrity(RunFile, "records none of the run's files (written by a bulkhead from before it recorded them, or edited): its inputs cannot be verified")}
	}
	recorded := map[string]bool{}
	for _, r := range run.Files {
		recorded[r.Path] = true
	}
	var errs []error
	_, statErr := os.Stat(filepath.Join(dir, ClaimsFile))
	claimsThere := statErr == nil
	switch {
	case len(run.ClaimIDs) > 0 && !claimsThere:
		errs = append(errs, changed(ClaimsFile, "missing, yet the run was judged by %d claim(s) (%s): a run without its claims is not a run without claims",
			len(run.ClaimIDs), strings.Join(run.ClaimIDs, ", ")))
		delete(recorded, ClaimsFile)
	case len(run.ClaimIDs) > 0 && !recorded[ClaimsFile]:
		errs = append(errs, changed(ClaimsFile, "the run recorded %d claim(s) but not their file", len(run.ClaimIDs)))
	}
	for _, own := range []string{ClaimsFile, RolesFile} {
		if _, err := os.Stat(filepath.Join(dir, own)); err == nil && !recorded[own] && !(own == ClaimsFile && len(run.ClaimIDs) > 0) {
			errs = append(errs, changed(own, "not written by the runner (no record of it)"))
		}
	}
	for _, r := range run.Files {
		if recorded[r.Path] {
			if err := verifyFile(dir, r); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// VerifyConfiguration checks the configuration folder dir against its manifest m, which must say
// how its run ended (a manifest still saying StateRunning was cut off and is not verified here):
// a state among the known ones, an end after its start, a record of its files, every data file
// there as recorded and none unrecorded, and counts within physical bounds (no more sent than
// scheduled, no more scheduled than planned, a complete time line scheduled in full, as many
// results in each raw file as the manifest says were sent). It returns one error per problem,
// each wrapping ErrIntegrity and naming the file; none when the folder is as the runner left it.
func VerifyConfiguration(dir string, m *Manifest) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, integrity(ManifestFile, format, args...)) }
	switch m.State {
	case StateComplete, StateInterrupted, StateFailed:
	case "":
		bad("no state: a manifest that never said how its configuration ended is not complete")
	default:
		bad("state %q is not one a configuration's run ends in", m.State)
	}
	if m.Ended.IsZero() || m.Ended.Before(m.Started) {
		bad("no end after its start (started %s, ended %s): its run never ended", m.Started.UTC().Format("15:04:05.000"), m.Ended.UTC().Format("15:04:05.000"))
	}
	if len(m.Files) == 0 {
		bad("records none of the configuration's files: they cannot be verified")
	} else {
		errs = append(errs, verifyFiles(dir, m.Files, true)...)
	}
	lines := map[string]int64{}
	for _, r := range m.Files {
		lines[r.Path] = r.Lines
	}
	wrote := m.State == StateComplete || m.State == StateInterrupted
	for _, e := range m.Endpoints {
		if e.Sent > e.Scheduled {
			bad("endpoint %s: %d sent, more than the %d scheduled", e.Path, e.Sent, e.Scheduled)
		}
		if e.Planned > 0 && e.Scheduled > e.Planned {
			bad("endpoint %s: %d scheduled, more than the plan's %d", e.Path, e.Scheduled, e.Planned)
		}
		if e.Planned > 0 && m.State == StateComplete && !m.Partial && e.Scheduled != e.Planned {
			bad("endpoint %s: %d scheduled of the plan's %d, yet its whole time line ran", e.Path, e.Scheduled, e.Planned)
		}
		if n, ok := lines[filepath.ToSlash(e.RawFile)]; ok && wrote && n != int64(e.Sent) {
			errs = append(errs, integrity(filepath.ToSlash(e.RawFile), "holds %d results; the manifest says %d were sent", n, e.Sent))
		}
	}
	return errs
}
