package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// The drills of issue 23 ("nothing left behind, nothing believed blindly"): the real bulkhead
// binary, run as a child process, killed, frozen and starved, then its folder judged by
// `bulkhead report`. Each figure a drill measures is logged as "figure: ..." (run with -v).

// forkingScenario writes a scenario whose one configuration's target is a forking command (sh
// running `bulkhead serve`, then echo: the shape of npm, gradle or any wrapper script) and
// returns its path. `bulkhead` must be on the runner's PATH.
func forkingScenario(t *testing.T, steady time.Duration) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "forking.yaml")
	yaml := fmt.Sprintf(`name: forking-target
seed: 1
timeout: 500ms
dependencies:
  - {name: A, latency: 5ms}
  - {name: B, latency: 5ms}
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load:
  rate: 20/s
  timeout: 2s
  lag_limit: 50ms
configurations:
  - name: shared
    mode: shared
    pools:
      - {name: shared, kind: semaphore, size: 10, dependencies: [A, B]}
    target:
      command: [sh, -c, "bulkhead serve --scenario hypothesis --configuration shared --addr 127.0.0.1:{port} --dep A=http://{dep.A} --dep B=http://{dep.B}; echo done"]
      ready: http://127.0.0.1:{port}/debug/resources
phases:
  - {name: steady, duration: %s}
`, steady)
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// runner is `bulkhead run` as a child process of the test, in its own process group.
type runner struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
}

// startRunner starts bin with args, bin's folder first on PATH, and stops its whole process group
// at cleanup if it is still running.
func startRunner(t *testing.T, bin string, args ...string) *runner {
	t.Helper()
	r := &runner{cmd: exec.Command(bin, args...), out: &syncBuffer{}, done: make(chan struct{})}
	r.cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
			<-r.done
		}
	})
	return r
}

// wait waits up to limit for the runner to exit and returns its exit code (-1: killed by a
// signal), failing the test if it does not.
func (r *runner) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("the runner is still running %s later; its output:\n%s", limit, r.out.String())
		return 0
	}
}

// waitRunning waits until the one configuration folder under root has a manifest saying its load
// is running, and returns the folder and the manifest.
func waitRunning(t *testing.T, r *runner, root string) (string, rundir.Manifest) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		paths, _ := filepath.Glob(filepath.Join(root, "*", "*", rundir.ManifestFile))
		if len(paths) == 1 {
			var m rundir.Manifest
			if rundir.ReadJSON(paths[0], &m) == nil && m.State == rundir.StateRunning {
				return filepath.Dir(paths[0]), m
			}
		}
		select {
		case <-r.done:
			t.Fatalf("the runner exited before its load started:\n%s", r.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("no configuration started within 60 s:\n%s", r.out.String())
	return "", rundir.Manifest{}
}

// described is a process with its command line.
type described struct {
	pid  int
	args string
}

func (d described) String() string { return fmt.Sprintf("%d %q", d.pid, d.args) }

// descendantsOf lists the processes below pid, read from /proc.
func descendantsOf(pid int) []described {
	children := map[int][]int{}
	for _, p := range processes() {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []described
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		c := queue[0]
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
		out = append(out, described{c, strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))})
		queue = append(queue, children[c]...)
	}
	return out
}

// listeningPorts returns the TCP ports something on this host listens on (IPv4 and IPv6).
func listeningPorts() map[int]bool {
	ports := map[int]bool{}
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// sl local_address rem_address st ...; st 0A is LISTEN; local is HEXIP:HEXPORT.
			f := strings.Fields(sc.Text())
			if len(f) < 4 || f[3] != "0A" {
				continue
			}
			if i := strings.LastIndexByte(f[1], ':'); i >= 0 {
				if p, err := strconv.ParseInt(f[1][i+1:], 16, 32); err == nil {
					ports[int(p)] = true
				}
			}
		}
		fh.Close()
	}
	return ports
}

// portOf returns the port of a "host:port" or "http://host:port" address.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, hp, ok := strings.Cut(addr, "://")
	if !ok {
		hp = addr
	}
	_, p, err := net.SplitHostPort(hp)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// TestDrillSIGKILLLeavesNoOrphan (issue 23, item 1): `bulkhead run` with a forking command target
