package target_test

import (
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/target"
)

func imageConfig(port int, ready, metrics string) *target.Config {
	return &target.Config{Kind: target.Image{}.Name(), Ready: ready, Metrics: metrics, Params: &target.ImageParams{
		Image:      "registry.example/orders:v3",
		Entrypoint: []string{"orders"},
		Args:       []string{"--listen", "$(POD_IP):{port}", "--a", "http://{dep.A}", "--advertise", "{host}:{port:admin}"},
		Env:        map[string]string{"B": "{dep.B}"},
		Port:       port,
		Ports:      map[string]int{"admin": 9090},
	}}
}

// An image target runs where an engine runs containers: the local engine's start refuses it,
// naming the configuration, the image and what to do instead.
func TestImageTargetRefusedLocally(t *testing.T) {
	spec := target.Spec{Name: "shared", Config: imageConfig(8080, "", "")}
	_, err := start(context.Background(), t, spec)
	if err == nil || !strings.Contains(err.Error(), "configuration shared: target: an image target (registry.example/orders:v3) runs only on an engine that runs containers; run with --engine kubernetes") {
		t.Fatalf("err = %v; want the refusal naming the configuration, the image and --engine kubernetes", err)
	}
}

// An engine fills an image target's placeholders with its Service's name ({host}), the
// container's ports and the dependencies' proxies, probes its ready URL's path and port, and
// reaches it through the address it was given once ready answers.
func TestImageTargetResolvedAndReached(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("resilience4j_bulkhead_available_concurrent_calls{name=\"shared\"} 3\nresilience4j_bulkhead_max_allowed_concurrent_calls{name=\"shared\"} 4\n"))
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(l) //nolint:errcheck // closed below
	defer srv.Close()
	port := l.Addr().(*net.TCPAddr).Port

	c := imageConfig(port, "http://{host}:{port}/healthz", "http://{host}:{port}/metrics")
	deps := map[string]string{"A": "http://proxy.ns.svc:9001", "B": "http://proxy.ns.svc:9002"}
	r, err := target.ResolveImage(c, "127.0.0.1", deps)
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(port)
	wantArgs := []string{"--listen", "$(POD_IP):" + p, "--a", "http://proxy.ns.svc:9001", "--advertise", "127.0.0.1:9090"}
	if !slices.Equal(r.Args, wantArgs) || r.Env["B"] != "proxy.ns.svc:9002" || r.URL != "http://127.0.0.1:"+p || r.Ready != "http://127.0.0.1:"+p+"/healthz" {
		t.Errorf("resolved %+v; want args %q, B=proxy.ns.svc:9002, the url and ready on the host", r, wantArgs)
	}
	if path, pp, ok := r.ReadyProbe(); !ok || path != "/healthz" || pp != port {
		t.Errorf("ReadyProbe = %q %d %v; want /healthz on %d", path, pp, ok, port)
	}
	tg, err := target.ReachImage(context.Background(), target.Spec{Name: "shared", Config: c}, r, "Deployment ns/sut")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close(context.Background())
	rec := tg.Record()
	if tg.URL() != r.URL || rec.Kind != "image" || rec.Image != "registry.example/orders:v3" || !strings.Contains(rec.Description, "image registry.example/orders:v3 (Deployment ns/sut)") {
		t.Errorf("target %q record %+v", tg.URL(), rec)
	}
	if rs := tg.Resources(); len(rs) == 0 {
		t.Errorf("no resources scraped from %s", r.Metrics)
	}

	// No ready URL: the probe only connects, and {port:NAME} needs a port of that name.
	if _, _, ok := (target.ImageRun{}).ReadyProbe(); ok {
		t.Error("a probe path without a ready URL")
	}
	bad := imageConfig(port, "", "http://{host}:{port:stats}/metrics")
	if _, err := target.ResolveImage(bad, "h", deps); err == nil || !strings.Contains(err.Error(), "target.metrics: unknown placeholder {port:stats}") {
		t.Errorf("ResolveImage with {port:stats}: %v", err)
	}
}

// An image target's cpu and memory are Kubernetes quantities; a typo is refused when the scenario
// loads, naming the key, not when the engine applies the Deployment.
func TestImageTargetResources(t *testing.T) {
	c := imageConfig(8080, "", "")
	p := c.Params.(*target.ImageParams)
	p.CPU, p.Memory = "500m", "256Mi"
	if probs := (target.Image{}).Check(c); len(probs) != 0 {
		t.Errorf("cpu 500m, memory 256Mi: %v, want no problem", probs)
	}
	p.CPU, p.Memory = "half", "256MB"
	var got []string
	for _, pr := range (target.Image{}).Check(c) {
		got = append(got, pr.Field+": "+pr.Msg)
	}
	want := []string{`cpu: "half" is not a Kubernetes quantity (such as 500m or 2)`, `memory: "256MB" is not a Kubernetes quantity (such as 256Mi or 1Gi)`}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, want %q", got, want)
	}
	p.CPU, p.Memory = "2", "1Gi"
	r, err := target.ResolveImage(c, "sut.ns.svc", map[string]string{"A": "a:1", "B": "b:1"})
	if err != nil || r.CPU != "2" || r.Memory != "1Gi" {
		t.Errorf("resolved cpu %q memory %q (%v), want 2 and 1Gi", r.CPU, r.Memory, err)
	}
}
