package scenarios_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/scenarios"
	"go.yaml.in/yaml/v3"
)

const targetBase = `name: t
timeout: 500ms
dependencies:
  - name: A
    latency: 5ms
  - name: B
%s
endpoints:
  - path: /a
    calls: [A]
load: {rate: 10/s}
phases: [{name: p, duration: 1s}]
configurations:
  - name: shared
    pools: [{name: shared, size: 4, dependencies: [A, B]}]
%s
`

// The target: block and the dependencies' upstream/listen keys load into the scenario, and every
// mistake is an error naming file:line, the field and the reason.
func TestTargetLoading(t *testing.T) {
	cases := []struct {
		name       string
		depB, conf string
		want       string // "" means it loads
	}{
		{"command target", "    listen: 127.0.0.1:21002", `    target:
      command: [node, server.js, --port, "{port}", --b, "http://{dep.B}"]
      env: {X: "{dep.A}"}
      ready: http://127.0.0.1:{port}/healthz
      metrics: http://127.0.0.1:{port}/metrics
      outcomes: {statuses: {503: rejected:full}}
      scrape: {timeout: 1s}`, ""},
		{"url target", "    upstream: 127.0.0.1:9000", `    target: {url: "http://127.0.0.1:8080"}`, ""},
		{"unknown target key", "", `    target: {url: "http://h:1", comand: [x]}`, `t.yaml:16: configurations[0].target.comand: unknown field "comand"`},
		{"command reached at a url", "", `    target: {url: "http://10.213.0.3:{port}", command: [ip, netns, exec, sut, x, "--addr=10.213.0.3:{port}"]}`, ""},
		{"url alone with {port}", "", `    target: {url: "http://h:{port}"}`, "configurations[0].target.url: {port} is for command targets"},
		{"env without command", "", `    target: {url: "http://h:1", env: {X: "1"}}`, "t.yaml:16: configurations[0].target.env: only command and image targets take env (kind is url)"},
		{"a kind named", "", `    target: {kind: command, command: [x, "--stats={port:stats}"], metrics: "http://127.0.0.1:{port:stats}/metrics"}`, ""},
		{"an unknown kind", "", `    target: {kind: ssh, url: "http://h:1"}`, `configurations[0].target.kind: unknown target kind "ssh" (known: builtin, command, image, url)`},
		{"a kind without its key", "", `    target: {kind: command, url: "http://h:1"}`, `configurations[0].target.command: missing required field "command"`},
		{"a named port on a url target", "", `    target: {url: "http://h:1", metrics: "http://h:{port:stats}/metrics"}`, "configurations[0].target.metrics: {port} is for command targets"},
		{"a bad named port", "", `    target: {command: [x, "{port:}"]}`, "configurations[0].target.command[1]: unknown placeholder {port:}"},
		{"neither", "", `    target: {ready: "http://h:1"}`, "configurations[0].target: needs command"},
		{"unknown placeholder", "", `    target: {command: [x, "{dep.C}"]}`, "configurations[0].target.command[1]: unknown placeholder {dep.C}"},
		{"bad ready URL", "", `    target: {command: [x], ready: "127.0.0.1:{port}"}`, "configurations[0].target.ready: \"127.0.0.1:{port}\" is not an http(s) URL"},
		{"unknown outcomes key", "", `    target: {command: [x], outcomes: {status: {503: rejected}}}`, `t.yaml:16: configurations[0].target.outcomes.status: unknown field "status" (known: statuses,`},
		{"bad outcome class", "", `    target: {command: [x], outcomes: {statuses: {503: nonsense}}}`, "configurations[0].target.outcomes"},
		{"unknown scrape key", "", `    target: {command: [x], scrape: {timout: 1s}}`, `configurations[0].target.scrape.timout: unknown field "timout" (known: timeout, resources)`},
		{"listen not host:port", "    listen: 21002", "", `dependencies[1].listen: "21002" is not host:port`},
		{"upstream with latency", "    upstream: 127.0.0.1:9000\n    latency: 5ms", "", "dependencies[1].upstream: a real upstream has its own latency"},
		{"same listen twice", "    listen: 127.0.0.1:21001", "", ""},
		// files: are relative to dir, itself relative to the scenario's folder (here this package's).
		{"files there", "", `    target: {command: [sh, target_test.go], files: [target_test.go, testdata], version: [sh, -c, "echo 1"]}`, ""},
		{"files in dir", "", `    target: {command: [x], dir: .., files: [go.mod]}`, ""},
		{"a file not there", "", `    target: {command: [node, svc.js], files: [svc.js]}`, "t.yaml:16: configurations[0].target.files[0]: svc.js: not found in . (the runner copies it into the run folder)"},
		{"a file outside dir", "", `    target: {command: [x], files: [../go.mod]}`, `configurations[0].target.files[0]: "../go.mod" is not a path inside dir`},
		{"files on a url target", "", `    target: {url: "http://h:1", files: [x]}`, "configurations[0].target.files: only a command target takes files (kind is url)"},
		{"a version on a url target", "", `    target: {url: "http://h:1", version: [curl, -s, "http://h:1/version"]}`, ""},
		{"a placeholder in version", "", `    target: {command: [x, "{port}"], version: [x, --port, "{port}"]}`, "configurations[0].target.version[2]: takes no placeholders"},
		{"image target", "", `    target:
      image: registry.example/orders:v3
      entrypoint: [orders]
      args: [--listen, "$(POD_IP):{port}", --a, "http://{dep.A}", --advertise, "{host}"]
      env: {B: "{dep.B}"}
      port: 8080
      ports: {admin: 9090}
      ready: http://{host}:{port}/healthz
      metrics: http://{host}:{port:admin}/metrics`, ""},
		{"image without port", "", `    target: {image: x}`, `configurations[0].target.port: missing required field "port"`},
		{"image port out of range", "", `    target: {image: x, port: 70000}`, "configurations[0].target.port: needs the port the service listens on in its container"},
		{"image ports twice", "", `    target: {image: x, port: 8080, ports: {admin: 8080}}`, "configurations[0].target.ports.admin: 8080 is port already"},
		{"image named port not there", "", `    target: {image: x, port: 8080, metrics: "http://{host}:{port:stats}/metrics"}`, "configurations[0].target.metrics: {port:stats}: ports has no stats"},
		{"image ready elsewhere", "", `    target: {image: x, port: 8080, ready: "http://127.0.0.1:8080/healthz"}`, "configurations[0].target.ready: \"http://127.0.0.1:8080/healthz\": an image target is reached through its Service"},
		{"image with command", "", `    target: {image: x, port: 8080, command: [x]}`, "configurations[0].target.image: only an image target takes image (kind is command, inferred from command: write kind: to choose another)"},
		{"image with command, kind named", "", `    target: {kind: image, image: x, port: 8080, command: [x]}`, "configurations[0].target.command: only a command target takes command (kind is image)"},
		{"url with {host}", "", `    target: {url: "http://{host}:1"}`, "configurations[0].target.url: {host} is for command targets and image targets"},
		{"command with {host}", "", `    target: {command: [x, "--advertise={host}:{port}"]}`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := strings.Replace(targetBase, "%s", c.depB, 1)
			src = strings.Replace(src, "%s", c.conf, 1)
			sc, err := scenarios.Parse("t.yaml", []byte(src))
			if c.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, c.want)
			}
			_ = sc
		})
	}
}