// (sh -c "bulkhead serve ...; echo done") and its load generator as a child process is killed
// with SIGKILL, as the OOM killer would, once its load runs. Within 2 s no process that was
// below it is left (the shims, sh, bulkhead serve, bulkhead attack) and nothing listens on the
// target's port or the proxies'. It logs the time from the SIGKILL to the last one gone.
func TestDrillSIGKILLLeavesNoOrphan(t *testing.T) {
	testenv.Long(t, "builds bulkhead and runs it with a forking target")
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		testenv.SkipOrFail(t, "no /proc to find the runner's descendants in: %v", err)
	}
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(t.TempDir(), "bulkhead"))
	root := t.TempDir()
	r := startRunner(t, bin, "run", forkingScenario(t, 30*time.Second), "--plain", "--no-report", "--out", root)
	_, m := waitRunning(t, r, root)
	var ports []int
	for _, addr := range m.Target.Listen {
		ports = append(ports, portOf(t, addr))
	}
	var below []described
	for deadline := time.Now().Add(10 * time.Second); ; {
		below = descendantsOf(r.cmd.Process.Pid)
		has := func(s string) bool {
			for _, d := range below {
				if strings.Contains(d.args, s) {
					return true
				}
			}
			return false
		}
		if has("bulkhead serve") && has("bulkhead attack") && has(supervise.ShimName) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the runner never had a shim, bulkhead serve and bulkhead attack below it: %v", below)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("below the runner: %v", below)

	killed := time.Now()
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	var last time.Duration
	for {
		alive := 0
		for _, d := range below {
			if supervise.Alive(d.pid) {
				alive++
			}
		}
		if alive == 0 {
			last = time.Since(killed)
			break
		}
		if time.Since(killed) > 2*time.Second {
			break
		}
		time.Sleep(time.Millisecond)
	}
	for _, d := range below {
		if supervise.Alive(d.pid) {
			t.Errorf("ORPHAN: %v still running 2 s after the runner's SIGKILL", d)
			_ = syscall.Kill(d.pid, syscall.SIGKILL)
		}
	}
	listening := listeningPorts()
	for _, p := range ports {
		if listening[p] {
			t.Errorf("ORPHAN: something still listens on port %d (the target's or a proxy's) after the runner's SIGKILL", p)
		}
	}
	if last > 0 {
		t.Logf("figure: SIGKILL of the runner to the last of its %d descendants gone: %s", len(below), last.Round(100*time.Microsecond))
	}
}

// until polls cond every millisecond for up to limit and returns how long it took to hold (-1
// when it never did).
func until(limit time.Duration, cond func() bool) time.Duration {
	start := time.Now()
	for time.Since(start) < limit {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(time.Millisecond)
	}
	return -1
}

// manifestState reads the state of the manifest in the configuration folder dir ("" when it
// cannot be read).
func manifestState(dir string) (rundir.Manifest, string) {
	var m rundir.Manifest
	if rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m) != nil {
		return m, ""
	}
	return m, m.State
}

