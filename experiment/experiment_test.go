package experiment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// smoke loads the built-in smoke scenario (3 s, 20/s per endpoint, A at 0.9x the timeout for 2 s).
func smoke(t *testing.T) *scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Open("smoke")
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func readManifest(t *testing.T, dir string) rundir.Manifest {
	t.Helper()
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// countRaw returns the number of results in a raw file and whether Seq ran 0..n-1 without gaps.
func countRaw(t *testing.T, path string) (n uint64, gapless bool) {
	t.Helper()
	seen := map[uint64]bool{}
	err := rundir.ReadRaw(path, func(r *vegeta.Result) error {
		seen[r.Seq] = true
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(0); i < n; i++ {
		if !seen[i] {
			return n, false
		}
	}
	return n, true
}

// A full run writes one folder per configuration with every scheduled request in its raw file,
// a manifest recording the faults' switch times, and a resource series.
func TestRunWritesEveryConfiguration(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the smoke scenario (about 3 s)")
	}
	sc := smoke(t)
	root := t.TempDir()
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: root})
	if err != nil {
		t.Fatal(err)
	}
	if res.Partial {
		t.Fatal("a complete run is marked partial")
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(res.Dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if len(run.Configurations) != len(sc.Configurations) {
		t.Fatalf("run.json lists %v, want %d configurations", run.Configurations, len(sc.Configurations))
	}
	// The scenario as run loads back to what ran; the file as given is kept beside it.
	asRun, err := scenarios.Load(filepath.Join(res.Dir, rundir.ScenarioFile))
	if err != nil {
		t.Fatalf("scenario as run: %v", err)
	}
	if asRun.Duration() != sc.Duration() || len(asRun.Configurations) != len(sc.Configurations) {
		t.Errorf("scenario as run: %s, %d configurations; ran %s, %d", asRun.Duration(), len(asRun.Configurations), sc.Duration(), len(sc.Configurations))
	}
	if src, err := os.ReadFile(filepath.Join(res.Dir, rundir.ScenarioSourceFile)); err != nil || string(src) != string(sc.Raw) {
		t.Errorf("scenario source not kept as given: %v", err)
	}
	for _, name := range run.Configurations {
		dir := filepath.Join(res.Dir, name)
		m := readManifest(t, dir)
		if len(m.Endpoints) != 2 {
			t.Fatalf("%s: %d endpoints in manifest", name, len(m.Endpoints))
		}
		for _, e := range m.Endpoints {
			// Open model: every send the pacer scheduled over 3 s at 20/s went out.
			if e.Scheduled != 60 || e.Sent != e.Scheduled || e.Dropped != 0 {
				t.Errorf("%s %s: scheduled %d, sent %d, dropped %d; want 60 sent of 60", name, e.Path, e.Scheduled, e.Sent, e.Dropped)
			}
			n, gapless := countRaw(t, filepath.Join(dir, e.RawFile))
			if n != e.Sent || !gapless {
				t.Errorf("%s %s: raw file has %d results (gapless %v), manifest says %d sent", name, e.Path, n, gapless, e.Sent)
			}
		}
		f := m.Phases[1].Faults[0]
		if f.AppliedAt < m.Phases[1].Start || f.RemovedAt < f.AppliedAt {
			t.Errorf("%s: fault switched at %s..%s, phase %s..%s", name, f.AppliedAt, f.RemovedAt, m.Phases[1].Start, m.Phases[1].End)
		}
		rs, err := rundir.ReadResources(filepath.Join(dir, rundir.ResourcesFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			t.Errorf("%s: no resource samples", name)
		}
		// The machine's steal time while the load ran is recorded where Linux accounts it.
		if runtime.GOOS == "linux" && (m.Load == nil || m.Load.Steal == nil || *m.Load.Steal < 0 || *m.Load.Steal > 1) {
			t.Errorf("%s: load %+v; want the machine's steal, a share in [0, 1]", name, m.Load)
		}
	}
}

// Cancelling the context (the first Ctrl-C) stops the load and still leaves well-formed files,
// with the run and every started configuration marked partial and interrupted; run.json names
// every planned configuration; one after another, the second configuration never starts (no
// folder); at once, both stop.
func TestRunInterruptedLeavesPartialResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the smoke scenario (about 1 s per case)")
	}
	tests := []struct {
		name     string
		parallel int
		want     int // configuration folders started
	}{
		{"one after another", 1, 1},
		{"at once", 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := smoke(t)
			root := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			// Cancel at the first progress line: some configuration's load is running.
			w := cancelOnWrite{cancel}
			res, err := experiment.Run(ctx, sc, experiment.Options{ResultsRoot: root, Parallel: tt.parallel, Progress: w, ProgressEvery: 200 * time.Millisecond})
			cancel()
			if !errors.Is(err, experiment.ErrInterrupted) {
				t.Fatalf("err = %v, want ErrInterrupted", err)
			}
			if res == nil || !res.Partial {
				t.Fatalf("result %+v, want partial", res)
			}
			var run rundir.Run
			if err := rundir.ReadJSON(filepath.Join(res.Dir, rundir.RunFile), &run); err != nil {
				t.Fatal(err)
			}
			if !run.Partial || run.State != rundir.StateInterrupted || len(run.Configurations) != len(sc.Configurations) || run.Parallel != tt.parallel {
				t.Fatalf("run.json: partial %v, state %q, configurations %v, parallel %d; want partial, interrupted, all %d, parallel %d",
					run.Partial, run.State, run.Configurations, run.Parallel, len(sc.Configurations), tt.parallel)
			}
			started := 0
			for _, name := range run.Configurations {
				if _, err := os.Stat(filepath.Join(res.Dir, name)); err != nil {
					continue // never started
				}
				started++
				// Interrupted while it was starting: the folder says so instead of a manifest.
				if b, err := os.ReadFile(filepath.Join(res.Dir, name, experiment.StartErrorFile)); err == nil {
					if !strings.Contains(string(b), "interrupted") {
						t.Errorf("%s: %s says %q; want that it was interrupted", name, experiment.StartErrorFile, b)
					}
					continue
				}
				m := readManifest(t, filepath.Join(res.Dir, name))
				if !m.Partial || m.Valid || m.State != rundir.StateInterrupted {
					t.Errorf("%s manifest: partial %v valid %v state %q; want partial, not valid, interrupted", name, m.Partial, m.Valid, m.State)
				}
				for _, e := range m.Endpoints {
					n, gapless := countRaw(t, filepath.Join(res.Dir, name, e.RawFile))
					if n != e.Sent || !gapless {
						t.Errorf("%s %s: raw file has %d results (gapless %v), manifest says %d sent", name, e.Path, n, gapless, e.Sent)
					}
				}
			}
			if started != tt.want {
				t.Errorf("%d configurations started, want %d", started, tt.want)
			}
		})
	}
}

// Two runs never share a folder, so earlier results are never overwritten.
func TestRunNeverReusesAFolder(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	a, _, err := rundir.Create(root, "x", now)
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := rundir.Create(root, "x", now)
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("both runs got %s", a)
	}
}

// An unreachable external Toxiproxy fails before anything is written.
func TestRunUnreachableToxiproxyWritesNothing(t *testing.T) {
	root := t.TempDir()
	_, err := experiment.Run(context.Background(), smoke(t), experiment.Options{ResultsRoot: root, Toxiproxy: "http://127.0.0.1:1"})
	if err == nil {
		t.Fatal("want an error for an unreachable toxiproxy")
	}
	entries, _ := os.ReadDir(root)
	if len(entries) != 0 {
		t.Fatalf("results folder has %d entries after a failed start", len(entries))
	}
}

// cancelOnWrite cancels a context at the first write.
type cancelOnWrite struct{ cancel context.CancelFunc }

func (c cancelOnWrite) Write(p []byte) (int, error) { c.cancel(); return len(p), nil }
