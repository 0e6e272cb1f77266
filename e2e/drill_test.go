package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// The interruption drill (issue 10): `bulkhead run smoke` (two configurations one after
// another, scaled to 1.5 s each) as a child process, sent SIGINT or SIGTERM, once or twice, at
// a random moment from start-up to report writing, with the embedded Toxiproxy and with an
// external toxiproxy-server built from the module. After each interruption: the exit code is
// 130 (a signal that lands once the run is complete, while its report is written, lets the
// report finish and keeps the complete run's own code), no process of the run's process group is left, no proxy is left on the external
// Toxiproxy, and `bulkhead report` on the folder describes it truthfully (issue 23: judged as far
// as it got): partial, valid (exit 0) or invalid (exit 3) as what ran kept to its schedule, every
// configuration analysed or named missing, the phases after an interruption not reached.
//
// BULKHEAD_DRILL_N sets the number of interruptions (default 6), BULKHEAD_DRILL_SEED the seed of
// the moments (default: the clock; it is logged to repeat a failure).
func TestInterruptionDrill(t *testing.T) {
	testenv.Long(t, "runs bulkhead several times as a child process")
	n := 6
	if s := os.Getenv("BULKHEAD_DRILL_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			t.Fatalf("BULKHEAD_DRILL_N=%q: want a positive count", s)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("BULKHEAD_DRILL_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("BULKHEAD_DRILL_SEED=%q: %v", s, err)
		}
	}
	t.Logf("drill: %d interruptions, BULKHEAD_DRILL_SEED=%d", n, seed)
	rng := rand.New(rand.NewPCG(seed, 10))
	tmp := t.TempDir()
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(tmp, "bulkhead"))
	toxi := goBuild(t, "github.com/Shopify/toxiproxy/v2/cmd/server", filepath.Join(tmp, "toxiproxy-server"))
	api := startToxiproxyServer(t, toxi)
	ext, err := proxy.NewExternal(context.Background(), api)
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close(context.Background())

	moments := map[string]int{}
	leaks := 0
	for i := range n {
		d := drill{
			external: i%2 == 1,
			process:  i%4 >= 2, // the load generator as a child process (--load process)
			sig:      []syscall.Signal{syscall.SIGINT, syscall.SIGTERM}[rng.IntN(2)],
			twice:    rng.IntN(3) == 0,
			at:       time.Duration(rng.Int64N(int64(4500 * time.Millisecond))),
			again:    time.Duration(rng.Int64N(int64(300 * time.Millisecond))),
		}
		name := fmt.Sprintf("%d-%s", i, d)
		ok := t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			args := []string{"run", "smoke", "--out", root, "--plain", "--parallel", "1", "--scale", "0.5"}
			if d.external {
				args = append(args, "--toxiproxy", api)
			}
			if d.process {
				args = append(args, "--load", "process")
			}
			moment, code := d.run(t, bin, root, args)
			// A load generator child has its own process group: it must be gone too.
			for _, pid := range loadChildren(root) {
				// Killed with its runner (Pdeathsig), it may take a moment to go.
				for wait := 0; supervise.Alive(pid) && wait < 100; wait++ {
					time.Sleep(50 * time.Millisecond)
				}
				if supervise.Alive(pid) {
					t.Errorf("LEAK: the load generator child %d is still running", pid)
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			moments[moment]++
			t.Logf("signalled during %s; exit %d", moment, code)
			if d.external {
				if left, err := ext.Proxies(context.Background()); err != nil || len(left) > 0 {
					t.Errorf("LEAK: proxies left on the external Toxiproxy: %v (%v)", left, err)
					for _, p := range left {
						_ = ext.Remove(context.Background(), p)
					}
				}
			}
			checkFolder(t, bin, root)
		})
		if !ok {
			leaks++
		}
	}
	t.Logf("drill: %d interruptions, %d with a leak or a folder that lies; signalled during: %v", n, leaks, moments)
}

type drill struct {
	external bool
	process  bool
	sig      syscall.Signal
	twice    bool
	at       time.Duration // after start
	again    time.Duration // second signal after the first
}

