package report

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// A run folder travels between machines: the names in its run.json and manifests are data. The
// report reads and writes only inside the folder.
func TestReportStaysInsideItsFolder(t *testing.T) {
	phases := []rundir.Phase{{Name: "p", Start: 0, End: 2 * time.Second}}
	newWorld := func() world {
		return world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "shared",
			mode: outcome.ModeShared, pools: sharedPools(10), valid: true}}}
	}
	t.Run("a configuration name with ..", func(t *testing.T) {
		dir := newWorld().write(t, t.TempDir())
		var run rundir.Run
		if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
			t.Fatal(err)
		}
		run.Configurations = []string{"../../elsewhere"}
		if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(dir); !errors.Is(err, rundir.ErrOutside) {
			t.Errorf("Analyze = %v; want an error wrapping ErrOutside", err)
		}
	})
	t.Run("a configuration folder that is a symlink out", func(t *testing.T) {
		outside := newWorld().write(t, t.TempDir())
		dir := t.TempDir()
		if err := os.Symlink(filepath.Join(outside, "shared"), filepath.Join(dir, "shared")); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(outside, rundir.RunFile), filepath.Join(dir, rundir.RunFile)); err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(dir); !errors.Is(err, rundir.ErrOutside) {
			t.Errorf("Analyze = %v; want an error wrapping ErrOutside", err)
		}
	})
	t.Run("a raw file named outside", func(t *testing.T) {
		dir := newWorld().write(t, t.TempDir())
		mpath := filepath.Join(dir, "shared", rundir.ManifestFile)
		var m rundir.Manifest
		if err := rundir.ReadJSON(mpath, &m); err != nil {
			t.Fatal(err)
		}
		m.Endpoints[0].RawFile = "../../../etc/passwd"
		if err := rundir.WriteJSON(mpath, m); err != nil {
			t.Fatal(err)
		}
		if _, err := Analyze(dir); !errors.Is(err, rundir.ErrOutside) {
			t.Errorf("Analyze = %v; want an error wrapping ErrOutside", err)
		}
	})
	t.Run("a plots folder that is a symlink", func(t *testing.T) {
		dir := newWorld().write(t, t.TempDir())
		elsewhere := t.TempDir()
		if err := os.Symlink(elsewhere, filepath.Join(dir, rundir.PlotsDir)); err != nil {
			t.Fatal(err)
		}
		if _, err := Generate(dir); err == nil {
			t.Error("Generate wrote through a plots symlink")
		}
		if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
			t.Errorf("%d files written outside the run folder", len(entries))
		}
	})
}

// The report's memory follows the data, not the declared time line: a 10,000 h scenario that
// ran 3 s gets 3 buckets per endpoint.
func TestTimelineFollowsTheData(t *testing.T) {
	phases := []rundir.Phase{{Name: "forever", Start: 0, End: 10000 * time.Hour}}
	w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "shared", mode: outcome.ModeShared,
		pools: sharedPools(10), valid: true, extra: map[string][]req{"/a": {{t: 2500 * ms_, lat: ms_, class: "ok"}}}}}}
	dir := w.write(t, t.TempDir())
	mpath := filepath.Join(dir, "shared", rundir.ManifestFile)
	var m rundir.Manifest
	if err := rundir.ReadJSON(mpath, &m); err != nil {
		t.Fatal(err)
	}
	m.Ended, m.Partial = time.Time{}, true // killed: no end recorded
	if err := rundir.WriteJSON(mpath, m); err != nil {
		t.Fatal(err)
	}
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	for path, tl := range s.Configurations[0].Timeline {
		if len(tl) != 3 {
			t.Errorf("%s: %d buckets, want 3", path, len(tl))
		}
	}
}

// Every state a run folder can be left in is described truthfully: never "valid" for a
// configuration the folder has no data for.
func TestFolderStates(t *testing.T) {
	phases := []rundir.Phase{{Name: "p", Start: 0, End: 2 * time.Second}}
	two := func() world {
		return world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{
			{name: "shared", mode: outcome.ModeShared, pools: sharedPools(10), valid: true},
			{name: "split", mode: outcome.ModeSplit, pools: splitPools(5), valid: true},
		}}
	}
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		valid   bool
		missing []string
		reason  string // in the folder's reasons, when given
	}{
		{"complete", func(*testing.T, string) {}, true, nil, ""},
		{"second configuration killed before its manifest", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "split", rundir.ManifestFile)); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"split"}, ""},
		{"second configuration cut off: its manifest still says running", func(t *testing.T, dir string) {
			path := filepath.Join(dir, "split", rundir.ManifestFile)
			var m rundir.Manifest
			if err := rundir.ReadJSON(path, &m); err != nil {
				t.Fatal(err)
			}
			m.State, m.Partial, m.Valid = rundir.StateRunning, true, false
			if err := rundir.WriteJSON(path, m); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"split"}, ""},
		{"second configuration interrupted while starting: its start error, raw files still empty", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "split", rundir.ManifestFile)); err != nil {
				t.Fatal(err)
			}
			raws, _ := filepath.Glob(filepath.Join(dir, "split", rundir.RawDir, "*"))
			for _, r := range raws {
				if err := os.Truncate(r, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(dir, "split", rundir.StartErrorFile), []byte("interrupted before the load started\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"split"}, "split: not started: interrupted before the load started"},
		{"second configuration never started", func(t *testing.T, dir string) {
			if err := os.RemoveAll(filepath.Join(dir, "split")); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"split"}, ""},
		{"killed in the first configuration: no run.json, no manifest, raw files", func(t *testing.T, dir string) {
			for _, f := range []string{rundir.RunFile, filepath.Join("shared", rundir.ManifestFile)} {
				if err := os.Remove(filepath.Join(dir, f)); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.RemoveAll(filepath.Join(dir, "split")); err != nil {
				t.Fatal(err)
			}
		}, false, []string{"shared"}, ""},
		{"failed before the first request: run.json without configurations", func(t *testing.T, dir string) {
			if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), rundir.Run{Scenario: "x"}); err != nil {
				t.Fatal(err)
			}
		}, false, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := two().write(t, t.TempDir())
			tt.damage(t, dir)
			s, err := Analyze(dir)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			if s.Valid != tt.valid {
				t.Errorf("valid = %v, want %v (invalid: %q)", s.Valid, tt.valid, s.Invalid)
			}
			if len(s.Missing) != len(tt.missing) || (len(tt.missing) > 0 && s.Missing[0] != tt.missing[0]) {
				t.Errorf("missing = %q, want %q", s.Missing, tt.missing)
			}
			if !tt.valid && len(s.Invalid) == 0 {
				t.Error("an invalid folder without a reason")
			}
			if tt.reason != "" && !slices.ContainsFunc(s.Invalid, func(r string) bool { return strings.Contains(r, tt.reason) }) {
				t.Errorf("reasons %q; want one saying %q", s.Invalid, tt.reason)
			}
		})
	}
}