// TestDrillFrozenLoadGenerator (issue 23, item 2): the load generator child of `bulkhead run` is
// frozen with SIGSTOP mid-run. Its watchdog holds it frozen once it has sent no event for
// attack.DefaultStallAfter (5 s), kills it and fails the configuration: the manifest says failed
// and why, the run exits 1 (any other error) naming the reason, nothing is left running and
// `bulkhead report` does not call the folder valid. Before, the run hung until the child was
// resumed. It logs the time from the SIGSTOP to the configuration failing.
func TestDrillFrozenLoadGenerator(t *testing.T) {
	testenv.Long(t, "builds bulkhead and freezes its load generator mid-run")
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(t.TempDir(), "bulkhead"))
	root := t.TempDir()
	r := startRunner(t, bin, "run", "smoke", "--only", "shared", "--scale", "10", "--plain", "--no-report", "--out", root)
	dir, m := waitRunning(t, r, root)
	if m.Load == nil || m.Load.PID <= 0 {
		t.Fatalf("the manifest names no load generator child: %+v", m.Load)
	}
	time.Sleep(time.Second) // a progress event or two first
	if err := syscall.Kill(m.Load.PID, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	t.Cleanup(func() { _ = syscall.Kill(m.Load.PID, syscall.SIGKILL) })
	failed := until(30*time.Second, func() bool { _, s := manifestState(dir); return s == rundir.StateFailed })
	code := r.wait(t, 30*time.Second)
	exited := time.Since(frozen)
	out := r.out.String()
	if failed < 0 {
		t.Fatalf("the configuration never failed after its load generator froze; exit %d, output:\n%s", code, out)
	}
	if code != 1 || !strings.Contains(out, "stopped reporting") {
		t.Errorf("exit %d, want 1 with the reason (stopped reporting); output:\n%s", code, out)
	}
	fm, _ := manifestState(dir)
	if why := strings.Join(fm.Invalid, "; "); fm.Valid || !strings.Contains(why, "stopped reporting: no event for") {
		t.Errorf("manifest valid %v, invalid %q; want invalid, saying the load generator stopped reporting", fm.Valid, why)
	}
	if supervise.Alive(m.Load.PID) {
		t.Errorf("the frozen load generator %d is still there", m.Load.PID)
	}
	rep := exec.Command(bin, "report", filepath.Dir(dir))
	if b, _ := rep.CombinedOutput(); rep.ProcessState.ExitCode() == 0 {
		t.Errorf("report on the folder of a failed configuration exits 0:\n%s", b)
	}
	t.Logf("figure: SIGSTOP of the load generator to its configuration failing (manifest written failed): %s; to the runner's exit: %s (watchdog limit 5 s)",
		failed.Round(time.Millisecond), exited.Round(time.Millisecond))
}

// TestDrillExternalToxiproxyDies (issue 23, item 2): the external toxiproxy-server a run uses is
// killed mid-run. The runner's health check notices within a second, says so naming the address,
// stops the load and fails the configuration (exit 1). Before, the load ran on for 12 s at 100%
// errors until the next fault switch failed. It logs the time from the kill to the runner saying
// the configuration failed.
func TestDrillExternalToxiproxyDies(t *testing.T) {
	testenv.Long(t, "builds bulkhead and toxiproxy-server and kills the latter mid-run")
	tmp := t.TempDir()
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(tmp, "bulkhead"))
	toxi := goBuild(t, "github.com/Shopify/toxiproxy/v2/cmd/server", filepath.Join(tmp, "toxiproxy-server"))
	api, server := startToxiproxyProcess(t, toxi)
	root := t.TempDir()
	r := startRunner(t, bin, "run", "smoke", "--only", "shared", "--scale", "10", "--plain", "--no-report", "--out", root, "--toxiproxy", api)
	dir, _ := waitRunning(t, r, root)
	time.Sleep(time.Second)
	if err := server.Kill(); err != nil {
		t.Fatal(err)
	}
	said := until(10*time.Second, func() bool { return strings.Contains(r.out.String(), "FAILED: toxiproxy at "+api+" stopped answering") })
	code := r.wait(t, 30*time.Second)
	out := r.out.String()
	if said < 0 {
		t.Fatalf("the runner never said the Toxiproxy at %s died; exit %d, output:\n%s", api, code, out)
	}
	if said > time.Second {
		t.Errorf("the runner said the Toxiproxy died %s after its death; want within a second", said)
	}
	if code != 1 || !strings.Contains(out, api) {
		t.Errorf("exit %d, want 1 naming %s; output:\n%s", code, api, out)
	}
	if m, s := manifestState(dir); s != rundir.StateFailed || m.Valid {
		t.Errorf("manifest state %q valid %v; want failed, invalid", s, m.Valid)
	}
	t.Logf("figure: toxiproxy-server SIGKILL to the runner failing the configuration: %s (health check every 200 ms)", said.Round(time.Millisecond))
}

// copyTree copies the folder src to a new folder and returns it.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// verdictOf runs `bulkhead report dir --json` and returns its exit code and verdict block (its
// invalid reasons joined by newlines).
func verdictOf(t *testing.T, bin, dir string) (code int, outcome, invalid string, out string) {
	t.Helper()
	cmd := exec.Command(bin, "report", dir, "--json")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run()
	var v struct {
		Outcome string   `json:"outcome"`
		Invalid []string `json:"invalid"`
	}
	_ = json.Unmarshal([]byte(stdout.String()), &v)
	return cmd.ProcessState.ExitCode(), v.Outcome, strings.Join(v.Invalid, "\n"), stdout.String() + stderr.String()
}

