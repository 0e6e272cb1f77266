package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

// Override applies the command line's changes, validates the result, and leaves the scenario
// untouched when it refuses.
func TestOverride(t *testing.T) {
	tests := []struct {
		name    string
		scen    string
		o       Overrides
		check   func(t *testing.T, s *Scenario)
		dropped int
		wantErr string // substring; "" means no error
	}{
		{name: "nothing to change", scen: "hypothesis", o: Overrides{},
			check: func(t *testing.T, s *Scenario) {
				if s.Duration() != 70*time.Second {
					t.Errorf("duration %v", s.Duration())
				}
			}},
		{name: "scale shortens every phase", scen: "hypothesis", o: Overrides{Scale: 0.3},
			check: func(t *testing.T, s *Scenario) {
				if s.Duration() != 21*time.Second || s.Phases[0].Duration != 3600*time.Millisecond {
					t.Errorf("duration %v, first phase %v", s.Duration(), s.Phases[0].Duration)
				}
			}},
		{name: "rate replaces every endpoint's", scen: "webhooks", o: Overrides{Rate: 40},
			check: func(t *testing.T, s *Scenario) {
				for _, e := range s.Endpoints {
					if e.Rate != 40 {
						t.Errorf("%s at %g/s", e.Path, e.Rate)
					}
				}
				if s.Load.Rate != 40 || len(s.Load.Rates) != 0 {
					t.Errorf("load rate %g, own rates %v", s.Load.Rate, s.Load.Rates)
				}
			}},
		{name: "repetitions and lag limit", scen: "hypothesis", o: Overrides{Repetitions: 3, LagLimit: 2 * time.Millisecond},
			check: func(t *testing.T, s *Scenario) {
				if s.Repetitions != 3 || s.Load.LagLimit != 2*time.Millisecond {
					t.Errorf("repetitions %d lag limit %v", s.Repetitions, s.Load.LagLimit)
				}
			}},
		{name: "only keeps the named configurations and the claims about them", scen: "carriers", o: Overrides{Only: []string{"capped"}},
			check: func(t *testing.T, s *Scenario) {
				if len(s.Configurations) != 1 || s.Configurations[0].Name != "capped" {
					t.Errorf("configurations %v", s.Configurations)
				}
				for _, c := range s.Claims {
					if c.Measure.Configuration != "capped" {
						t.Errorf("claim %s about %s kept", c.ID, c.Measure.Configuration)
					}
				}
			}, dropped: -1},
		{name: "an unknown configuration is refused, naming the ones there are", scen: "hypothesis", o: Overrides{Only: []string{"nope"}},
			wantErr: `only: no configuration "nope" in builtin:hypothesis (have: shared, split, adaptive-shared, adaptive-split)`},
		{name: "a negative scale is refused", scen: "hypothesis", o: Overrides{Scale: -1}, wantErr: "scale: must be > 0"},
		{name: "a negative rate is refused", scen: "hypothesis", o: Overrides{Rate: -5}, wantErr: "rate: must be > 0"},
		{name: "a result that does not validate is refused", scen: "hypothesis", o: Overrides{Scale: 1e-12}, wantErr: "after overrides"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(tt.scen)
			if err != nil {
				t.Fatal(err)
			}
			before := s.Duration()
			dropped, err := s.Override(tt.o)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if s.Duration() != before {
					t.Errorf("a refused override changed the scenario")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.dropped == -1 && len(dropped) == 0 {
				t.Errorf("no claims dropped")
			}
			tt.check(t, s)
		})
	}
}

// The scenario as run, written by Marshal with its overrides applied, loads back to the same
// time line and rates: what `bulkhead run <folder>/scenario.yaml` repeats.
func TestOverriddenScenarioRoundTrips(t *testing.T) {
	s, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Override(Overrides{Scale: 0.5, Rate: 30, Repetitions: 2}); err != nil {
		t.Fatal(err)
	}
	out, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse("scenario.yaml", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	latency := func(sc *Scenario) time.Duration {
		if l, ok := sc.Phases[3].Faults[0].Params.(*faults.Latency); ok {
			return l.Latency
		}
		return 0
	}
	if back.Duration() != s.Duration() || back.Repetitions != 2 || back.Endpoints[0].Rate != 30 || latency(back) != 450*time.Millisecond {
		t.Errorf("loaded back: %v, %d repetitions, %g/s, latency %v", back.Duration(), back.Repetitions, back.Endpoints[0].Rate, latency(back))
	}
}

// --only re-keys what the loader resolved: the kept configuration's pool shorthand moves to its
// new index, the dropped one's goes (the plan and the manifest print them by field path).
func TestOnlyReindexesResolved(t *testing.T) {
	sc, err := Open("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Override(Overrides{Only: []string{"split"}}); err != nil {
		t.Fatal(err)
	}
	got := sc.Resolved["configurations[0].pools"]
	if !strings.HasPrefix(got, "default split") {
		t.Errorf("configurations[0].pools = %q, want split's expansion", got)
	}
	if v, ok := sc.Resolved["configurations[1].pools"]; ok {
		t.Errorf("configurations[1].pools = %q, want no entry (one configuration left)", v)
	}
	if sc.Resolved["phases[1].faults[0].latency"] == "" {
		t.Errorf("other entries lost: %v", sc.Resolved)
	}
}