func (d drill) String() string {
	s := fmt.Sprintf("%s-at-%dms", map[syscall.Signal]string{syscall.SIGINT: "INT", syscall.SIGTERM: "TERM"}[d.sig], d.at.Milliseconds())
	if d.twice {
		s += fmt.Sprintf("-again-%dms", d.again.Milliseconds())
	}
	if d.external {
		s += "-external"
	}
	if d.process {
		s += "-load-process"
	}
	return s
}

// run starts bin with args in its own process group, signals it as d says, waits for it and
// checks its exit code and that no process of its group is left. It returns what the run was
// doing when signalled (read from the folder it left under root) and the exit code.
func (d drill) run(t *testing.T, bin, root string, args []string) (moment string, code int) {
	t.Helper()
	var out syncBuffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	exited := false
	select {
	case werr = <-done:
		exited = true
	case <-time.After(d.at):
	}
	if exited {
		moment = "after the end (not signalled)"
	} else {
		_ = cmd.Process.Signal(d.sig)
		if d.twice {
			select {
			case werr = <-done:
				exited = true
			case <-time.After(d.again):
				_ = cmd.Process.Signal(d.sig)
			}
		}
		if !exited {
			select {
			case werr = <-done:
			case <-time.After(60 * time.Second):
				_ = syscall.Kill(-pid, syscall.SIGKILL) // its own group only
				<-done
				t.Fatalf("still running 60 s after the signal:\n%s", out.String())
			}
		}
	}
	code = cmd.ProcessState.ExitCode()
	if moment == "" {
		moment = momentOf(root)
		// A signal that lands once the run is complete, while its report is written (report
		// generation does not stop for it, ~0.2 s) or the process exits, leaves a complete run,
		// a complete report and the complete run's own exit code: nothing was cut off.
		finished := moment == "report writing" && code != 130 && code >= 0 && strings.Contains(out.String(), "report: ")
		if finished {
			moment = "report writing, run complete (report finished)"
		}
		if code != 130 && !finished {
			t.Errorf("exit %d (%v), want 130 after %s; output:\n%s", code, werr, d.sig, out.String())
		}
	}
	if left := groupMembers(pid); len(left) > 0 {
		t.Errorf("LEAK: processes left in the run's group: %v", left)
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	return moment, code
}

// momentOf names the part of the run the signal stopped, from the folder it left under root.
func momentOf(root string) string {
	dirs, _ := filepath.Glob(filepath.Join(root, "*", rundir.RunFile))
	if len(dirs) != 1 {
		return "start-up"
	}
	var run rundir.Run
	if rundir.ReadJSON(dirs[0], &run) != nil {
		return "start-up"
	}
	for i, name := range run.Configurations {
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(filepath.Dir(dirs[0]), name, rundir.ManifestFile), &m); err != nil {
			if i == 0 {
				return "start-up"
			}
			return fmt.Sprintf("between configurations %d and %d", i, i+1)
		}
		if m.State != rundir.StateComplete {
			return fmt.Sprintf("configuration %d (%s)", i+1, name)
		}
	}
	return "report writing"
}

// groupMembers lists the processes whose process group is pgid.
func groupMembers(pgid int) []int {
	var out []int
	for _, p := range processes() {
		if p.pgrp == pgid {
			out = append(out, p.pid)
		}
	}
	return out
}

