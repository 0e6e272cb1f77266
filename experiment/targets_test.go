package experiment_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// tiny is a one-second scenario with dependencies A and B; deps is spliced under B.
func tiny(t *testing.T, depA, depB string) *scenarios.Scenario {
	t.Helper()
	src := `name: tiny
timeout: 200ms
dependencies:
  - name: A
` + depA + `
  - name: B
` + depB + `
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load: {rate: 20/s, timeout: 1s}
phases: [{name: p, duration: 1s}]
configurations:
  - {name: shared, pools: [{name: shared, size: 4, dependencies: [A, B]}]}
`
	sc, err := scenarios.Parse("tiny.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func noProxyOn(t *testing.T, addr string) {
	t.Helper()
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("something still listens on %s", addr)
	}
}

// Bad input around the dependencies stops the run before any load, with an error naming the
// configuration, the dependency and the address; no proxy is left listening.
func TestRunDependencyFailures(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	freeAddr := free.Addr().String()
	free.Close()
	cases := []struct {
		name, depA, depB string
		want             []string
		gone             string // an address nothing may listen on afterwards
	}{
		{"unreachable upstream", "    listen: " + freeAddr, "    upstream: 127.0.0.1:1",
			[]string{"configuration shared", "dependency B", "upstream 127.0.0.1:1", "unreachable"}, freeAddr},
		{"listen address taken", "    latency: 1ms", "    listen: " + busy.Addr().String(),
			[]string{"configuration shared", "dependency B", "listen " + busy.Addr().String(), "address already in use"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			_, err := experiment.Run(context.Background(), tiny(t, c.depA, c.depB), experiment.Options{ResultsRoot: root})
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err = %v, want it to say %q", err, w)
				}
			}
			if c.gone != "" {
				noProxyOn(t, c.gone)
			}
		})
	}
}

// A real upstream is reached through its proxy on the fixed listen address, and the manifest
// records the target and where each part listened.
func TestRunRealUpstream(t *testing.T) {
	testenv.Long(t, "runs a 1 s time line")
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }))
	defer up.Close()
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	listen := free.Addr().String()
	free.Close()
	sc := tiny(t, "    upstream: "+strings.TrimPrefix(up.URL, "http://")+"\n    listen: "+listen, "    latency: 1ms")
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, filepath.Join(res.Dir, "shared"))
	if m.Target == nil || m.Target.Kind != target.BuiltInKind || m.Target.Listen["proxy:A"] != listen {
		t.Fatalf("manifest target %+v, want builtin with proxy:A on %s", m.Target, listen)
	}
	n, _ := countRaw(t, filepath.Join(res.Dir, "shared", m.Endpoints[0].RawFile))
	if n == 0 || m.Endpoints[0].Sent != n {
		t.Errorf("/a: %d results, %d sent", n, m.Endpoints[0].Sent)
	}
	noProxyOn(t, listen)
}

// A command target that exits before it is ready stops the run with an error naming the
// configuration, the command, the ready address and its stderr; its stderr is kept in the run
// folder and no proxy is left listening.
func TestRunCommandExits(t *testing.T) {
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	listen := free.Addr().String()
	free.Close()
	sc := tiny(t, "    listen: "+listen, "")
	sc.Configurations[0].Target = &scenarios.Target{Config: target.Config{
		Kind:   "command",
		Params: &target.CommandParams{Command: []string{"sh", "-c", "echo no such flag --mode >&2; exit 3", "{port}"}},
		Ready:  "http://127.0.0.1:{port}/healthz",
	}}
	root := t.TempDir()
	_, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: root})
	for _, w := range []string{"configuration shared", "exited with status 3 before it was ready", "/healthz", "no such flag --mode"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("err = %v, want it to say %q", err, w)
		}
	}
	logs, _ := filepath.Glob(filepath.Join(root, "*", "shared", "target.stderr.log"))
	if len(logs) != 1 {
		t.Fatalf("stderr logs %v, want one in the configuration's folder", logs)
	}
	if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "no such flag") {
		t.Errorf("%s = %q", logs[0], b)
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(logs[0]), experiment.StartErrorFile)); !strings.Contains(string(b), "exited with status 3") {
		t.Errorf("%s = %q, want the start error", experiment.StartErrorFile, b)
	}
	noProxyOn(t, listen)
}
