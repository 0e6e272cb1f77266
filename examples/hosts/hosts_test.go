package hosts

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// The three hosts of scenario.yaml and their addresses on one LAN (10.213.0.0/24). A fourth
// namespace, the LAN itself, holds only the bridge the hosts' veth pairs are plugged into, so
// nothing of the test touches the root namespace's network: no namespace has a route out.
var hostAddr = map[string]string{"load": "10.213.0.1", "sut": "10.213.0.2", "deps": "10.213.0.3"}

// lab is the set of namespaces of one test, named bh<pid>-<role>.
type lab struct {
	t      *testing.T
	prefix string
	bin    string // the bulkhead binary
	logs   string // where every process's output goes
}

func (l *lab) ns(role string) string { return l.prefix + "-" + role }

// ip runs `ip args...` and fails the test with its output on error.
func (l *lab) ip(args ...string) {
	l.t.Helper()
	if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
		l.t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// canRun says why this machine cannot build network namespaces, or "" when it can: it needs
// Linux, root and a working `ip netns` (iproute2). It tries one namespace and removes it.
func canRun(prefix string) string {
	if os.Geteuid() != 0 {
		return "not root: creating network namespaces (ip netns add) needs root"
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return "no ip command (iproute2) on PATH"
	}
	probe := prefix + "-probe"
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		return fmt.Sprintf("ip netns add fails here (%v: %s)", err, bytes.TrimSpace(out))
	}
	if out, err := exec.Command("ip", "netns", "del", probe).CombinedOutput(); err != nil {
		return fmt.Sprintf("ip netns del fails here (%v: %s)", err, bytes.TrimSpace(out))
	}
	return ""
}

// build makes the LAN namespace with a bridge and one namespace per host, each with loopback
// up and an eth0 (a veth pair whose other end is on the bridge) holding its address. The
// namespaces (and with them the veth pairs) are deleted at the test's cleanup, even when
// building fails half-way.
func (l *lab) build() {
	l.t.Helper()
	roles := []string{"lan", "load", "sut", "deps"}
	l.t.Cleanup(func() {
		for _, r := range roles {
			if out, err := exec.Command("ip", "netns", "del", l.ns(r)).CombinedOutput(); err != nil && !bytes.Contains(out, []byte("No such file")) {
				l.t.Logf("ip netns del %s: %v %s", l.ns(r), err, out)
			}
		}
	})
	for _, r := range roles {
		l.ip("netns", "add", l.ns(r))
	}
	lan := l.ns("lan")
	l.ip("-n", lan, "link", "add", "br0", "type", "bridge")
	l.ip("-n", lan, "link", "set", "br0", "up")
	for _, r := range []string{"load", "sut", "deps"} {
		l.ip("link", "add", "eth0", "netns", l.ns(r), "type", "veth", "peer", "name", r, "netns", lan)
		l.ip("-n", lan, "link", "set", r, "master", "br0", "up")
		l.ip("-n", l.ns(r), "addr", "add", hostAddr[r]+"/24", "dev", "eth0")
		l.ip("-n", l.ns(r), "link", "set", "eth0", "up")
		l.ip("-n", l.ns(r), "link", "set", "lo", "up")
	}
}

// start runs bulkhead with args in role's namespace (`ip netns exec`, which execs it: the pid is
// bulkhead's), its output in the log folder, and waits until a line of its stdout contains
// ready (each command prints where it listens once it is bound) or it exits. It is stopped by
// pid at the test's cleanup: SIGTERM, then SIGKILL after 5 s.
func (l *lab) start(role, name, ready string, args ...string) {
	l.t.Helper()
	cmd := exec.Command("ip", append([]string{"netns", "exec", l.ns(role), l.bin}, args...)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	log, err := os.Create(filepath.Join(l.logs, role+"-"+name+".log"))
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		l.t.Fatalf("start %s on %s: %v", name, role, err)
	}
	exited := make(chan struct{})
	l.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		log.Close()
	})
	seen := make(chan struct{})
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(log, sc.Text())
			if strings.Contains(sc.Text(), ready) {
				once.Do(func() { close(seen) })
			}
		}
		_ = cmd.Wait()
		close(exited)
	}()
	select {
	case <-seen:
	case <-exited:
		body, _ := os.ReadFile(log.Name())
		l.t.Fatalf("%s on %s exited before it listened:\n%s", name, role, body)
	case <-time.After(30 * time.Second):
		l.t.Fatalf("%s on %s did not say %q within 30 s", name, role, ready)
	}
}

