package experiment_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
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
// a manifest recording the faults' switch times, a resource series and each dependency's
// answers timed on its side.
func TestRunWritesEveryConfiguration(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 3 s)")
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
	// The folder vouches for itself: run.json records its inputs and claims, and every manifest
	// its data files, and all of them still match.
	if errs := rundir.VerifyRun(res.Dir, &run); len(errs) > 0 || len(run.Files) == 0 || run.PID != os.Getpid() {
		t.Errorf("run.json: files %d, pid %d; verify: %v", len(run.Files), run.PID, errs)
	}
	if rundir.InProgress(res.Dir) {
		t.Error("the run folder is still locked after Run returned")
	}
	for _, name := range run.Configurations {
		dir := filepath.Join(res.Dir, name)
		m := readManifest(t, dir)
		if len(m.Endpoints) != 2 {
			t.Fatalf("%s: %d endpoints in manifest", name, len(m.Endpoints))
		}
		if errs := rundir.VerifyConfiguration(dir, &m); len(errs) > 0 {
			t.Errorf("%s: the folder as written does not verify: %v", name, errs)
		}
		for _, f := range []string{"raw/a.json", "raw/b.json", rundir.ResourcesFile, rundir.DependenciesFile} {
			if !slices.ContainsFunc(m.Files, func(r rundir.FileRecord) bool { return r.Path == f }) {
				t.Errorf("%s: the manifest records no %s: %+v", name, f, m.Files)
			}
		}
		for _, e := range m.Endpoints {
			// Open model: every send the pacer scheduled over 3 s at 20/s went out.
			if e.Planned != 60 || e.Scheduled != 60 || e.Sent != e.Scheduled || e.Dropped != 0 {
				t.Errorf("%s %s: planned %d, scheduled %d, sent %d, dropped %d; want 60 sent of 60", name, e.Path, e.Planned, e.Scheduled, e.Sent, e.Dropped)
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
		checkDependencies(t, dir, m)
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
	testenv.Long(t, "runs the smoke scenario (about 1 s per case)")
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
				// Interrupted, not invalid for it: the report judges the phases it completed.
				if !m.Partial || m.State != rundir.StateInterrupted || slices.ContainsFunc(m.Invalid, func(r string) bool { return strings.Contains(r, "interrupt") }) {
					t.Errorf("%s manifest: partial %v state %q invalid %q; want partial, interrupted, not invalid for the interruption", name, m.Partial, m.State, m.Invalid)
				}
				if m.Ended.IsZero() || !m.Ended.After(m.Started) {
					t.Errorf("%s manifest: ended %v; want the moment it stopped, after its start %v", name, m.Ended, m.Started)
				}
				// An interrupted configuration's folder is as its run left it: it verifies.
				if errs := rundir.VerifyConfiguration(filepath.Join(res.Dir, name), &m); len(errs) > 0 {
					t.Errorf("%s: the interrupted folder does not verify: %v", name, errs)
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

// Configuration runs at once run in batches: with two at once over two configurations and two
// repetitions, repetition 1's two runs share the machine, and repetition 2's start only when both
// have ended, so no configuration meets a moment the other does not.
func TestRunInBatches(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario twice over (about 8 s)")
	sc := smoke(t)
	sc.Repetitions = 2
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir(), Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]rundir.Manifest{}
	for _, f := range []string{"shared-r1", "split-r1", "shared-r2", "split-r2"} {
		m[f] = readManifest(t, filepath.Join(res.Dir, f))
	}
	firstEnded := maxTime(m["shared-r1"].Ended, m["split-r1"].Ended)
	for _, f := range []string{"shared-r2", "split-r2"} {
		if !m[f].Started.After(firstEnded) {
			t.Errorf("%s started at %v, before repetition 1's last run ended at %v", f, m[f].Started, firstEnded)
		}
	}
	if d := m["shared-r1"].Started.Sub(m["split-r1"].Started).Abs(); d > time.Second {
		t.Errorf("repetition 1's runs started %v apart; want together", d)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
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

// checkDependencies checks a configuration's dependencies.csv against its raw results: both
// dependencies are metered where the service called them; every call that reached a dependency
// ended (answered, abandoned or cut) by the last row; B, never faulted, answered exactly the /b
// requests that succeeded; and A's answers in the latency phase took at least the toxic's delay.
func checkDependencies(t *testing.T, dir string, m rundir.Manifest) {
	t.Helper()
	if len(m.Meters) != 2 {
		t.Fatalf("manifest meters = %+v, want A and B", m.Meters)
	}
	for _, mt := range m.Meters {
		if mt.Unmetered != "" || mt.Proxy == "" || mt.Listen != m.Target.Listen["proxy:"+mt.Dependency] {
			t.Errorf("meter %+v: want it metered, where the service called %s (%s), with the proxy behind it",
				mt, mt.Dependency, m.Target.Listen["proxy:"+mt.Dependency])
		}
	}
	ds, err := rundir.ReadDependencies(filepath.Join(dir, rundir.DependenciesFile))
	if err != nil {
		t.Fatal(err)
	}
	arrived, ended := map[string]int{}, map[string]int{}
	answered := map[string]int{}
	var slowA time.Duration
	lat := m.Phases[1]
	for _, d := range ds {
		arrived[d.Dependency] += d.Arrived
		ended[d.Dependency] += d.Answered + d.Abandoned + d.Cut
		answered[d.Dependency] += d.Answered
		if d.Dependency == "A" && d.T-d.Interval >= lat.Start+100*time.Millisecond && d.T <= lat.End && d.Answered > 0 {
			if q, _ := d.Times.Quantile(0.5); slowA == 0 || q < slowA {
				slowA = q
			}
		}
	}
	last := map[string]int{}
	for _, d := range ds {
		last[d.Dependency] = d.InFlight
	}
	for dep, n := range last {
		if n != 0 {
			t.Errorf("%s: %d calls still in flight after the load ended", dep, n)
		}
	}
	for _, dep := range []string{"A", "B"} {
		if arrived[dep] == 0 || ended[dep] != arrived[dep] {
			t.Errorf("%s: %d calls arrived, %d ended; want every arrived call ended", dep, arrived[dep], ended[dep])
		}
	}
	okB := 0
	for _, e := range m.Endpoints {
		if e.Path != "/b" {
			continue
		}
		err := rundir.ReadRaw(filepath.Join(dir, e.RawFile), func(r *vegeta.Result) error {
			if r.Code == 200 {
				okB++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if answered["B"] != okB {
		t.Errorf("B answered %d calls, /b succeeded %d times; want the same", answered["B"], okB)
	}
	if want := 450 * time.Millisecond * 95 / 100; slowA < want { // a bucket is 9% wide
		t.Errorf("A's least interval median in the latency phase = %v, want at least the toxic's 450 ms (less a bucket)", slowA)
	}
}
