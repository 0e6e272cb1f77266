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
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
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
		{"runner SIGKILLed while both configurations ran: run.json and every manifest still say running", func(t *testing.T, dir string) {
			var run rundir.Run
			if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
				t.Fatal(err)
			}
			run.State = rundir.StateRunning
			if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
				t.Fatal(err)
			}
			for _, name := range []string{"shared", "split"} {
				path := filepath.Join(dir, name, rundir.ManifestFile)
				var m rundir.Manifest
				if err := rundir.ReadJSON(path, &m); err != nil {
					t.Fatal(err)
				}
				m.State, m.Partial, m.Valid, m.Ended = rundir.StateRunning, true, false, time.Time{}
				if err := rundir.WriteJSON(path, m); err != nil {
					t.Fatal(err)
				}
			}
		}, false, []string{"shared", "split"}, "no configuration has data to analyse (shared: cut off: the process ended while this configuration was running"},
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

// A run folder cannot be talked into lying (issue 23): every way of changing it after the run
// that once passed is refused, with the reason naming the file. Files that are not what the
// runner wrote leave their configuration not analysed (no figure of it is shown); a manifest that
// says what cannot be makes the run invalid.
func TestFolderCannotBeTalkedIntoLying(t *testing.T) {
	editFile := func(name string, f func(lines []string) []string) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, "split", rundir.RawDir, name)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			lines = lines[:len(lines)-1] // after the last newline: nothing
			if err := os.WriteFile(p, []byte(strings.Join(f(lines), "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	editRaw := func(f func(lines []string) []string) func(*testing.T, string) { return editFile("b.json", f) }
	manifest := func(f func(m *rundir.Manifest)) func(*testing.T, string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, "split", rundir.ManifestFile)
			var m rundir.Manifest
			if err := rundir.ReadJSON(p, &m); err != nil {
				t.Fatal(err)
			}
			f(&m)
			if err := rundir.WriteJSON(p, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name    string
		damage  func(t *testing.T, dir string)
		missing bool   // split is not analysed
		reason  string // in the run's invalid reasons
	}{
		{"a raw file emptied", editRaw(func([]string) []string { return nil }), true, "split: not analysed: integrity: raw/b.json: 0 lines"},
		{"a raw file halved", editRaw(func(l []string) []string { return l[:len(l)/2] }), true, "raw/b.json: 400 lines"},
		{"a raw file's failures filtered out", editFile("a.json", func(l []string) []string {
			return slices.DeleteFunc(l, func(s string) bool { return strings.Contains(s, "rejected") })
		}), true, "split: not analysed: integrity: raw/a.json: "},
		{"a raw file duplicated at a line boundary", editRaw(func(l []string) []string { return append(l, l...) }), true, "raw/b.json: 1600 lines"},
		{"resources.csv deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "split", rundir.ResourcesFile)) }, true,
			"split: not analysed: integrity: resources.csv: missing"},
		{"a SIGKILLed configuration's manifest edited to complete and valid", manifest(func(m *rundir.Manifest) {
			m.State, m.Valid, m.Partial, m.Invalid, m.Ended, m.Files = rundir.StateComplete, true, false, nil, time.Time{}, nil
		}), false, "split: integrity: manifest.json: no end after its start"},
		{"a manifest without a state", manifest(func(m *rundir.Manifest) { m.State = "" }), false,
			"split: integrity: manifest.json: no state: a manifest that never said how its configuration ended is not complete"},
		{"a sent count above the plan", manifest(func(m *rundir.Manifest) { m.Endpoints[1].Planned = m.Endpoints[1].Scheduled - 1 }), false,
			"split: integrity: manifest.json: endpoint /b: 800 scheduled, more than the plan's 799"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := hypothesis().write(t, t.TempDir())
			tt.damage(t, dir)
			s, err := Analyze(dir)
			if err != nil {
				t.Fatalf("Analyze: %v", err)
			}
			why := strings.Join(s.Invalid, "\n")
			if s.Valid || s.Verdict.Outcome != model.OutcomeInvalid || !strings.Contains(why, tt.reason) {
				t.Errorf("valid %v, outcome %s, reasons:\n%s\nwant invalid, saying %q", s.Valid, s.Verdict.Outcome, why, tt.reason)
			}
			if got := slices.Contains(s.Missing, "split"); got != tt.missing {
				t.Errorf("split not analysed: %v, want %v", got, tt.missing)
			}
		})
	}

	t.Run("a well-formed result with a negative latency", func(t *testing.T) {
		dir := hypothesis().write(t, t.TempDir())
		editRaw(func(l []string) []string {
			l[3] = strings.Replace(l[3], `"latency":`, `"latency":-5,"was":`, 1)
			return l
		})(t, dir)
		rundirtest.Seal(t, dir) // as if the runner had written it so
		s, err := Analyze(dir)
		if err != nil {
			t.Fatalf("Analyze: %v", err)
		}
		if why := strings.Join(s.Invalid, "\n"); s.Valid || !strings.Contains(why, "b.json: result 3: latency -5ns is negative") {
			t.Errorf("valid %v, reasons:\n%s\nwant the negative latency refused, naming the file and the result", s.Valid, why)
		}
	})
}

// A run in progress is reported as in progress, never as ended: while its runner holds the
// folder's lock nothing is read; once the lock is gone (the runner died) the same folder is cut
// off.
func TestRunInProgress(t *testing.T) {
	dir := hypothesis().write(t, t.TempDir())
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	run.State, run.PID, run.Host = rundir.StateRunning, 4242, "lab"
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
		t.Fatal(err)
	}
	rundirtest.Seal(t, dir)
	lock, err := rundir.LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Generate(dir)
	if !errors.Is(err, ErrInProgress) || !strings.Contains(err.Error(), "pid 4242 on lab") {
		t.Errorf("Generate on a run in progress = %v; want ErrInProgress naming its runner", err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err == nil {
		t.Error("a summary was written into a run in progress")
	}
	lock.Unlock()
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Partial {
		t.Error("a run whose runner is gone while it said running is not partial")
	}
}
