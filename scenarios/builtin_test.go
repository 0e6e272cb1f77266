package scenarios

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/service"
)

func TestNames(t *testing.T) {
	got := Names()
	for _, want := range []string{"hypothesis", "smoke"} {
		if !slices.Contains(got, want) {
			t.Errorf("Names() = %v, want it to contain %q", got, want)
		}
	}
	if !slices.IsSorted(got) {
		t.Errorf("Names() = %v, not sorted", got)
	}
}

func TestBuiltinsLoadAndValidate(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			if s.Path != "builtin:"+name {
				t.Errorf("Path = %q, want builtin:%s", s.Path, name)
			}
			if s.Name != name {
				t.Errorf("name: %q in the file, want %q (the file name)", s.Name, name)
			}
			if err := s.Validate(); err != nil {
				t.Errorf("Validate() after Open: %v", err)
			}
			src, err := Source(name)
			if err != nil || string(src) != string(s.Raw) {
				t.Errorf("Source(%q) = %d bytes, %v; want the %d bytes Open loaded", name, len(src), err, len(s.Raw))
			}
		})
	}
}

// The numbers of seed 004's test, as the lead derived them.
func TestHypothesisNumbers(t *testing.T) {
	s, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, p := range s.Phases {
		phases = append(phases, p.Name+"="+p.Duration.String())
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"seed", s.Seed, int64(42)},
		{"timeout", s.Timeout, 500 * time.Millisecond},
		{"time line", s.Duration(), 70 * time.Second},
		{"phases", strings.Join(phases, " "), "baseline=12s busy=8s calm=3s latency=30s recovery=3s errors=12s recovery-2=2s"},
		{"repetitions", s.Repetitions, 5},
		{"roles", fmt.Sprintf("%+v", s.Roles), "{Shared:shared Split:split FaultDependency:A Affected:/a Unaffected:/b Baseline:baseline LatencyPhase:latency ErrorPhase:errors NormalLoad:[baseline busy]}"},
		{"rate /a", s.Endpoints[0].Rate, 50.0},
		{"rate /b", s.Endpoints[1].Rate, 50.0},
		{"arrivals", s.Load.Arrivals, "constant"},
		{"load timeout", s.Load.Timeout, 2 * time.Second},
		{"busy latency (0.3x)", s.Phases[1].Faults[0].Params.(*faults.Latency).Latency, 150 * time.Millisecond},
		{"latency fault (0.9x)", s.Phases[3].Faults[0].Params.(*faults.Latency).Latency, 450 * time.Millisecond},
		{"latency fault recorded", s.Resolved["phases[3].faults[0].latency"], "0.9x timeout = 450ms (timeout 500ms)"},
		{"errors fault", s.Phases[5].Faults[0].Type, "reset"},
		{"shared", s.Configurations[0].Pools[0].String(), `workers "shared" size 10 queue 20 max_wait 500ms deps [A B]`},
		{"split A", s.Configurations[1].Pools[0].String(), `semaphore "A" size 5 queue 0 max_wait 0s deps [A]`},
		{"split B", s.Configurations[1].Pools[1].String(), `semaphore "B" size 5 queue 0 max_wait 0s deps [B]`},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
	// Little's law in the latency phase: /a needs more slots than the whole shared pool.
	a := s.Endpoints[0].Rate * (s.Phases[3].Faults[0].Params.(*faults.Latency).Latency + s.Dependencies[0].Latency).Seconds()
	if p := float64(s.Configurations[0].Pools[0].Size); a <= p {
		t.Errorf("latency phase demand on A = %.2f slots, want > P = %v", a, p)
	}
}

// smoke's `pools: default` shorthand expands to exactly hypothesis's explicit pools.
func TestSmokeShorthandMatchesHypothesis(t *testing.T) {
	h, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if s.Duration() != 3*time.Second || s.Endpoints[0].Rate != 20 {
		t.Errorf("smoke: %v at %v/s, want 3s at 20/s", s.Duration(), s.Endpoints[0].Rate)
	}
	// smoke has seed 004's two layouts, shared and split; the hypothesis adds adaptive ones.
	if len(s.Configurations) != 2 {
		t.Fatalf("smoke has %d configurations, want shared and split", len(s.Configurations))
	}
	for i := range s.Configurations {
		hc := h.Configurations[i]
		if hc.Name != s.Configurations[i].Name || !reflect.DeepEqual(s.Configurations[i].Pools, hc.Pools) {
			t.Errorf("configuration %s: smoke pools %v, hypothesis %s pools %v", s.Configurations[i].Name, s.Configurations[i].Pools, hc.Name, hc.Pools)
		}
		if _, ok := s.Resolved[index("configurations", i)+".pools"]; !ok {
			t.Errorf("expansion of configurations[%d].pools not recorded in Resolved: %v", i, s.Resolved)
		}
	}
}

