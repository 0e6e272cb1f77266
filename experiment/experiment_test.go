package experiment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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
	if _, err := os.Stat(filepath.Join(res.Dir, rundir.ScenarioFile)); err != nil {
		t.Fatalf("scenario not copied: %v", err)
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
	}
}

// Cancelling the context (the first Ctrl-C) stops the load and still leaves well-formed files,
// with the run and the configuration marked partial.
func TestRunInterruptedLeavesPartialResults(t *testing.T) {
	sc := smoke(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	// Cancel at the first progress line of the first configuration: its load is running.
	w := cancelOnWrite{cancel}
	res, err := experiment.Run(ctx, sc, experiment.Options{ResultsRoot: root, Progress: w, ProgressEvery: 200 * time.Millisecond})
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
	if !run.Partial || len(run.Configurations) != 1 {
		t.Fatalf("run.json: partial %v, configurations %v; want partial with the first only", run.Partial, run.Configurations)
	}
	m := readManifest(t, filepath.Join(res.Dir, run.Configurations[0]))
	if !m.Partial || m.Valid {
		t.Errorf("manifest: partial %v valid %v; want partial and not valid", m.Partial, m.Valid)
	}
	for _, e := range m.Endpoints {
		n, gapless := countRaw(t, filepath.Join(res.Dir, run.Configurations[0], e.RawFile))
		if n != e.Sent || !gapless {
			t.Errorf("%s: raw file has %d results (gapless %v), manifest says %d sent", e.Path, n, gapless, e.Sent)
		}
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
