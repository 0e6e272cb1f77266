package rundir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrOutside is wrapped by Inside when a name would lead out of the run folder.
var ErrOutside = errors.New("leads outside the run folder")

// Inside returns dir joined with rel when that stays inside dir: rel must be a local path (no
// "..", not absolute, not empty) and, where it exists, must not resolve through a symlink to a
// place outside dir. Run folders travel between machines, so names read from run.json or a
// manifest are data, not trusted paths. A path that does not exist yet is checked as far as it
// exists.
func Inside(dir, rel string) (string, error) {
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%q: %w", rel, ErrOutside)
	}
	path := filepath.Join(dir, rel)
	// Compare absolute paths: EvalSymlinks keeps a relative path relative, and "." is no prefix
	// of "shared" although it holds it (bulkhead report . inside a run folder).
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	// Resolve the longest existing prefix of path.
	probe := filepath.Join(abs, rel)
	for {
		real, err := filepath.EvalSymlinks(probe)
		if err == nil {
			if real != root && !strings.HasPrefix(real, root+string(filepath.Separator)) {
				return "", fmt.Errorf("%q resolves to %s: %w", rel, real, ErrOutside)
			}
			return path, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(probe)
		if parent == probe || len(parent) < len(abs) {
			return path, nil
		}
		probe = parent
	}
}

// CheckName returns an error unless name can be a folder name inside a run folder: one path
// element, not "." or "..", no separator, not one of the run folder's own files.
func CheckName(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("configuration name %q: not a folder name", name)
	case strings.ContainsAny(name, `/\`) || strings.ContainsRune(name, 0):
		return fmt.Errorf("configuration name %q: contains a path separator: %w", name, ErrOutside)
	}
	for _, own := range OwnFiles {
		if name == own {
			return fmt.Errorf("configuration name %q: is one of the run folder's own files", name)
		}
	}
	return nil
}

// OwnFiles are the names the run folder itself uses at its top level.
var OwnFiles = []string{RunFile, ScenarioFile, ClaimsFile, SummaryFile, ReportFile, PlotsDir, TargetFilesDir, "compare.md"}

// NotSymlink returns an error when path exists and is a symlink: a folder of outputs (plots/)
// is never written through one, since it could lead anywhere.
func NotSymlink(path string) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symlink; refusing to write through it", path)
	}
	return nil
}
