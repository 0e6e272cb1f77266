package supervise_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/supervise"
)

// The test binary plays the child: SUPERVISE_CHILD selects what it does. It is also its own
// shim, as bulkhead is (supervise.Init), so every child here is started through one.
func TestMain(m *testing.M) {
	supervise.Init()
	switch os.Getenv("SUPERVISE_CHILD") {
	case "":
		os.Exit(m.Run())
	case "serve": // answer /ready on SUPERVISE_ADDR, print a line on each stream
		fmt.Println("child stdout")
		fmt.Fprintln(os.Stderr, "child stderr")
		http.HandleFunc("/ready", func(w http.ResponseWriter, _ *http.Request) {})
		http.HandleFunc("/notyet", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })
		err := http.ListenAndServe(os.Getenv("SUPERVISE_ADDR"), nil)
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	case "talk": // two lines on stdout, then exit 0
		fmt.Println("event 1")
		fmt.Println("event 2")
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "bad flag --mode: want shared or split")
		os.Exit(2)
	case "ignoreterm": // never ready, ignores SIGTERM
		signal.Ignore(syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "ignoring SIGTERM")
		time.Sleep(time.Hour)
	case "spawn": // start a grandchild, write its pid to SUPERVISE_PIDFILE, then wait
		c := exec.Command("sleep", "3600")
		if err := c.Start(); err != nil {
			os.Exit(4)
		}
		os.WriteFile(os.Getenv("SUPERVISE_PIDFILE"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
		c.Wait()
	case "tree": // a forking target: a grandchild in its group, one in a session of its own
		inGroup := exec.Command("sleep", "3600")
		escaped := exec.Command("sleep", "3600")
		escaped.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if inGroup.Start() != nil || escaped.Start() != nil {
			os.Exit(4)
		}
		pids := fmt.Sprintf("%d %d %d", os.Getpid(), inGroup.Process.Pid, escaped.Process.Pid)
		os.WriteFile(os.Getenv("SUPERVISE_PIDFILE"), []byte(pids), 0o644)
		if os.Getenv("SUPERVISE_EXIT") != "" {
			os.Exit(0) // leave both behind
		}
		inGroup.Wait()
	case "runner": // a runner: start a "tree" child through supervise, then wait to be killed
		_, err := supervise.Start(context.Background(), supervise.Spec{Name: "tree", Argv: []string{os.Args[0]},
			Env: []string{"SUPERVISE_CHILD=tree"}})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(5)
		}
		time.Sleep(time.Hour)
	}
	os.Exit(0)
}