// TestDrillTamperedFolder (issue 23, item 3): a real run folder (the hypothesis, scaled down,
// with its claims) is changed after the run in each way that once passed, and `bulkhead report`
// on it must exit 3 (invalid) naming the file, never 0 or 99: claims.json deleted or turned to
// garbage, a raw file emptied, halved, its failures filtered out, duplicated at a line boundary
// or one result's latency set negative, resources.csv deleted, a manifest's state removed.
func TestDrillTamperedFolder(t *testing.T) {
	testenv.Long(t, "runs the hypothesis scaled down, then reports on ten changed copies of its folder")
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(t.TempDir(), "bulkhead"))
	root := t.TempDir()
	r := startRunner(t, bin, "run", "hypothesis", "--scale", "0.1", "--repetitions", "1", "--plain", "--no-report", "--out", root)
	r.wait(t, 2*time.Minute)
	runs, _ := filepath.Glob(filepath.Join(root, "*", rundir.RunFile))
	if len(runs) != 1 {
		t.Fatalf("no run folder; output:\n%s", r.out.String())
	}
	orig := filepath.Dir(runs[0])
	code, outcome, _, _ := verdictOf(t, bin, copyTree(t, orig))
	t.Logf("the folder as written: exit %d, %s", code, outcome)
	raw := func(f func(lines []string) []string) func(t *testing.T, dir string) {
		return func(t *testing.T, dir string) {
			p := filepath.Join(dir, "split", rundir.RawDir, "a.json")
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			lines = lines[:len(lines)-1]
			if err := os.WriteFile(p, []byte(strings.Join(f(lines), "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		name   string
		change func(t *testing.T, dir string)
		reason string
	}{
		{"claims.json deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, rundir.ClaimsFile)) }, "claims.json: missing, yet the run was judged by"},
		{"claims.json garbage", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, rundir.ClaimsFile), []byte("not json"), 0o644)
		}, "claims.json: "},
		{"raw file emptied", raw(func([]string) []string { return nil }), "split: not analysed: integrity: raw/a.json: 0 lines"},
		{"raw file halved", raw(func(l []string) []string { return l[:len(l)/2] }), "split: not analysed: integrity: raw/a.json: "},
		{"raw file's failures filtered out", raw(func(l []string) []string {
			var ok []string
			for _, s := range l {
				if strings.Contains(s, `"X-Loadgen-Class":["ok"]`) {
					ok = append(ok, s)
				}
			}
			return ok
		}), "split: not analysed: integrity: raw/a.json: "},
		{"raw file duplicated at a line boundary", raw(func(l []string) []string { return append(l, l[len(l)/2:]...) }), "split: not analysed: integrity: raw/a.json: "},
		{"a result's latency made negative", raw(func(l []string) []string {
			l[7] = strings.Replace(l[7], `"latency":`, `"latency":-5,"x":`, 1)
			return l
		}), "split: not analysed: integrity: raw/a.json: "},
		{"resources.csv deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "split", rundir.ResourcesFile)) }, "split: not analysed: integrity: resources.csv: missing"},
		{"a manifest without a state", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "split", rundir.ManifestFile)
			var m map[string]any
			if err := rundir.ReadJSON(p, &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "state")
			if err := rundir.WriteJSON(p, m); err != nil {
				t.Fatal(err)
			}
		}, "split: integrity: manifest.json: no state"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTree(t, orig)
			c.change(t, dir)
			code, outcome, invalid, out := verdictOf(t, bin, dir)
			if code != 3 || outcome != "invalid" || !strings.Contains(invalid, c.reason) {
				t.Errorf("exit %d, outcome %q; want 3, invalid, saying %q; output:\n%s", code, outcome, c.reason, out)
			}
		})
	}
}

