package nodebulkhead

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scrape"
	"go.yaml.in/yaml/v3"
)

// exampleScenario is the part of scenario.yaml this test checks, in the target format README.md
// describes.
type exampleScenario struct {
	Dependencies []struct {
		Name   string `yaml:"name"`
		Listen string `yaml:"listen"`
	} `yaml:"dependencies"`
	Configurations []struct {
		Name  string `yaml:"name"`
		Mode  string `yaml:"mode"`
		Pools []struct {
			Name string `yaml:"name"`
			Size int    `yaml:"size"`
		} `yaml:"pools"`
		Target struct {
			Command  []string        `yaml:"command"`
			Dir      string          `yaml:"dir"`
			Ready    string          `yaml:"ready"`
			Metrics  string          `yaml:"metrics"`
			Outcomes outcome.Mapping `yaml:"outcomes"`
		} `yaml:"target"`
	} `yaml:"configurations"`
}

// Every configuration of scenario.yaml starts server.js with arguments it accepts, and the pools
// the scenario declares for attribution are the ones the running service reports on /metrics
// (same names, same capacity): the declared topology and the scraped resources agree.
func TestScenarioMatchesService(t *testing.T) {
	raw, err := os.ReadFile("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var sc exampleScenario
	if err := yaml.Unmarshal(raw, &sc); err != nil {
		t.Fatalf("scenario.yaml: %v", err)
	}
	if len(sc.Configurations) != 2 {
		t.Fatalf("scenario.yaml has %d configurations; want shared and split", len(sc.Configurations))
	}
	for i, d := range sc.Dependencies {
		if d.Listen == "" {
			t.Errorf("scenario.yaml: dependencies[%d].listen: missing; the service's command names it", i)
		}
	}
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	defer dep.Close()
	depAddr := strings.TrimPrefix(dep.URL, "http://")
	for i, c := range sc.Configurations {
		t.Run(c.Name, func(t *testing.T) {
			tg := c.Target
			if err := tg.Outcomes.Validate("outcomes"); err != nil {
				t.Errorf("configurations[%d].target.%v", i, err)
			}
			if tg.Dir != "." || len(tg.Command) < 2 || tg.Command[0] != "node" || tg.Command[1] != "server.js" {
				t.Fatalf("configurations[%d].target: command %q in %q; want node server.js in .", i, tg.Command, tg.Dir)
			}
			if !strings.Contains(tg.Ready, "{port}") || !strings.Contains(tg.Metrics, "{port}") {
				t.Errorf("configurations[%d].target: ready %q and metrics %q must use {port}", i, tg.Ready, tg.Metrics)
			}
			// Fill the placeholders as the runner would: every dependency at one fake, and a
			// free port (server.js's --port 0; startNode adds it, and a later flag wins).
			var args []string
			for _, a := range tg.Command[2:] {
				a = strings.ReplaceAll(a, "{port}", "0")
				for _, d := range sc.Dependencies {
					a = strings.ReplaceAll(a, "{dep."+d.Name+"}", depAddr)
				}
				if strings.Contains(a, "{") {
					t.Fatalf("configurations[%d].target.command: unknown placeholder in %q", i, a)
				}
				args = append(args, a)
			}
			svc := startNode(t, args...)
			s, err := scrape.New(svc.url+"/metrics", scrape.Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := s.Resources(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var want []outcome.Resource
			for _, p := range c.Pools {
				// server.js exports no rejection counter of this project's: unknown, not 0.
				want = append(want, outcome.Resource{Name: "pool:" + p.Name, Capacity: float64(p.Size), RejectedUnknown: true})
			}
			slices.SortFunc(want, func(a, b outcome.Resource) int { return strings.Compare(a.Name, b.Name) })
			if !reflect.DeepEqual(rs, want) {
				t.Errorf("configuration %s declares pools %+v; the service reports %+v", c.Name, want, rs)
			}
		})
	}
}
