package scenarios_test

import (
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/scenarios"
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
		{"env without command", "", `    target: {url: "http://h:1", env: {X: "1"}}`, "configurations[0].target: dir and env are for command targets"},
		{"neither", "", `    target: {ready: "http://h:1"}`, "configurations[0].target: needs command"},
		{"unknown placeholder", "", `    target: {command: [x, "{dep.C}"]}`, "configurations[0].target.command[1]: unknown placeholder {dep.C}"},
		{"bad ready URL", "", `    target: {command: [x], ready: "127.0.0.1:{port}"}`, "configurations[0].target.ready: \"127.0.0.1:{port}\" is not an http(s) URL"},
		{"unknown outcomes key", "", `    target: {command: [x], outcomes: {status: {503: rejected}}}`, "t.yaml:16: configurations[0].target.outcomes: field status not found"},
		{"bad outcome class", "", `    target: {command: [x], outcomes: {statuses: {503: nonsense}}}`, "configurations[0].target.outcomes"},
		{"unknown scrape key", "", `    target: {command: [x], scrape: {timout: 1s}}`, "configurations[0].target.scrape: field timout not found"},
		{"listen not host:port", "    listen: 21002", "", `dependencies[1].listen: "21002" is not host:port`},
		{"upstream with latency", "    upstream: 127.0.0.1:9000\n    latency: 5ms", "", "dependencies[1].upstream: a real upstream has its own latency"},
		{"same listen twice", "    listen: 127.0.0.1:21001", "", ""},
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

// Expand fills {port} and {dep.NAME} and refuses anything else.
func TestExpand(t *testing.T) {
	deps := map[string]string{"A": "127.0.0.1:21001"}
	got, err := scenarios.Expand("--port={port} --a=http://{dep.A}", "8080", deps)
	if err != nil || got != "--port=8080 --a=http://127.0.0.1:21001" {
		t.Errorf("Expand = %q, %v", got, err)
	}
	for _, bad := range []string{"{dep.B}", "{host}", "{}"} {
		if _, err := scenarios.Expand(bad, "1", deps); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("Expand(%q) err = %v, want one naming it", bad, err)
		}
	}
}