// routes returns the destinations of role's namespace's IPv4 and IPv6 routes.
func (l *lab) routes(role string) []string {
	l.t.Helper()
	var dsts []string
	for _, family := range []string{"-4", "-6"} {
		out, err := exec.Command("ip", family, "-j", "-n", l.ns(role), "route", "show").Output()
		if err != nil {
			l.t.Fatalf("ip route on %s: %v", role, err)
		}
		var rs []struct{ Dst string }
		if err := json.Unmarshal(out, &rs); err != nil {
			l.t.Fatalf("ip -j route on %s: %v\n%s", role, err, out)
		}
		for _, r := range rs {
			dsts = append(dsts, r.Dst)
		}
	}
	return dsts
}

// leaving returns the route destinations that lead out of the LAN: all but the LAN's own
// 10.213.0.0/24 and IPv6 link-local fe80::/64 (never routed).
func leaving(dsts []string) []string {
	var out []string
	for _, d := range dsts {
		if d != "10.213.0.0/24" && d != "fe80::/64" {
			out = append(out, d)
		}
	}
	return out
}

// eth0 returns the packets eth0 of role's namespace has received and sent.
func (l *lab) eth0(role string) (rx, tx uint64) {
	l.t.Helper()
	out, err := exec.Command("ip", "-j", "-s", "-n", l.ns(role), "link", "show", "dev", "eth0").Output()
	if err != nil {
		l.t.Fatalf("ip -s link on %s: %v", role, err)
	}
	var links []struct {
		Stats struct {
			RX struct{ Packets uint64 } `json:"rx"`
			TX struct{ Packets uint64 } `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		l.t.Fatalf("ip -j -s link on %s: %v\n%s", role, err, out)
	}
	return links[0].Stats.RX.Packets, links[0].Stats.TX.Packets
}

// Seed 004's P1 and P2 hold with the load generator, the service under test and the dependencies
// (with Toxiproxy) on three hosts: the namespaces load, sut and deps on one bridged LAN, each
// part started the way README.md starts it on real hosts. The runner, in load, creates the
// proxies and switches the faults through the Toxiproxy API on deps, sends the load to the
// service on sut and scrapes its /metrics there; the service calls the proxies on deps. Every
// claim must hold, the manifests must show each part at its host's address, the traffic must
// have crossed each host's interface, and the service must not be reachable from outside the
// LAN.
func TestPartsOnSeparateHosts(t *testing.T) {
	testenv.Long(t, "builds bulkhead and runs two 57 s time lines across network namespaces")
	l := &lab{t: t, prefix: fmt.Sprintf("bh%d", os.Getpid()), logs: t.TempDir()}
	if why := canRun(l.prefix); why != "" {
		testenv.SkipOrFail(t, "parts on separate hosts needs network namespaces: %s", why)
	}
	bindir := t.TempDir()
	l.bin = filepath.Join(bindir, "bulkhead")
	if out, err := exec.Command("go", "build", "-o", l.bin, "../../cmd/bulkhead").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	l.build()

	deps, sut := hostAddr["deps"], hostAddr["sut"]
	// The dependencies' host: two fake dependencies and the Toxiproxy server.
	l.start("deps", "dep-A", "dependency A at", "dep", "--name", "A", "--latency", "5ms", "--jitter", "1ms", "--seed", "1", "--addr", deps+":9001")
	l.start("deps", "dep-B", "dependency B at", "dep", "--name", "B", "--latency", "5ms", "--jitter", "1ms", "--seed", "2", "--addr", deps+":9002")
	l.start("deps", "toxiproxy", "API listening", "toxiproxy", "serve", "--listen", deps+":8474")
	// The service's host: the shared configuration's service, started by hand (a url: target).
	l.start("sut", "serve-shared", "listening on", "serve", "--mode", "shared", "--pool-size", "10",
		"--addr", sut+":8081", "--dep", "A=http://"+deps+":21001", "--dep", "B=http://"+deps+":21002")

	// Nothing is routed out of the LAN: each host's only routes are the LAN's own (no default
	// route), so every packet of the run stays between these namespaces. (A TCP connect from the
	// root namespace is no test of that: a sandbox's egress proxy may accept any address.)
	for _, r := range []string{"load", "sut", "deps"} {
		if routes := l.routes(r); len(leaving(routes)) > 0 {
			t.Fatalf("%s has routes to %v (routes %v): traffic could leave the LAN", r, leaving(routes), routes)
		}
	}

	// The scenario as README.md gives it, with this test's namespace in split's command.
	raw, err := os.ReadFile("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("exec, bh-sut,")) {
		t.Fatal("scenario.yaml's split command no longer runs in namespace bh-sut")
	}
	scen := filepath.Join(t.TempDir(), "scenario.yaml")
	if err := os.WriteFile(scen, bytes.ReplaceAll(raw, []byte("exec, bh-sut,"), []byte("exec, "+l.ns("sut")+",")), 0o644); err != nil {
		t.Fatal(err)
	}

	rx0, _ := l.eth0("sut")
	drx0, _ := l.eth0("deps")
	// The load generator's host: the runner, with `bulkhead` (for split's command) on its PATH.
	out := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, "ip", "netns", "exec", l.ns("load"), l.bin, "run", scen, "--toxiproxy", "http://"+deps+":8474", "--out", out, "--json")
	run.Env = append(os.Environ(), "PATH="+bindir+string(os.PathListSeparator)+os.Getenv("PATH"))
	run.Cancel = func() error { return run.Process.Signal(syscall.SIGINT) } // the runner's clean stop
	run.WaitDelay = 10 * time.Second
	var verdictJSON, progress bytes.Buffer
	run.Stdout, run.Stderr = &verdictJSON, &progress
	start := time.Now()
	runErr := run.Run()
	t.Logf("bulkhead run in %s: %v after %s", l.ns("load"), runErr, time.Since(start).Round(time.Second))
	t.Logf("its progress and verdict lines:\n%s", progress.String())
	var verdict model.VerdictBlock
	if err := json.Unmarshal(verdictJSON.Bytes(), &verdict); err != nil {
		t.Fatalf("bulkhead run: %v; its --json output does not parse (%v):\n%s", runErr, err, verdictJSON.String())
	}
	if !verdict.Valid {
		t.Fatalf("the run is invalid (the load generator fell behind; machine too busy?): %v", verdict.Invalid)
	}
	// Every claim holds but P1-p99-level, which one repetition can rarely decide: it reads the
	// p99 of /a's and /b's successes under the shared pool in the stall, and that pool serves
	// about 22 calls a second, too few successes in 40 s for a p99's upper end (scenario.yaml says
	// so and runs it with repetitions on real hosts). It may hold; it must never be judged false.
	const undecidable = "P1-p99-level"
	allHold := true
	for _, c := range verdict.Claims {
		t.Logf("claim %s %s: %s", c.ID, c.Verdict, c.Reason)
		switch {
		case c.Verdict == model.VerdictHolds:
		case c.ID == undecidable && c.Verdict != model.VerdictDoesNotHold:
			allHold = false
		default:
			allHold = false
			t.Errorf("claim %s %s across hosts: %s", c.ID, c.Verdict, c.Reason)
		}
	}
	if len(verdict.Claims) != 8 {
		t.Errorf("%d claims judged, want P1's 3 and P2's 5", len(verdict.Claims))
	}
	if allHold && runErr != nil || !allHold && (runErr == nil || !strings.Contains(runErr.Error(), "exit status 99")) {
		t.Errorf("bulkhead run exited with %v; want 0 when every claim holds, 99 when %s is undecided", runErr, undecidable)
	}

	// Where each part ran, from the manifests, and what the runner sent.
	var sent uint64
	for _, conf := range []string{"shared", "split"} {
		var m rundir.Manifest
		if err := rundir.ReadJSON(filepath.Join(verdict.RunDir, conf, rundir.ManifestFile), &m); err != nil {
			t.Fatal(err)
		}
		if m.Target == nil || !strings.HasPrefix(m.Target.URL, "http://"+sut+":") || !strings.HasPrefix(m.Target.Metrics, "http://"+sut+":") {
			t.Errorf("%s: target %+v, want the service and its metrics on %s", conf, m.Target, sut)
		}
		for _, d := range []string{"A", "B"} {
			if got := m.Target.Listen["proxy:"+d]; !strings.HasPrefix(got, deps+":") {
				t.Errorf("%s: proxy for %s listened on %q, want %s", conf, d, got, deps)
			}
		}
		if m.Toxiproxy != "http://"+deps+":8474" {
			t.Errorf("%s: toxiproxy %q, want the deps host's", conf, m.Toxiproxy)
		}
		for _, e := range m.Endpoints {
			sent += e.Sent
			t.Logf("%s %s: sent %d, dropped %d, send lag p50 %v p99 %v max %v", conf, e.Path, e.Sent, e.Dropped, e.LagP50, e.LagP99, e.LagMax)
		}
		if len(m.Target.Problems) > 0 {
			t.Errorf("%s: target problems %v", conf, m.Target.Problems)
		}
	}
	// The figures behind P1 and P2, and the traffic they rest on.
	var s model.Summary
	if err := rundir.ReadJSON(filepath.Join(verdict.RunDir, rundir.SummaryFile), &s); err != nil {
		t.Fatal(err)
	}
	var ok float64
	for _, c := range s.Configurations {
		for _, ph := range c.Phases {
			for _, ep := range []string{"/a", "/b"} {
				if st := ph.Endpoints[ep]; st != nil {
					ok += float64(st.Requests) * st.SuccessRate
					t.Logf("%s %s %s: %d requests, success %.3f, p99 %.1f ms", c.Name, ph.Name, ep, st.Requests, st.SuccessRate, st.P99MS)
				}
			}
		}
	}
	// Every request reached sut through its eth0 (a packet at least each), and every successful
	// one made a call of the service to a dependency, which reached deps through its own.
	rx1, _ := l.eth0("sut")
	drx1, _ := l.eth0("deps")
	t.Logf("packets received: sut eth0 %d, deps eth0 %d; requests sent by the runner %d, of which %.0f successful", rx1-rx0, drx1-drx0, sent, ok)
	if sent == 0 || rx1-rx0 < sent {
		t.Errorf("sut's eth0 received %d packets for %d requests: the load did not cross the LAN", rx1-rx0, sent)
	}
	if ok == 0 || float64(drx1-drx0) < ok {
		t.Errorf("deps' eth0 received %d packets for %.0f successful requests: the service's calls did not cross the LAN", drx1-drx0, ok)
	}
}

// leaving finds every route out of the LAN, and none in a host wired as the test wires it.
func TestLeaving(t *testing.T) {
	cases := []struct {
		name   string
		routes []string
		want   string
	}{
		{"LAN and link-local only", []string{"10.213.0.0/24", "fe80::/64"}, ""},
		{"no routes at all", nil, ""},
		{"a default route", []string{"default", "10.213.0.0/24"}, "default"},
		{"another network", []string{"10.213.0.0/24", "192.0.2.0/24", "fe80::/64"}, "192.0.2.0/24"},
		{"a wider LAN", []string{"10.213.0.0/16"}, "10.213.0.0/16"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(leaving(c.routes), ","); got != c.want {
				t.Errorf("leaving(%v) = %q, want %q", c.routes, got, c.want)
			}
		})
	}
}