func TestOpen(t *testing.T) {
	t.Chdir(t.TempDir()) // built-ins must not depend on the working directory
	if err := os.WriteFile("mine.yaml", []byte(strings.Replace(base, "name: t", "name: mine", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("smoke", []byte(strings.Replace(base, "name: t", "name: local-smoke", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		arg               string
		wantName, wantErr string
		wantPath          string
	}{
		{arg: "hypothesis", wantName: "hypothesis", wantPath: "builtin:hypothesis"},
		{arg: "hypothesis.yaml", wantName: "hypothesis", wantPath: "builtin:hypothesis"},
		{arg: "builtin:hypothesis", wantName: "hypothesis", wantPath: "builtin:hypothesis"},
		{arg: "mine.yaml", wantName: "mine", wantPath: "mine.yaml"},
		{arg: "smoke", wantName: "local-smoke", wantPath: "smoke"}, // an existing file wins
		{arg: "builtin:smoke", wantName: "smoke", wantPath: "builtin:smoke"},
		{arg: "nope", wantErr: `open scenario "nope": no such file and no built-in scenario of that name: scenario not found (built-ins: `},
		{arg: "sub/hypothesis", wantErr: "scenario not found"},
		{arg: ".", wantErr: "is a directory"},
	}
	for _, tc := range tests {
		t.Run(tc.arg, func(t *testing.T) {
			s, err := Open(tc.arg)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Open(%q) error = %v, want %q", tc.arg, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Name != tc.wantName || s.Path != tc.wantPath {
				t.Errorf("Open(%q) = %s from %s, want %s from %s", tc.arg, s.Name, s.Path, tc.wantName, tc.wantPath)
			}
		})
	}
	if _, err := Open("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open(nope) = %v, want ErrNotFound", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("name: [\n"), 0o644)
	if _, err := Open(bad); !errors.Is(err, ErrInvalid) || !strings.HasPrefix(err.Error(), bad+":") {
		t.Errorf("Open(bad file) = %v, want ErrInvalid naming the file", err)
	}
}

// A loaded scenario marshals to a file that loads back to the same values, with every default,
// relative amount and shorthand written out: what a run can record as the resolved scenario.
func TestMarshalRoundTrip(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, err := Open(name)
			if err != nil {
				t.Fatal(err)
			}
			out, err := yaml.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse("resolved.yaml", out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			for _, x := range []*Scenario{s, back} {
				x.Path, x.Raw, x.Resolved, x.lines, x.Load.Rates = "", nil, nil, nil, nil
				for i := range x.Configurations {
					x.Configurations[i].Size = 0
				}
				for i := range x.Claims {
					x.Claims[i].Source = "" // where a claim is written differs by file, like lines
				}
			}
			if !reflect.DeepEqual(s, back) {
				t.Errorf("round trip differs:\n%+v\n%+v\n%s", s, back, out)
			}
		})
	}
}

// FuzzParse: Parse never panics, returns either a scenario or an error matching ErrInvalid, and
// every scenario it accepts can run: it validates again, and every configuration's service config
// builds with service.New (and shuts down). The seeds are the built-ins, the base of the table
// tests and the hostile files of testdata/hostile (alias bombs, recursive aliases, router
// patterns, colliding raw files, absurd sizes, rates and durations).
func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	for _, n := range Names() {
		src, _ := Source(n)
		f.Add(src)
	}
	for _, data := range hostileFiles(f) {
		f.Add(data)
	}
	f.Add([]byte("x-a: &a {name: p, duration: 1x}\nphases: [*a, *a]\n"))
	f.Add([]byte("name: t\ntimeout: 1e300x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if (s == nil) == (err == nil) {
			t.Fatalf("Parse returned scenario %v and error %v", s != nil, err)
		}
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not match ErrInvalid: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("Parse accepted a scenario Validate rejects: %v", err)
		}
		checkConstructs(t, s)
		e := s.Estimate(4)
		for _, v := range []float64{e.Requests, e.RawBytes, e.InFlight, e.FileDescriptors, e.MemoryBytes} {
			if !(v >= 0) || math.IsInf(v, 0) {
				t.Fatalf("estimate of an accepted scenario is not a finite count: %+v", e)
			}
		}
	})
}

// checkConstructs builds the service of every configuration of s, as a run would (with URLs
// standing in for the proxies), and shuts it down: what validates must construct.
func checkConstructs(t *testing.T, s *Scenario) {
	t.Helper()
	urls := map[string]string{}
	for _, d := range s.Dependencies {
		urls[d.Name] = "http://127.0.0.1:9"
	}
	for _, c := range s.Configurations {
		cfg, err := s.ServiceConfig(c, urls)
		if err != nil {
			t.Fatalf("configuration %s validates but has no service config: %v", c.Name, err)
		}
		svc, err := service.New(cfg)
		if err != nil {
			t.Fatalf("configuration %s validates but service.New fails: %v", c.Name, err)
		}
		if err := svc.Shutdown(context.Background()); err != nil {
			t.Fatalf("configuration %s: shutdown: %v", c.Name, err)
		}
	}
}

// Every configuration of every built-in scenario constructs: the property FuzzParse checks on
// any input, on the files shipped.
func TestBuiltinsConstruct(t *testing.T) {
	for _, n := range Names() {
		t.Run(n, func(t *testing.T) {
			s, err := Open(n)
			if err != nil {
				t.Fatal(err)
			}
			checkConstructs(t, s)
		})
	}
}
