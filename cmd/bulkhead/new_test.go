package main

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// bulkhead new writes a scenario that loads, with the schema its modeline names beside it:
// from a built-in, or seed 004's isolation test against a command or two running instances.
func TestNew(t *testing.T) {
	cmdArgs := []string{"--command", "./svc --layout {layout} --port {port} --a 'http://{dep.A}' --b http://{dep.B}",
		"--ready", "http://127.0.0.1:{port}/healthz", "--metrics", "http://127.0.0.1:{port}/metrics"}
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, sc *scenarios.Scenario, src string)
	}{
		{"from a built-in", []string{"--from", "hypothesis"}, func(t *testing.T, sc *scenarios.Scenario, src string) {
			hyp, _ := scenarios.Open("hypothesis")
			if sc.Name != "mine" || len(sc.Claims) != len(hyp.Claims) || len(sc.Configurations) != len(hyp.Configurations) {
				t.Errorf("name %q, %d claims: want hypothesis renamed mine", sc.Name, len(sc.Claims))
			}
		}},
		{"a command target", cmdArgs, func(t *testing.T, sc *scenarios.Scenario, src string) {
			if len(sc.Configurations) != 2 || sc.Roles.Unaffected != "/b" || sc.Roles.FaultDependency != "A" {
				t.Fatalf("configurations %d roles %+v", len(sc.Configurations), sc.Roles)
			}
			for i, layout := range []string{"shared", "split"} {
				argv := sc.Configurations[i].Target.Params.(*target.CommandParams).Command
				if sc.Configurations[i].Name != layout || !slices.Equal(argv[:3], []string{"./svc", "--layout", layout}) || argv[6] != "http://{dep.A}" {
					t.Errorf("configuration %d: %s %q", i, sc.Configurations[i].Name, argv)
				}
				if l := sc.Configurations[i].Target.Layout; l.Mode != layout {
					t.Errorf("%s states layout %+v", layout, l)
				}
			}
			var ids []string
			for _, c := range sc.Claims {
				if c.Test == "isolation" {
					ids = append(ids, c.ID)
				}
			}
			if !slices.Contains(ids, "P1-error-level") || !slices.Contains(ids, "P4-success-gap") || !slices.Contains(ids, "P3-cost") {
				t.Errorf("derived claims %v: want P1-P4", ids)
			}
			if !strings.Contains(src, `command: [./svc, --layout, shared, --port, "{port}", --a, "http://{dep.A}"`) ||
				!strings.Contains(src, "--layout, split") {
				t.Errorf("the layouts' commands:\n%s", src)
			}
			if n := strings.Count(src, "\n"); n > 60 {
				t.Errorf("%d lines: seed 004 against your service should take at most 60", n)
			}
		}},
		{"three dependencies, an upstream", append([]string{"--command", "./svc --layout {layout} --port {port} --inventory {dep.inventory} --pricing {dep.pricing} --shipping {dep.shipping}"}, "--endpoint", "/orders=inventory+pricing", "--endpoint", "/track=shipping",
			"--upstream", "shipping=127.0.0.1:9003", "--size", "12"), func(t *testing.T, sc *scenarios.Scenario, src string) {
			if sc.Dependencies[2].Upstream != "127.0.0.1:9003" || sc.Roles.Affected != "/orders" || sc.Roles.Unaffected != "/track" || sc.Roles.FaultDependency != "inventory" {
				t.Errorf("deps %+v roles %+v", sc.Dependencies, sc.Roles)
			}
			split := sc.Configurations[1].Target.Layout
			if len(split.Pools) != 3 || split.Pools[0].Size != 4 {
				t.Errorf("split layout %+v: want 3 pools of 12/3", split)
			}
		}},
		{"two running instances", []string{"--url", "shared=http://10.0.0.5:8080", "--url", "split=http://10.0.0.5:8081", "--version", "curl -s http://10.0.0.5:8080/version"},
			func(t *testing.T, sc *scenarios.Scenario, src string) {
				if sc.Configurations[0].Target.Kind != "url" || sc.Configurations[1].Target.URL != "http://10.0.0.5:8081" ||
					!reflect.DeepEqual(sc.Configurations[0].Target.Version, []string{"curl", "-s", "http://10.0.0.5:8080/version"}) {
					t.Errorf("targets %+v", sc.Configurations[0].Target)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "mine.yaml")
			out, err := executeCommand(t, append([]string{"new", path}, tt.args...)...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if first, _, _ := strings.Cut(string(src), "\n"); first != scenarios.Modeline(scenarios.SchemaFile) {
				t.Errorf("first line %q, want the modeline", first)
			}
			schema, err := os.ReadFile(filepath.Join(dir, scenarios.SchemaFile))
			if err != nil || string(schema) != string(scenarios.JSONSchema()) {
				t.Errorf("the schema beside it: %v", err)
			}
			if v, err := executeCommand(t, "validate", path); err != nil {
				t.Fatalf("validate: %v\n%s", err, v)
			}
			sc, err := scenarios.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, sc, string(src))
		})
	}
}

