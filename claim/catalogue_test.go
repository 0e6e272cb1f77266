package claim

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated metric list in docs/verdicts.md")

// Every entry of the catalogue is complete: a unique name per subject, a unit, an interval
// method and a sentence; an alias stands for an entry of the same subject, unit and method.
func TestCatalogueEntries(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range Catalogue {
		key := string(m.Subject) + " " + m.Name
		switch {
		case seen[key]:
			t.Errorf("%s listed twice", key)
		case m.Name == "" || m.Unit == "" || m.Interval == "" || m.Doc == "":
			t.Errorf("%s: incomplete entry %+v", key, m)
		case m.Subject != OfEndpoint && m.Subject != OfResource:
			t.Errorf("%s: unknown subject", key)
		}
		seen[key] = true
		for _, k := range append(slices.Clone(m.Keys), m.Optional...) {
			if k != "level_of" && k != "until" && k != "resource" {
				t.Errorf("%s: unknown key %q", key, k)
			}
		}
		if m.AliasOf != "" {
			a, ok := Lookup(m.AliasOf, m.Subject == OfEndpoint)
			if !ok || a.Unit != m.Unit || a.Interval != m.Interval || a.AliasOf != "" {
				t.Errorf("%s: alias of %q, which is not a plain entry of the same unit and method", key, m.AliasOf)
			}
		}
	}
	if _, ok := Lookup("rejected", true); !ok {
		t.Error("rejected is an endpoint metric")
	}
	if _, ok := Lookup("rejected", false); !ok {
		t.Error("rejected is a resource metric")
	}
	if u := UnitOf(Measure{Metric: "p99_ms", Endpoint: "/b", Over: &Measure{}}); u != "ratio" {
		t.Errorf("unit of an over: is %q, want ratio", u)
	}
	if u := UnitOf(Measure{Metric: "throughput", Endpoint: "/b"}); u != UnitPerS {
		t.Errorf("unit of throughput is %q", u)
	}
}

// docs/verdicts.md carries the catalogue's tables between two markers; `go test ./claim -update`
// rewrites them.
func TestCatalogueDocIsCurrent(t *testing.T) {
	path := filepath.Join("..", "docs", "verdicts.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const begin, end = "<!-- metrics: generated from claim.Catalogue by `go test ./claim -update` -->\n", "<!-- end of metrics -->"
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated metric list between %q and %q", path, begin, end)
	}
	want := CatalogueMarkdown()
	if got := doc[i+len(begin) : j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's metric list is stale: run go test ./claim -update", path)
	}
}
