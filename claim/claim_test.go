package claim

import (
	"slices"
	"testing"
)

func TestConfigurations(t *testing.T) {
	c := Claim{
		Require: []Condition{{Measure: Measure{Configuration: "base", Minus: &Measure{Configuration: "other"}}}},
		Condition: Condition{
			Measure: Measure{Configuration: "split", Over: &Measure{Phase: "baseline"}},
			Than:    &Measure{Configuration: "shared"},
		},
	}
	got := c.Configurations()
	want := []string{"split", "split", "shared", "base", "other"}
	if !slices.Equal(got, want) {
		t.Errorf("Configurations() = %v, want %v (the over: inherits split)", got, want)
	}
}

func TestOtherInherits(t *testing.T) {
	m := Measure{Metric: "p99_ms", Configuration: "shared", Phase: "latency", Endpoint: "/b", Over: &Measure{Configuration: "split"}}
	o := m.Other()
	if o == nil || o.Metric != "p99_ms" || o.Configuration != "split" || o.Phase != "latency" || o.Endpoint != "/b" || o.Over != nil {
		t.Errorf("Other() = %+v, want p99_ms of /b in split/latency", o)
	}
	if (Measure{}).Other() != nil {
		t.Error("a measure without minus: or over: has no other")
	}
}

func TestRolesKeep(t *testing.T) {
	r := Roles{Shared: "shared", Split: "split", Affected: "/a"}
	got := r.Keep(func(c string) bool { return c == "shared" })
	if got.Shared != "shared" || got.Split != "" || got.Affected != "/a" {
		t.Errorf("Keep = %+v, want split blanked only", got)
	}
}
