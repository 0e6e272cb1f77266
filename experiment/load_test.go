package experiment_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// runningManifest waits (up to 30 s) until the configuration folder named conf of the only run
// under root has a manifest saying its load is running, and returns it.
func runningManifest(t *testing.T, root, conf string) rundir.Manifest {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		paths, _ := filepath.Glob(filepath.Join(root, "*", conf, rundir.ManifestFile))
		if len(paths) == 1 {
			var m rundir.Manifest
			if rundir.ReadJSON(paths[0], &m) == nil && m.State == rundir.StateRunning {
				return m
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no running manifest of %s under %s", conf, root)
	return rundir.Manifest{}
}

// With the load generator in a child process (`bulkhead attack`, here the test binary), a run
// writes the same folder as in-process: every scheduled request in its raw file, gapless, the
// checks in the manifest, and a report that reads them; the manifest and run.json say where the
// load ran, and the child's spec and logs sit in the configuration folder.
func TestRunWithLoadInAChildProcess(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 4 s)")
	root := t.TempDir()
	// A generous lag limit: validity under -race on a shared machine is not what is tested; the
	// limit reaches the child through its spec.
	res, err := experiment.Run(context.Background(), smoke(t), experiment.Options{ResultsRoot: root, Load: experiment.LoadProcess, LagLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.Load != experiment.LoadProcess {
		t.Fatalf("result %+v; want a valid run with the load in a child process", res)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(res.Dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if run.Load != rundir.LoadProcess {
		t.Errorf("run.json load %q; want %q", run.Load, rundir.LoadProcess)
	}
	sum, err := report.Generate(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range run.Configurations {
		dir := filepath.Join(res.Dir, name)
		m := readManifest(t, dir)
		if m.Load == nil || m.Load.Layout != rundir.LoadProcess || m.Load.PID <= 0 || m.Load.Spec != attack.SpecFile || len(m.Load.Command) < 3 || m.Load.Command[1] != "attack" {
			t.Errorf("%s: manifest load %+v; want the child's command, pid, spec and logs", name, m.Load)
		}
		if m.Load != nil && runtime.GOOS == "linux" && m.Load.PeakRSS < 1<<20 {
			t.Errorf("%s: manifest load peak RSS %d bytes; want the child's (megabytes)", name, m.Load.PeakRSS)
		}
		for _, f := range []string{attack.SpecFile, attack.StdoutFile, attack.StderrFile} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		c := sum.Configurations[i]
		reported, scheduled := c.Outside, uint64(0) // results sent outside every phase (at its very end) are counted apart
		for j, e := range m.Endpoints {
			if e.Scheduled == 0 || e.Sent != e.Scheduled || e.Dropped != 0 {
				t.Errorf("%s %s: scheduled %d sent %d dropped %d; want every scheduled request sent", name, e.Path, e.Scheduled, e.Sent, e.Dropped)
			}
			n, gapless := countRaw(t, filepath.Join(dir, e.RawFile))
			if n != e.Scheduled || !gapless {
				t.Errorf("%s %s: %d results in the raw file (gapless %v); want %d", name, e.Path, n, gapless, e.Scheduled)
			}
			for _, b := range c.Timeline[e.Path] {
				reported += b.Requests
			}
			scheduled += e.Scheduled
			if c.Name != name || c.Endpoints[j].Sent != e.Sent {
				t.Errorf("%s %s: the report's configuration %s says %d sent; want %d", name, e.Path, c.Name, c.Endpoints[j].Sent, e.Sent)
			}
		}
		if uint64(reported) != scheduled {
			t.Errorf("%s: the report counts %d requests; want %d", name, reported, scheduled)
		}
	}
}

// A load generator child killed mid-run fails its configuration with an error naming the
// configuration, the command and how it ended, with the tail of its stderr; the manifest says
// failed and why, run.json failed, and the results written before the kill stay readable.
func TestLoadChildKilledMidRun(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 2 s)")
	sc := smoke(t)
	// 200/s: the child's write buffers (8 KiB per attack) have been flushed some times by the kill.
	if _, err := sc.Override(scenarios.Overrides{Rate: 200, Only: []string{sc.Configurations[0].Name}}); err != nil {
		t.Fatal(err)
	}
	conf := sc.Configurations[0].Name
	root := t.TempDir()
	type ran struct {
		res *experiment.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: root, Load: experiment.LoadProcess})
		done <- ran{res, err}
	}()
	m := runningManifest(t, root, conf)
	if m.Load == nil || m.Load.PID <= 0 {
		t.Fatalf("the running manifest does not name the load generator's pid: %+v", m.Load)
	}
	time.Sleep(time.Second) // some results written
	if err := syscall.Kill(m.Load.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err == nil || errors.Is(r.err, experiment.ErrInterrupted) {
		t.Fatalf("Run = %v; want the child's failure", r.err)
	}
	for _, want := range []string{"configuration " + conf, "load generator", " attack ", attack.SpecFile, "killed", "its stderr ends", "bulkhead attack: configuration " + conf} {
		if !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %q does not mention %q", r.err, want)
		}
	}
	dir := filepath.Join(r.res.Dir, conf)
	got := readManifest(t, dir)
	if got.State != rundir.StateFailed || got.Valid || got.Load == nil || !strings.Contains(got.Load.Error, "killed") ||
		!strings.Contains(strings.Join(got.Invalid, "; "), "load generator ended without its checks") {
		t.Errorf("manifest: state %q valid %v load %+v invalid %q; want failed, saying the load generator was killed", got.State, got.Valid, got.Load, got.Invalid)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(r.res.Dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if run.State != rundir.StateFailed || !strings.Contains(run.Error, "killed") {
		t.Errorf("run.json: state %q error %q; want failed", run.State, run.Error)
	}
	var results uint64
	for _, e := range got.Endpoints {
		n, _ := countRaw(t, filepath.Join(dir, e.RawFile)) // fails on a cut-off line
		results += n
	}
	if results == 0 {
		t.Error("no result of the second before the kill is left")
	}
}

// The first interrupt with the load in a child process stops the child's load cleanly: it
// writes every result it sent and still reports its checks, which the manifest records, marked
// interrupted.
func TestLoadChildInterrupted(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 2 s)")
	sc := smoke(t)
	sc.Configurations = sc.Configurations[:1]
	conf := sc.Configurations[0].Name
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type ran struct {
		res *experiment.Result
		err error
	}
	done := make(chan ran, 1)
	go func() {
		res, err := experiment.Run(ctx, sc, experiment.Options{ResultsRoot: root, Load: experiment.LoadProcess})
		done <- ran{res, err}
	}()
	runningManifest(t, root, conf)
	time.Sleep(time.Second)
	cancel()
	r := <-done
	if !errors.Is(r.err, experiment.ErrInterrupted) {
		t.Fatalf("Run = %v; want interrupted", r.err)
	}
	dir := filepath.Join(r.res.Dir, conf)
	m := readManifest(t, dir)
	if m.State != rundir.StateInterrupted || !m.Partial || m.Load == nil || m.Load.Error != "" {
		t.Errorf("manifest: state %q partial %v load %+v; want interrupted with the child's checks", m.State, m.Partial, m.Load)
	}
	for _, e := range m.Endpoints {
		n, gapless := countRaw(t, filepath.Join(dir, e.RawFile))
		if e.Sent == 0 || n != e.Sent || !gapless || e.Scheduled >= 60 {
			t.Errorf("%s: sent %d of %d scheduled, %d results in the raw file (gapless %v); want the checks of a stopped load, every result written",
				e.Path, e.Sent, e.Scheduled, n, gapless)
		}
	}
}

// runnerChild is the environment variable that makes TestMain's process a runner that runs the
// smoke scenario, stretched to a minute, with its load in a child process, into the folder it
// names.
const runnerChild = "BULKHEAD_TEST_RUNNER_CHILD"

func runnerChildMain(root string) int {
	sc, err := scenarios.Open("smoke")
	if err == nil {
		_, err = sc.Override(scenarios.Overrides{Scale: 20, Only: []string{sc.Configurations[0].Name}})
	}
	if err == nil {
		_, err = experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: root, Load: experiment.LoadProcess})
	}
	if err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}

// A runner that dies (SIGKILL: no chance to stop anything) takes its load generator child with
// it: no orphan keeps sending.
func TestLoadChildDiesWithTheRunner(t *testing.T) {
	testenv.Long(t, "starts a runner process with a load generator child (about 2 s)")
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), runnerChild+"="+root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	m := runningManifest(t, root, smoke(t).Configurations[0].Name)
	if m.Load == nil || m.Load.PID <= 0 {
		t.Fatalf("the running manifest does not name the load generator's pid: %+v", m.Load)
	}
	if err := syscall.Kill(m.Load.PID, 0); err != nil {
		t.Fatalf("the load generator %d is not running: %v", m.Load.PID, err)
	}
	cmd.Process.Kill()
	<-done
	// The child is killed by the kernel when its parent dies (Pdeathsig) and reaped by init.
	deadline := time.Now().Add(30 * time.Second)
	for supervise.Alive(m.Load.PID) {
		if time.Now().After(deadline) {
			t.Fatalf("the load generator %d is still running 30 s after its runner was killed", m.Load.PID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// With --shards 2 a configuration's load comes from two `bulkhead attack --segment k/2`
// children started together: each endpoint's raw file is their exact merge (every scheduled
// request, Seq gapless), the manifest lists both shards with their own files, common t0, clock
// offsets and checks, and the report reads the merged files as it reads an unsharded run's.
func TestRunWithAShardedLoad(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 6 s)")
	root := t.TempDir()
	res, err := experiment.Run(context.Background(), smoke(t), experiment.Options{ResultsRoot: root, Load: experiment.LoadProcess, Shards: 2, LagLimit: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(res.Dir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Generate(res.Dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range run.Configurations {
		dir := filepath.Join(res.Dir, name)
		m := readManifest(t, dir)
		if m.Engine != experiment.LocalEngine {
			t.Errorf("%s: manifest engine %q; want %q", name, m.Engine, experiment.LocalEngine)
		}
		for _, e := range m.Endpoints {
			n, gapless := countRaw(t, filepath.Join(dir, e.RawFile))
			if n != e.Scheduled || !gapless || e.Sent != e.Scheduled {
				t.Errorf("%s %s: merged file %d results (gapless %v), scheduled %d, sent %d", name, e.Path, n, gapless, e.Scheduled, e.Sent)
			}
			if len(e.Shards) != 2 {
				t.Fatalf("%s %s: %d shard records; want 2", name, e.Path, len(e.Shards))
			}
			var sent uint64
			for k, s := range e.Shards {
				if s.Segment != fmt.Sprintf("%d/2", k) || !s.T0.Equal(m.Started) || !s.ClockKnown || !s.Valid {
					t.Errorf("%s %s shard %d: %+v; want segment %d/2 at the common start, clock measured, valid", name, e.Path, k, s, k)
				}
				sn, _ := countRaw(t, filepath.Join(dir, s.RawFile))
				if sn != s.Sent {
					t.Errorf("%s %s shard %d: %d results in %s, %d sent", name, e.Path, k, sn, s.RawFile, s.Sent)
				}
				sent += s.Sent
			}
			if sent != e.Sent {
				t.Errorf("%s %s: shards sent %d, endpoint %d", name, e.Path, sent, e.Sent)
			}
		}
	}
}
