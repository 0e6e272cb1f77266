package target_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// The built-in target serves the configuration it was given, calls the dependencies at the URLs
// it was told, reports its resources, records its config, and stops on Close.
func TestBuiltInServesTheConfiguration(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	fakes, err := target.StartFakes(sc.FakeDependencies(func(i int) int64 { return int64(i) }), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer fakes.Close()
	cfg, err := sc.ServiceConfig(sc.Configurations[1], fakes.URLs)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := target.BuiltIn{}.Start(context.Background(), target.Spec{Service: cfg, Dependencies: fakes.URLs})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(tg.URL() + "/a")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get(outcome.HeaderOutcome); resp.StatusCode != http.StatusOK || got != "ok" {
		t.Errorf("GET /a: %d, outcome %q; want 200 ok", resp.StatusCode, got)
	}
	names := map[string]bool{}
	for _, r := range tg.Resources() {
		names[r.Name] = true
	}
	if !names["pool:A"] || !names["pool:B"] || names["pool:shared"] {
		t.Errorf("resources %v, want the split layout's pools A and B", names)
	}
	desc, err := tg.(target.Describer).Describe()
	if err != nil || !strings.Contains(string(desc), fakes.URLs["A"]) {
		t.Errorf("Describe = %s, %v; want the config with A's URL %s", desc, err, fakes.URLs["A"])
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(tg.URL() + "/a"); err == nil {
		t.Errorf("still serving after Close")
	}
}

// A dependency without a URL is refused before anything listens: the plan's config cannot be
// filled, and the service refuses one that was not.
func TestBuiltInNeedsEveryDependency(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	planned, err := sc.ServiceConfig(sc.Configurations[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := planned.WithURLs(map[string]string{"A": "http://127.0.0.1:1"}); err == nil || !strings.Contains(err.Error(), `"B"`) {
		t.Errorf("WithURLs err = %v, want one naming dependency B", err)
	}
	planned.Dependencies[1].URL = ""
	if _, err := (target.BuiltIn{}).Start(context.Background(), target.Spec{Service: planned}); err == nil {
		t.Fatal("the built-in service started without B's URL")
	}
}

// Every registered kind has a name, a doc and a kind of its own; the kinds a key selects are
// distinct; Of finds them and refuses an unknown one; Infer reads the keys as the loader does.
func TestKindsRegistry(t *testing.T) {
	for _, name := range target.Kinds() {
		k, ok := target.Lookup(name)
		if !ok || k.Name() != name || k.Doc() == "" {
			t.Errorf("kind %q: lookup %v, doc %q", name, ok, k.Doc())
		}
	}
	if k, err := target.Of(nil); err != nil || k.Name() != target.BuiltInKind {
		t.Errorf("Of(nil) = %v, %v; want the built-in service", k, err)
	}
	if _, err := target.Of(&target.Config{Kind: "ssh"}); err == nil || !strings.Contains(err.Error(), "known: builtin, command, image, url") {
		t.Errorf("Of(ssh) err = %v", err)
	}
	for _, c := range []struct {
		keys []string
		want string
	}{{[]string{"command", "url"}, "command"}, {[]string{"image", "url"}, "image"}, {[]string{"url"}, "url"}, {[]string{"ready"}, ""}} {
		got := ""
		if k, ok := target.Infer(func(key string) bool { return slices.Contains(c.keys, key) }); ok {
			got = k.Name()
		}
		if got != c.want {
			t.Errorf("Infer(%v) = %q, want %q", c.keys, got, c.want)
		}
	}
}

// StartFakes starts only the dependencies it was not given a URL for.
func TestStartFakesSkipsGiven(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	f, err := target.StartFakes(sc.FakeDependencies(func(int) int64 { return 1 }), map[string]string{"A": "http://elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.URLs["A"]; ok || f.URLs["B"] == "" {
		t.Errorf("fakes %v, want B only", f.URLs)
	}
}
