package experiment

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// Every attack the runner plans, in every built-in scenario and repetition (arrival offsets,
// per-phase rates, Poisson arrivals), goes through the child's spec and comes back with the same
// schedule: a load generator in its own process sends at exactly the planned times.
func TestPlannedAttacksSurviveTheSpec(t *testing.T) {
	kinds := map[string]bool{}
	for _, name := range scenarios.Names() {
		sc, err := scenarios.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		plans, err := Plans(sc, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range plans {
			for i, a := range p.Attacks {
				as, err := attack.NewAttackSpec(a.Path, "http://127.0.0.1:1"+a.Path, a.Pacer, p.Manifest.Endpoints[i].RawFile)
				if err != nil {
					t.Fatalf("%s %s %s: %v", name, p.Folder, a.Path, err)
				}
				b, err := json.Marshal(as)
				if err != nil {
					t.Fatal(err)
				}
				var back attack.AttackSpec
				if err := json.Unmarshal(b, &back); err != nil {
					t.Fatal(err)
				}
				got, err := back.Pacer.Pacer()
				if err != nil {
					t.Fatalf("%s %s %s: %s: %v", name, p.Folder, a.Path, b, err)
				}
				kinds[back.Pacer.Kind] = true
				if back.Pacer.Lead != a.Offset {
					t.Errorf("%s %s %s: lead %v; planned offset %v", name, p.Folder, a.Path, back.Pacer.Lead, a.Offset)
				}
				if w, g := a.Pacer.Hits(p.Duration), got.Hits(p.Duration); w != g {
					t.Fatalf("%s %s %s: %d hits due in the time line after the spec, %d planned", name, p.Folder, a.Path, g, w)
				}
				for k := uint64(0); k < min(a.Pacer.Hits(p.Duration)+2, 3000); k++ {
					if w, g := a.Pacer.Scheduled(k), got.Scheduled(k); w != g {
						t.Fatalf("%s %s %s: hit %d due at %v after the spec, %v planned", name, p.Folder, a.Path, k, g, w)
					}
				}
			}
		}
	}
	for _, k := range []string{loadgen.PacerConstant, loadgen.PacerPiecewise} {
		if !kinds[k] {
			t.Errorf("no built-in scenario plans a %s pacer: the test no longer covers it", k)
		}
	}
}

// The load opens connections ahead of its schedule, except against a built-in service that caps
// its inbound connections, where they would hold places the load would not have taken; options
// given by the caller come last.
func TestLoadWarmsItsConnectionsUnlessTheServiceCapsThem(t *testing.T) {
	sc, err := scenarios.Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	plans, err := Plans(sc, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := plans[0]
	if s := loadgen.Resolve(loadOptions(p, time.Millisecond, nil)...); s.NoWarm || s.LagLimit != time.Millisecond || s.Timeout != p.LoadTimeout {
		t.Errorf("no cap: settings %+v, want warm connections, the lag limit and the plan's timeout", s)
	}
	capped := *sc
	capped.Limits.MaxInboundConns = 8
	c := *p
	c.Scenario = &capped
	if s := loadgen.Resolve(loadOptions(&c, time.Millisecond, nil)...); !s.NoWarm {
		t.Errorf("inbound connections capped at 8: settings %+v, want no connection opened ahead", s)
	}
	if s := loadgen.Resolve(loadOptions(p, time.Millisecond, []loadgen.Opt{loadgen.WithLagLimit(time.Second)})...); s.LagLimit != time.Second {
		t.Errorf("the caller's lag limit: settings %+v, want 1s", s)
	}
}