// checkFolder checks that the run folder under root (if the run got that far) is described
// truthfully by `bulkhead report`: partial and invalid (exit 3), each configuration run.json
// names either analysed or missing, and an analysed configuration that was cut off invalid.
func checkFolder(t *testing.T, bin, root string) {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "*"))
	if len(dirs) == 0 {
		return // interrupted before the folder was created
	}
	if len(dirs) != 1 {
		t.Fatalf("%d run folders: %v", len(dirs), dirs)
	}
	dir := dirs[0]
	var run rundir.Run
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run); err != nil {
		// Interrupted between creating the folder and writing run.json: only the scenario files.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.IsDir() {
				t.Errorf("LIE: no run.json but configuration folder %s", e.Name())
			}
		}
		return
	}
	if run.State == rundir.StateRunning {
		t.Errorf("LIE: run.json still says running after the process exited")
	}
	if run.State == rundir.StateComplete && !run.Partial {
		return // the signal came after the runner had finished (report writing)
	}
	// An interrupted run is judged as far as it got (issue 23): valid when what ran kept to its
	// schedule (smoke states no claims: exit 0), else invalid (exit 3); never an error.
	cmd := exec.Command(bin, "report", dir)
	out, _ := cmd.CombinedOutput()
	code := cmd.ProcessState.ExitCode()
	if code != 0 && code != 3 {
		t.Errorf("report on a partial run: exit %d, want 0 (valid as far as it got) or 3 (invalid); output:\n%s", code, out)
	}
	var s model.Summary
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.SummaryFile), &s); err != nil {
		t.Fatalf("report wrote no summary: %v\n%s", err, out)
	}
	if !s.Partial || s.Valid != (code == 0) || !strings.Contains(string(out), "partial: the run was interrupted") {
		t.Errorf("LIE: summary of an interrupted run: partial %v valid %v (exit %d), output:\n%s", s.Partial, s.Valid, code, out)
	}
	var seen []string
	for _, c := range s.Configurations {
		seen = append(seen, c.Name)
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(dir, c.Name, rundir.ManifestFile), &m); err != nil {
			t.Errorf("configuration %s analysed without a manifest: %v", c.Name, err)
			continue
		}
		if c.Valid && !m.Valid {
			t.Errorf("LIE: configuration %s reported valid, its manifest says invalid: %q", c.Name, m.Invalid)
		}
		// Cut short: the phases after the interruption are not reached, the one it fell in cut
		// short, so that no claim is judged on them.
		if m.Partial && !m.Ended.IsZero() && m.Ended.After(m.Started) {
			at := m.Ended.Sub(m.Started)
			for _, ph := range c.Phases {
				if at.Seconds() < ph.EndS && !(ph.CutShort || !ph.Reached) {
					t.Errorf("LIE: configuration %s was interrupted at %s, yet phase %s (to %.1f s) reads as complete", c.Name, at, ph.Name, ph.EndS)
				}
			}
		}
	}
	seen = append(seen, s.Missing...)
	slices.Sort(seen)
	want := slices.Clone(run.Configurations)
	slices.Sort(want)
	if !slices.Equal(seen, want) {
		t.Errorf("LIE: report covers %v, run.json names %v", seen, want)
	}
}

func goBuild(t *testing.T, pkg, out string) string {
	t.Helper()
	if b, err := exec.Command("go", "build", "-o", out, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// startToxiproxyServer starts bin on 127.0.0.1 on a free port, waits until its API answers and
// stops it (by its own process) at cleanup.
func startToxiproxyServer(t *testing.T, bin string) string {
	t.Helper()
	api, _ := startToxiproxyProcess(t, bin)
	return api
}

// startToxiproxyProcess is startToxiproxyServer, also returning the server's process (to kill it
// mid-run).
func startToxiproxyProcess(t *testing.T, bin string) (string, *os.Process) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	apiURL := "http://127.0.0.1:" + strconv.Itoa(port)
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		x, err := proxy.NewExternal(ctx, apiURL)
		cancel()
		if err == nil {
			_ = x.Close(context.Background())
			return apiURL, cmd.Process
		}
		select {
		case <-exited:
			t.Fatal("toxiproxy-server exited")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy-server did not answer: %v", err)
		}
	}
}

// syncBuffer is a bytes.Buffer safe for a child's output copier and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// loadChildren returns the pids of the load generator children the run under root recorded in
// its manifests.
func loadChildren(root string) []int {
	var pids []int
	paths, _ := filepath.Glob(filepath.Join(root, "*", "*", rundir.ManifestFile))
	for _, p := range paths {
		var m rundir.Manifest
		if rundir.ReadJSON(p, &m) == nil && m.Load != nil && m.Load.PID > 0 {
			pids = append(pids, m.Load.PID)
		}
	}
	return pids
}
