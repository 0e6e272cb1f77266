package experiment_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// run.json is written before the first configuration starts, naming every planned configuration
// and saying the run is running; each configuration's manifest is written when its load starts,
// marked running and partial. A process killed at that moment leaves exactly this.
func TestRunFolderSaysRunningWhileRunning(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 1 s)")
	sc := smoke(t)
	root := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var runAtStart rundir.Run
	var manifestAtStart *rundir.Manifest
	// The first progress line comes once the first configuration's load runs.
	w := writerFunc(func() {
		if manifestAtStart != nil {
			return
		}
		dirs, _ := filepath.Glob(filepath.Join(root, "*", rundir.RunFile))
		if len(dirs) != 1 {
			t.Errorf("run.json files while running: %v", dirs)
			cancel()
			return
		}
		if err := rundir.ReadJSON(dirs[0], &runAtStart); err != nil {
			t.Error(err)
		}
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(filepath.Dir(dirs[0]), sc.Configurations[0].Name, rundir.ManifestFile), &m); err != nil {
			t.Error(err)
		}
		manifestAtStart = &m
		cancel()
	})
	_, err := experiment.Run(ctx, sc, experiment.Options{ResultsRoot: root, Parallel: 1, Progress: w, ProgressEvery: 100 * time.Millisecond})
	if err == nil {
		t.Fatal("want ErrInterrupted")
	}
	if manifestAtStart == nil {
		t.Fatal("no progress line while running")
	}
	if runAtStart.State != rundir.StateRunning || len(runAtStart.Configurations) != len(sc.Configurations) || runAtStart.Started.IsZero() {
		t.Errorf("run.json while running: state %q, configurations %v, started %v; want running, all %d, a start time",
			runAtStart.State, runAtStart.Configurations, runAtStart.Started, len(sc.Configurations))
	}
	m := manifestAtStart
	if m.State != rundir.StateRunning || !m.Partial || m.Valid || len(m.Invalid) == 0 || m.Started.IsZero() || len(m.Endpoints) == 0 {
		t.Errorf("manifest while running: state %q partial %v valid %v invalid %q started %v endpoints %d; want running, partial, invalid with a reason, started",
			m.State, m.Partial, m.Valid, m.Invalid, m.Started, len(m.Endpoints))
	}
}

type writerFunc func()

func (f writerFunc) Write(p []byte) (int, error) { f(); return len(p), nil }

// fsizeChild is the environment variable that makes TestMain's process a child that runs the
// smoke scenario under a file size limit (RLIMIT_FSIZE) into the folder it names.
const fsizeChild = "BULKHEAD_TEST_FSIZE_CHILD"

func TestMain(m *testing.M) {
	// The test binary is the executable a LoadProcess run starts ("<exe> attack <spec>"): it
	// plays `bulkhead attack` (first: it inherits the environment of a runner child below).
	if len(os.Args) == 3 && os.Args[1] == "attack" {
		os.Exit(attackChildMain(os.Args[2]))
	}
	if root := os.Getenv(fsizeChild); root != "" {
		os.Exit(fsizeChildMain(root))
	}
	if root := os.Getenv(runnerChild); root != "" {
		os.Exit(runnerChildMain(root))
	}
	if len(os.Args) == 3 && os.Args[1] == serveChild {
		os.Exit(serveChildMain(os.Args[2]))
	}
	os.Exit(m.Run())
}

// attackChildMain serves the attack spec as `bulkhead attack` does.
func attackChildMain(spec string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := attack.Serve(ctx, spec, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bulkhead:", err)
		return 1
	}
	return 0
}

// fsizeChildMain runs the smoke scenario at 200/s into root with files limited to 32 KiB: the
// raw files outgrow it, the manifests do not. It prints the run's error and exits 1 when Run
// returned one.
func fsizeChildMain(root string) int {
	lim := syscall.Rlimit{Cur: 32 << 10, Max: 32 << 10}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		fmt.Println("setrlimit:", err)
		return 2
	}
	sc, err := scenarios.Open("smoke")
	if err == nil {
		_, err = sc.Override(scenarios.Overrides{Rate: 200, Only: []string{sc.Configurations[0].Name}})
	}
	if err != nil {
		fmt.Println(err)
		return 2
	}
	if _, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: root}); err != nil {
		fmt.Println("run error:", err)
		return 1
	}
	return 0
}

// Results that cannot be written (here: "file too large" under RLIMIT_FSIZE, as on a full
// disk) fail the run with an error, and the configuration's manifest and run.json say why: the
// run is never reported as merely "not valid" with data silently cut off.
func TestLostWritesFailTheRun(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario in a child process (about 3 s)")
	root := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fsizeChild+"="+root)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 {
		t.Fatalf("child: %v, want exit 1; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "file too large") {
		t.Errorf("the run's error does not say what was lost:\n%s", out)
	}
	runs, _ := filepath.Glob(filepath.Join(root, "*", rundir.RunFile))
	if len(runs) != 1 {
		t.Fatalf("run.json files: %v", runs)
	}
	var run rundir.Run
	if err := rundir.ReadJSON(runs[0], &run); err != nil {
		t.Fatal(err)
	}
	if run.State != rundir.StateFailed || !strings.Contains(run.Error, "file too large") {
		t.Errorf("run.json: state %q error %q; want failed, saying file too large", run.State, run.Error)
	}
	m := readManifest(t, filepath.Join(filepath.Dir(runs[0]), run.Configurations[0]))
	if m.State != rundir.StateFailed || m.Valid || !strings.Contains(strings.Join(m.Invalid, "; "), "file too large") {
		t.Errorf("manifest: state %q valid %v invalid %q; want failed, invalid, saying file too large", m.State, m.Valid, m.Invalid)
	}
}