// TestDrillReportWhileRunningThenKilledAndEdited (issue 23, item 3): `bulkhead report` on the
// folder of a run still going says it is in progress (exit 2) and writes nothing into it; once
// the runner is killed with SIGKILL the folder reads as cut off (exit 3); and with its run.json
// and manifest edited to say complete and valid, it still exits 3: the manifest records no files
// and no end, and run.json's state alone does not make a run.
func TestDrillReportWhileRunningThenKilledAndEdited(t *testing.T) {
	testenv.Long(t, "runs bulkhead, reports on it while it runs, kills it and reports on the edited folder")
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(t.TempDir(), "bulkhead"))
	root := t.TempDir()
	r := startRunner(t, bin, "run", "smoke", "--only", "shared", "--scale", "10", "--plain", "--no-report", "--out", root)
	dir, _ := waitRunning(t, r, root)
	runDir := filepath.Dir(dir)
	code, _, _, out := verdictOf(t, bin, runDir)
	if code != 2 || !strings.Contains(out, "run in progress") {
		t.Errorf("report while running: exit %d; want 2 saying the run is in progress; output:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(runDir, rundir.SummaryFile)); err == nil {
		t.Error("report wrote a summary into a run in progress")
	}
	_ = r.cmd.Process.Kill()
	r.wait(t, 10*time.Second)
	code, outcome, invalid, out := verdictOf(t, bin, runDir)
	if code != 3 || outcome != "invalid" || !strings.Contains(invalid, "cut off") {
		t.Errorf("report after SIGKILL: exit %d, outcome %q; want 3, invalid, cut off; output:\n%s", code, outcome, out)
	}
	// Edited to say it all went well.
	var run map[string]any
	if err := rundir.ReadJSON(filepath.Join(runDir, rundir.RunFile), &run); err != nil {
		t.Fatal(err)
	}
	run["state"], run["partial"] = rundir.StateComplete, false
	if err := rundir.WriteJSON(filepath.Join(runDir, rundir.RunFile), run); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	m["state"], m["valid"], m["partial"], m["invalid"] = rundir.StateComplete, true, false, nil
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	code, outcome, invalid, out = verdictOf(t, bin, runDir)
	if code != 3 || outcome != "invalid" || !strings.Contains(invalid, "no end after its start") || !strings.Contains(invalid, "records none of the configuration's files") {
		t.Errorf("report on the edited folder: exit %d, outcome %q; want 3, invalid (no end, no records); output:\n%s", code, outcome, out)
	}
}

// TestDrillDiskFills (issue 23, item 5): `bulkhead run` into a 1 MiB filesystem (a tmpfs, as
// root) with --force (the estimate, which counts the report's plots, refuses it otherwise:
// exit 2). The disk fills while raw results are written: the run fails with a message naming
// the file and "no space left on device", exits 1, and its folder, copied out and reported, is
// not valid.
func TestDrillDiskFills(t *testing.T) {
	testenv.Long(t, "runs bulkhead into a small tmpfs")
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "mounting a tmpfs needs root")
	}
	mnt := t.TempDir()
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		testenv.SkipOrFail(t, "mount a 1 MiB tmpfs: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) })
	bin := goBuild(t, "github.com/bulkheadlab/bulkhead/cmd/bulkhead", filepath.Join(t.TempDir(), "bulkhead"))
	args := []string{"run", "smoke", "--rate", "400/s", "--scale", "2", "--plain", "--out", mnt}

	refused := startRunner(t, bin, args...)
	if code := refused.wait(t, time.Minute); code != 2 || !strings.Contains(refused.out.String(), "of raw results and report, but 1.0 MiB free") {
		t.Errorf("without --force: exit %d; want 2, the estimate counting the report refusing; output:\n%s", code, refused.out.String())
	}
	r := startRunner(t, bin, append(args, "--force")...)
	code := r.wait(t, 2*time.Minute)
	out := r.out.String()
	if code != 1 || !strings.Contains(out, "no space left on device") || !strings.Contains(out, filepath.Join(rundir.RawDir, "")) {
		t.Errorf("exit %d; want 1 with the file and no space left on device; output:\n%s", code, out)
	}
	runs, _ := filepath.Glob(filepath.Join(mnt, "*", rundir.RunFile))
	if len(runs) != 1 {
		t.Fatalf("no run folder on the full disk; output:\n%s", out)
	}
	rcode, outcome, invalid, rout := verdictOf(t, bin, copyTree(t, filepath.Dir(runs[0])))
	if rcode != 3 || outcome != "invalid" {
		t.Errorf("report on the folder of the run that filled the disk: exit %d, outcome %q; want 3, invalid; output:\n%s", rcode, outcome, rout)
	}
	t.Logf("the folder, copied out and reported: %s", strings.ReplaceAll(invalid, "\n", "; "))
}