// readPids waits up to 5 s for path to hold space-separated pids and returns them.
func readPids(t *testing.T, path string, n int) []int {
	t.Helper()
	for range 500 {
		b, _ := os.ReadFile(path)
		if f := strings.Fields(string(b)); len(f) == n {
			pids := make([]int, n)
			for i, s := range f {
				pids[i], _ = strconv.Atoi(s)
			}
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held %d pids", path, n)
	return nil
}

// gone waits up to limit for every pid to be gone (exited; a zombie counts as gone) and returns
// those still alive.
func gone(pids []int, limit time.Duration) (alive []int) {
	deadline := time.Now().Add(limit)
	for {
		alive = alive[:0]
		for _, p := range pids {
			if supervise.Alive(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) == 0 || time.Now().After(deadline) {
			return alive
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A runner killed by SIGKILL leaves nothing: the shim that started its child kills the child, the
// grandchild in the child's process group and the one that left it for a session of its own,
// well within a second.
func TestRunnerKilledLeavesNothing(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	runner := exec.Command(self(t))
	runner.Env = append(os.Environ(), "SUPERVISE_CHILD=runner", "SUPERVISE_PIDFILE="+pidfile)
	runner.Stderr = os.Stderr
	if err := runner.Start(); err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidfile, 3)
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if err := runner.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = runner.Wait()
	if alive := gone(pids, time.Second); len(alive) > 0 {
		t.Errorf("alive 1 s after the runner's SIGKILL: %v of child, grandchild, escaped grandchild %v", alive, pids)
	}
}

// A child that exits on its own takes what it left running with it: the shim kills its process
// group and whatever came to it, so nothing the target forked outlives the target.
func TestChildExitClearsLeftovers(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pids")
	p, err := supervise.Start(context.Background(), supervise.Spec{Name: "tree", Argv: []string{self(t)},
		Env: []string{"SUPERVISE_CHILD=tree", "SUPERVISE_EXIT=1", "SUPERVISE_PIDFILE=" + pidfile}})
	if err != nil {
		t.Fatal(err)
	}
	pids := readPids(t, pidfile, 3)
	t.Cleanup(func() {
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if pids[0] != p.Pid() {
		t.Errorf("Pid() = %d, want the child's own pid %d (not its shim's)", p.Pid(), pids[0])
	}
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatal("the child's exit was not seen")
	}
	if err := p.Wait(context.Background()); err != nil {
		t.Errorf("Wait = %v, want nil (the child exited 0)", err)
	}
	if alive := gone(pids, time.Second); len(alive) > 0 {
		t.Errorf("alive after the child exited: %v of %v", alive, pids)
	}
	p.Stop()
}

// The shim repeats the child's ending: its exit status, or the signal it was killed by.
func TestShimRepeatsTheEnding(t *testing.T) {
	for _, c := range []struct {
		script, want string
	}{
		{"exit 7", "exited with status 7"},
		{"kill -TERM $$", "killed by SIGTERM"},
		{"kill -KILL $$", "killed by SIGKILL"},
		{"kill -SEGV $$", "exited with status 139"},
	} {
		t.Run(c.script, func(t *testing.T) {
			p, err := supervise.Start(context.Background(), supervise.Spec{Name: "sh", Argv: []string{"sh", "-c", c.script}})
			if err != nil {
				t.Fatal(err)
			}
			err = p.Wait(context.Background())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Wait = %v, want it to say %q", err, c.want)
			}
			p.Stop()
		})
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func self(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// A child that becomes ready is returned running, its output lands in the files, and Stop ends it
// with SIGTERM without an error.
func TestStartReadyThenStop(t *testing.T) {
	dir := t.TempDir()
	addr := freeAddr(t)
	p, err := supervise.Start(context.Background(), supervise.Spec{
		Name: "test child", Argv: []string{self(t)}, Env: []string{"SUPERVISE_CHILD=serve", "SUPERVISE_ADDR=" + addr},
		Stdout: filepath.Join(dir, "out.log"), Stderr: filepath.Join(dir, "err.log"), Ready: "http://" + addr + "/ready",
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.Get("http://" + addr + "/ready"); err != nil {
		t.Fatalf("not serving after Start: %v", err)
	} else {
		resp.Body.Close()
	}
	if err := p.Stop(); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
	if supervise.Alive(p.Pid()) {
		t.Errorf("pid %d still alive after Stop", p.Pid())
	}
	for file, want := range map[string]string{"out.log": "child stdout", "err.log": "child stderr"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s = %q, %v; want it to contain %q", file, b, err, want)
		}
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
}

// Every way of not becoming ready is an error naming the child, its command and the ready
// address, with the reason and the tail of its stderr; nothing is left running.
func TestStartFailures(t *testing.T) {
	addr := freeAddr(t)
	cases := []struct {
		name    string
		env     string
		ready   string
		timeout time.Duration
		want    []string
	}{
		{"exits early", "exit", "http://" + addr + "/ready", 0,
			[]string{"exited with status 2 before it was ready", "bad flag --mode", addr}},
		{"never ready", "ignoreterm", "http://" + addr + "/ready", 300 * time.Millisecond,
			[]string{"not ready after 300ms", "connection refused", "ignoring SIGTERM", addr}},
		{"answers but not 2xx", "serve", "http://" + addr + "/notyet", 300 * time.Millisecond,
			[]string{"not ready after 300ms", "status 503", addr}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := supervise.Start(context.Background(), supervise.Spec{
				Name: "configuration shared: target", Argv: []string{self(t), "--flag"},
				Env:   []string{"SUPERVISE_CHILD=" + c.env, "SUPERVISE_ADDR=" + addr},
				Ready: c.ready, ReadyTimeout: c.timeout, Grace: 200 * time.Millisecond,
			})
			if err == nil {
				p.Stop()
				t.Fatal("Start succeeded")
			}
			var ee *supervise.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("err = %T %v, want *ExitError", err, err)
			}
			for _, w := range append(c.want, "configuration shared: target", "--flag") {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if conn, err := net.Dial("tcp", addr); err == nil {
				conn.Close()
				t.Errorf("something still listens on %s", addr)
			}
		})
	}
}

// A command that cannot be started is an error naming it.
func TestStartMissingCommand(t *testing.T) {
	_, err := supervise.Start(context.Background(), supervise.Spec{Name: "x", Argv: []string{"/nonexistent/server"}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/server") {
		t.Fatalf("err = %v, want one naming the command", err)
	}
}

// A child that ignores SIGTERM is killed after the grace period, and Stop says so.
func TestStopKillsAfterGrace(t *testing.T) {
	errLog := filepath.Join(t.TempDir(), "err.log")
	p, err := supervise.Start(context.Background(), supervise.Spec{
		Name: "stubborn", Argv: []string{self(t)}, Env: []string{"SUPERVISE_CHILD=ignoreterm"}, Grace: 200 * time.Millisecond,
		Stderr: errLog,
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 { // until it says it ignores SIGTERM
		if b, _ := os.ReadFile(errLog); strings.Contains(string(b), "ignoring SIGTERM") {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	err = p.Stop()
	if err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("Stop = %v, want an error saying it was killed", err)
	}
	if supervise.Alive(p.Pid()) {
		t.Errorf("pid %d alive after Stop", p.Pid())
	}
}

// Stop reaches the child's own children (the process group).
func TestStopEndsGrandchildren(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	p, err := supervise.Start(context.Background(), supervise.Spec{
		Name: "parent", Argv: []string{self(t)}, Env: []string{"SUPERVISE_CHILD=spawn", "SUPERVISE_PIDFILE=" + pidfile},
	})
	if err != nil {
		t.Fatal(err)
	}
	var gpid int
	for i := 0; i < 200 && gpid == 0; i++ {
		b, _ := os.ReadFile(pidfile)
		gpid, _ = strconv.Atoi(string(b))
		time.Sleep(10 * time.Millisecond)
	}
	if gpid == 0 {
		t.Fatal("grandchild never started")
	}
	p.Stop()
	for i := 0; i < 200 && supervise.Alive(gpid); i++ { // reaped by init shortly after the kill
		time.Sleep(10 * time.Millisecond)
	}
	if supervise.Alive(gpid) {
		t.Errorf("grandchild %d survived Stop", gpid)
	}
}

// A child that exits while running is reported by Err, and Stop returns that error.
func TestErrAfterExit(t *testing.T) {
	p, err := supervise.Start(context.Background(), supervise.Spec{Name: "short", Argv: []string{"sh", "-c", "echo gone >&2; exit 7"}})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Exited()
	for _, e := range []error{p.Err(), p.Stop()} {
		if e == nil || !strings.Contains(e.Error(), "status 7 while running") || !strings.Contains(e.Error(), "gone") {
			t.Errorf("err = %v, want exit status 7 while running with its stderr", e)
		}
	}
}

// A child that talks over stdout is read as it writes (StdoutTo, after the log file); Terminate
// sends SIGTERM without waiting, and Wait says how the child ended: nil for status 0, an *ExitError
// with the status or signal otherwise, ctx's error when ctx ends first.
func TestStdoutToTerminateWait(t *testing.T) {
	t.Run("exit 0", func(t *testing.T) {
		dir := t.TempDir()
		var seen strings.Builder
		p, err := supervise.Start(context.Background(), supervise.Spec{Name: "talker", Argv: []string{self(t)},
			Env: []string{"SUPERVISE_CHILD=talk"}, Stdout: filepath.Join(dir, "out.log"), StdoutTo: &seen})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Wait(context.Background()); err != nil {
			t.Fatalf("Wait = %v; want nil for exit 0", err)
		}
		p.Stop()
		if b, _ := os.ReadFile(filepath.Join(dir, "out.log")); seen.String() != "event 1\nevent 2\n" || string(b) != seen.String() {
			t.Errorf("StdoutTo got %q, the log %q; want both events in each", seen.String(), b)
		}
	})
	t.Run("exit 2", func(t *testing.T) {
		p, err := supervise.Start(context.Background(), supervise.Spec{Name: "failer", Argv: []string{self(t)}, Env: []string{"SUPERVISE_CHILD=exit"}})
		if err != nil {
			t.Fatal(err)
		}
		err = p.Wait(context.Background())
		var ee *supervise.ExitError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "exited with status 2") || !strings.Contains(err.Error(), "bad flag --mode") {
			t.Errorf("Wait = %v; want an *ExitError with the status and stderr", err)
		}
		p.Stop()
	})
	t.Run("terminate", func(t *testing.T) {
		addr := freeAddr(t)
		p, err := supervise.Start(context.Background(), supervise.Spec{Name: "server", Argv: []string{self(t)},
			Env: []string{"SUPERVISE_CHILD=serve", "SUPERVISE_ADDR=" + addr}, Ready: "http://" + addr + "/ready"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := p.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Wait(cancelled) on a running child = %v; want context.Canceled", err)
		}
		p.Terminate()
		err = p.Wait(context.Background())
		if err == nil || !strings.Contains(err.Error(), "killed by SIGTERM") {
			t.Errorf("Wait after Terminate = %v; want it killed by SIGTERM", err)
		}
		p.Stop()
	})
}