// Two dependencies cannot listen on one address.
func TestTargetListenTwice(t *testing.T) {
	src := strings.Replace(targetBase, "%s", "    listen: 127.0.0.1:21001", 1)
	src = strings.Replace(src, "    latency: 5ms\n", "    latency: 5ms\n    listen: 127.0.0.1:21001\n", 1)
	src = strings.Replace(src, "%s", "", 1)
	_, err := scenarios.Parse("t.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "dependencies[1].listen: 127.0.0.1:21001 is already another dependency's") {
		t.Fatalf("err = %v", err)
	}
}

// A foreign target states its layout apart from the built-in service's pools: with no limiter
// at all (mode none) it invents no pool, and roles read its layout's mode.
func TestTargetLayout(t *testing.T) {
	const sc = `name: t
timeout: 500ms
dependencies: [{name: A, latency: 5ms}, {name: B, latency: 5ms}]
endpoints: [{path: /a, calls: [A]}, {path: /b, calls: [B]}]
load: {rate: 10/s}
phases: [{name: base, duration: 1s}, {name: slow, duration: 1s, faults: [{dependency: A, type: latency, latency: 450ms}]}]
configurations:
  - name: agent
    target:
      url: http://127.0.0.1:9999
      layout:
        mode: %s
%s
roles: {shared: agent, fault_dependency: A, affected: /a, unaffected: /b, baseline: base, latency_phase: slow}
`
	cases := []struct{ name, mode, pools, want string }{
		{"shared, one socket budget", "shared", "        pools: [{name: agent, dependencies: [A, B], size: 10, max_wait: 250ms}]", ""},
		{"none is refused for roles.shared", "none", "", `roles.shared: configuration "agent" has mode "none", not shared`},
		{"an unknown mode", "pooled", "", `layout.mode: "pooled" is not shared, split or none`},
		{"a dependency in two pools", "split", "        pools: [{name: a, dependencies: [A]}, {name: b, dependencies: [A]}]", `dependency "A" is already in pool "a"`},
		{"an unknown key", "shared", "        pools: [{name: agent, dependencies: [A, B], limit: 3}]", `layout.pools[0].limit: unknown field "limit" (known: name, dependencies, size, max_wait)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := scenarios.Parse("t.yaml", []byte(fmt.Sprintf(sc, c.mode, c.pools)))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				l := s.Configurations[0].Target.Layout
				topo := l.Topology(s)
				if topo.Mode != "shared" || len(topo.Pools) != 1 || topo.Pools[0].MaxWait.String() != "250ms" || len(topo.Endpoints) != 2 {
					t.Errorf("topology %+v", topo)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// A claim may name a foreign target's scraped resources directly: no declared pool needed.
func TestClaimOnScrapedResource(t *testing.T) {
	const sc = `name: t
timeout: 500ms
dependencies: [{name: A, latency: 5ms}]
endpoints: [{path: /a, calls: [A]}]
load: {rate: 10/s}
phases: [{name: p, duration: 1s}]
configurations:
  - name: agent
    target: {url: "http://127.0.0.1:9999", layout: {mode: none}}
  - name: builtin
    mode: none
claims:
  - {id: q, says: "the agent queue stays short", measure: {metric: max_in_use, configuration: agent, phase: p, resource: "queue:agent"}, op: "<", value: 50}
  - {id: e, says: "the event loop keeps up", measure: {metric: saturated_share, configuration: agent, phase: p, resource: "eventloop:main"}, op: "<", value: 0.1}
%s`
	if _, err := scenarios.Parse("t.yaml", []byte(fmt.Sprintf(sc, ""))); err != nil {
		t.Fatal(err)
	}
	bad := `  - {id: b, says: "no such pool", measure: {metric: max_in_use, configuration: builtin, phase: p, resource: "queue:agent"}, op: "<", value: 50}`
	if _, err := scenarios.Parse("t.yaml", []byte(fmt.Sprintf(sc, bad))); err == nil || !strings.Contains(err.Error(), `configuration "builtin" has no pool "agent"`) {
		t.Errorf("a built-in configuration's undeclared pool: err = %v", err)
	}
}

// A loaded target marshals as the one flat mapping it was written as, and loads back the same:
// its kind, its kind's own keys, the common keys and its layout.
func TestTargetRoundTrip(t *testing.T) {
	src := strings.Replace(targetBase, "%s", "", 1)
	src = strings.Replace(src, "%s", `    target:
      command: [node, server.js, --port, "{port}"]
      env: {X: "1"}
      metrics: http://127.0.0.1:{port:stats}/metrics
      layout: {mode: shared, pools: [{name: agent, dependencies: [A, B], size: 4}]}`, 1)
	sc, err := scenarios.Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.Parse("back.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, want := back.Configurations[0].Target, sc.Configurations[0].Target
	if !reflect.DeepEqual(got, want) || got.Kind != "command" {
		t.Errorf("round trip:\n got %+v %+v\nwant %+v %+v\n%s", got, got.Params, want, want.Params, out)
	}
}