// What bulkhead new cannot write a test from is refused with what to change, and an existing
// file is kept.
func TestNewRefuses(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "there.yaml")
	if err := os.WriteFile(existing, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := "./svc --layout {layout} --port {port}"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"nothing to test", []string{"new", filepath.Join(dir, "a.yaml")}, "say what to test"},
		{"no layout in the command", []string{"new", filepath.Join(dir, "a.yaml"), "--command", "./svc --port {port}"}, "put {layout} where your service is told its layout"},
		{"no endpoint free of the fault", []string{"new", filepath.Join(dir, "a.yaml"), "--command", cmd, "--endpoint", "/a=A", "--endpoint", "/ab=A+B"}, "needs an endpoint that does not call A"},
		{"a size the dependencies do not divide", []string{"new", filepath.Join(dir, "a.yaml"), "--command", cmd, "--endpoint", "/a=A", "--endpoint", "/b=B", "--endpoint", "/c=C"}, "10 slots do not split evenly among 3 dependencies"},
		{"a bad endpoint", []string{"new", filepath.Join(dir, "a.yaml"), "--command", cmd, "--endpoint", "a=A"}, "want /PATH=DEP"},
		{"one url", []string{"new", filepath.Join(dir, "a.yaml"), "--url", "shared=http://h:1"}, "missing split"},
		{"an upstream nobody calls", []string{"new", filepath.Join(dir, "a.yaml"), "--command", cmd, "--upstream", "C=h:1"}, "no endpoint calls C"},
		{"an unclosed quote", []string{"new", filepath.Join(dir, "a.yaml"), "--command", "./svc '{layout}"}, "unclosed"},
		{"a file not there", []string{"new", filepath.Join(dir, "a.yaml"), "--command", cmd, "--files", "svc"}, "svc: not found"},
		{"an existing file", []string{"new", existing, "--from", "smoke"}, "exists: keeping it"},
		{"an unknown built-in", []string{"new", filepath.Join(dir, "a.yaml"), "--from", "nope"}, "built-in scenario \"nope\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := executeCommand(t, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || exitCode(t.Context(), err, true) != ExitUsage {
				t.Fatalf("err = %v, want a usage error saying %q", err, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "mine" {
		t.Errorf("the existing file was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.yaml")); err == nil {
		t.Error("a refused scenario was written")
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`./svc --a http://{dep.A}`:    {"./svc", "--a", "http://{dep.A}"},
		`sh -c 'echo "$X" | wc'`:      {"sh", "-c", `echo "$X" | wc`},
		`node "my server.js" a\ b ""`: {"node", "my server.js", "a b", ""},
		`  x   y  `:                   {"x", "y"},
	} {
		got, err := splitWords(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}
