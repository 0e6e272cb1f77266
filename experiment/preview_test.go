package experiment

import (
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

// The preview is read off the plans: per phase, each endpoint's requests are the sends its pacer
// schedules in the phase (they add up to what the manifest plans for the time line), at the
// phase's own rate; faults are resolved; the configurations' slots are their pools' sizes.
func TestNewPreview(t *testing.T) {
	hooks := open(t, "webhooks")
	hooks.Repetitions = 1
	plans, err := Plans(hooks, 0)
	if err != nil {
		t.Fatal(err)
	}
	pv := NewPreview(hooks, plans, 2)
	if pv.Runs != len(plans) || len(pv.Configurations) != len(hooks.Configurations) || pv.Parallel != 2 {
		t.Fatalf("runs %d configurations %d parallel %d", pv.Runs, len(pv.Configurations), pv.Parallel)
	}
	for i, e := range plans[0].Manifest.Endpoints {
		var sum uint64
		for _, ph := range pv.Phases {
			sum += ph.Requests[e.Path]
		}
		// The manifest also counts a send due at the very end of the time line, in no phase.
		if sum > e.Planned || e.Planned-sum > 1 {
			t.Errorf("%s: phases sum to %d requests, the manifest plans %d", e.Path, sum, e.Planned)
		}
		// vegeta's first send is one interval in: 0.1 s, ..., 2.9 s at 10/s (3.0 s is the burst's).
		if i == 0 && pv.Phases[0].Requests[e.Path] != 29 {
			t.Errorf("%s baseline: %d requests, want 29", e.Path, pv.Phases[0].Requests[e.Path])
		}
	}
	// The burst is 300 sends at 150/s, its schedule led by the stream's arrival offset (less than
	// one 100 ms interval of its normal rate): up to 15 of them fall before the phase.
	burst := pv.Phases[1]
	if n := burst.Requests["/webhooks/c"]; burst.Rates["/webhooks/c"] != 150 || n < 285 || n > 300 || burst.Rates["/a"] != 10 {
		t.Errorf("burst: rates %v requests %v; want /webhooks/c at 150/s (285-300 in 2 s), /a at 10/s", burst.Rates, burst.Requests)
	}
	for _, c := range pv.Configurations {
		if c.Slots != 5 || c.Target != "builtin" {
			t.Errorf("%s: %d slots, target %q; want the five-slot lookups pool of the built-in service", c.Name, c.Slots, c.Target)
		}
	}

	smoke := open(t, "smoke")
	plans, err = Plans(smoke, 0)
	if err != nil {
		t.Fatal(err)
	}
	pv = NewPreview(smoke, plans, 1)
	if got := strings.Join(pv.Phases[1].Faults, ";"); got != "latency 450ms on A" {
		t.Errorf("latency phase faults %q, want the 0.9x timeout resolved to 450ms", got)
	}
	if pv.Resolved["phases[1].faults[0].latency"] == "" {
		t.Errorf("resolved %v: want the relative latency", pv.Resolved)
	}
}

// A target's strings are shown with the placeholders the plan can fill: a dependency with a
// fixed listen address is reached there; ports and proxies chosen at start are named, not
// invented. A claim the planned requests cannot bound is marked infeasible with its reason.
func TestPreviewTargetsAndClaims(t *testing.T) {
	sc, plans, c := previewOf(t, `name: t
timeout: 500ms
dependencies:
  - {name: A, listen: "127.0.0.1:19001"}
  - {name: B}
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load: {rate: 10/s}
configurations:
  - name: mine
    target:
      command: [./svc, --port, "{port}", --stats, "{port:stats}", --a, "http://{dep.A}", --b, "http://{dep.B}"]
      metrics: "http://127.0.0.1:{port:stats}/metrics"
      layout: {mode: shared, pools: [{name: all, dependencies: [A, B], size: 8}]}
phases:
  - {name: p, duration: 2s}
claims:
  - {id: c, says: "p99 of /a is low", measure: {metric: p99_ms, configuration: mine, phase: p, endpoint: /a}, op: "<", value: 100}
`)
	checkStrings(t, c.Strings, map[string]string{
		"command[2]": "<port>", "command[4]": "<port:stats>",
		"command[6]": "http://127.0.0.1:19001", "command[8]": "http://<proxy of B>",
		"metrics": "http://127.0.0.1:<port:stats>/metrics",
	})
	if c.Target != "command" || c.Slots != 8 || c.Mode != "shared" {
		t.Errorf("target %q slots %d mode %q; want the command's stated layout of 8", c.Target, c.Slots, c.Mode)
	}
	cl := NewPreview(sc, plans, 1).Claims
	if len(cl) != 1 || cl[0].Feasible || len(cl[0].Infeasible) == 0 || !strings.Contains(cl[0].Infeasible[0], "p99_ms of /a in mine/p") {
		t.Errorf("claims %+v: want c infeasible (2 s at 10/s cannot bound a p99)", cl)
	}
}

// An image target's ports are the scenario's (its container's), so the plan shows them as they
// will be; only the host (the Service's name) is chosen when the configuration starts.
func TestPreviewImagePorts(t *testing.T) {
	_, _, c := previewOf(t, `name: t
timeout: 500ms
dependencies: [{name: A}]
endpoints: [{path: /a, calls: [A]}]
load: {rate: 10/s}
configurations:
  - name: mine
    target:
      image: shop:1.2
      args: [--listen, "$(POD_IP):{port}", --a, "http://{dep.A}"]
      port: 8181
      ports: {admin: 9090}
      ready: "http://{host}:{port}/healthz"
      metrics: "http://{host}:{port:admin}/metrics"
      layout: {mode: shared, pools: [{name: all, dependencies: [A], size: 8}]}
phases: [{name: p, duration: 2s}]
`)
	checkStrings(t, c.Strings, map[string]string{
		"args[1]": "$(POD_IP):8181", "args[3]": "http://<proxy of A>",
		"ready": "http://<host>:8181/healthz", "metrics": "http://<host>:9090/metrics",
	})
}

// previewOf returns the scenario yaml, its plans and the preview of its only configuration.
func previewOf(t *testing.T, yaml string) (*scenarios.Scenario, []*Plan, ConfigPreview) {
	t.Helper()
	sc, err := scenarios.Parse("t.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Plans(sc, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sc, plans, NewPreview(sc, plans, 1).Configurations[0]
}

// checkStrings fails t for every key of want whose planned string differs.
func checkStrings(t *testing.T, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
