package target_test

import (
	"context"
	"net/http"
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
	fakes, err := target.StartFakes(sc.Dependencies, nil, func(i int) int64 { return int64(i) })
	if err != nil {
		t.Fatal(err)
	}
	defer fakes.Close()
	tg, err := target.BuiltIn{}.Start(context.Background(), target.Spec{Scenario: sc, Configuration: sc.Configurations[1], Dependencies: fakes.URLs})
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

// A dependency without a URL is refused before anything listens.
func TestBuiltInNeedsEveryDependency(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	_, err = target.BuiltIn{}.Start(context.Background(), target.Spec{Scenario: sc, Configuration: sc.Configurations[0],
		Dependencies: map[string]string{"A": "http://127.0.0.1:1"}})
	if err == nil || !strings.Contains(err.Error(), `"B"`) {
		t.Fatalf("err = %v, want one naming dependency B", err)
	}
}

// StartFakes starts only the dependencies it was not given a URL for.
func TestStartFakesSkipsGiven(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	f, err := target.StartFakes(sc.Dependencies, map[string]string{"A": "http://elsewhere"}, func(int) int64 { return 1 })
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, ok := f.URLs["A"]; ok || f.URLs["B"] == "" {
		t.Errorf("fakes %v, want B only", f.URLs)
	}
}
