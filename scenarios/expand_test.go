package scenarios

import (
	"strings"
	"testing"
)

// hub is a scenario written with a dependency family and for_each templates; line numbers in
// TestExpandErrors refer to it.
const hub = `name: hub
timeout: 500ms
dependencies:
  - {name: partner, count: 12, latency: 5ms}
  - {name: audit}
endpoints:
  - {path: "/p/{dep}", calls: ["{dep}"], for_each: partner}
  - {path: /audit, calls: [audit]}
load:
  rate: 1/s
configurations:
  - name: semaphores
    pools:
      - {name: "{dep}", kind: semaphore, size: 20, dependencies: ["{dep}"], for_each: partner}
      - {name: audit, size: 1, dependencies: [audit]}
phases:
  - name: slow
    duration: 1s
    faults:
      - {dependency: partner-01, type: latency, latency: 0.9x}
`

func TestExpandFamilies(t *testing.T) {
	s, err := Parse("hub.yaml", []byte(hub))
	if err != nil {
		t.Fatal(err)
	}
	pools := s.Configurations[0].Pools
	checks := []struct {
		name      string
		got, want any
	}{
		{"dependencies: 12 members then audit", len(s.Dependencies), 13},
		{"first member, zero-padded to the width of the count", s.Dependencies[0].Name, "partner-01"},
		{"last member", s.Dependencies[11].Name, "partner-12"},
		{"members keep the template's fields", s.Dependencies[11].Latency.String(), "5ms"},
		{"plain dependency after the family", s.Dependencies[12].Name, "audit"},
		{"one endpoint per member, then /audit", len(s.Endpoints), 13},
		{"endpoint path substituted", s.Endpoints[4].Path, "/p/partner-05"},
		{"endpoint calls substituted", strings.Join(s.Endpoints[4].Calls, ","), "partner-05"},
		{"one pool per member, then audit", len(pools), 13},
		{"pool substituted", pools[11].String(), `semaphore "partner-12" size 20 queue 0 max_wait 0s deps [partner-12]`},
		{"mode inferred from the expanded pools", s.Configurations[0].Mode, "split"},
		{"fault names a member", s.Phases[0].Faults[0].Dependency, "partner-01"},
		{"family recorded", s.Resolved["dependencies[0]"], "count 12 = partner-01 .. partner-12"},
		{"endpoint template recorded", s.Resolved["endpoints[0]"], "for_each partner = 12 copies, partner-01 .. partner-12"},
		{"pool template recorded", s.Resolved["configurations[0].pools[0]"], "for_each partner = 12 copies, partner-01 .. partner-12"},
		{"Raw keeps the compact file", string(s.Raw), hub},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestExpandWidth(t *testing.T) {
	tests := []struct {
		count       string
		first, last string
	}{
		{"1", "p-1", "p-1"},
		{"9", "p-1", "p-9"},
		{"10", "p-01", "p-10"},
		{"500", "p-001", "p-500"},
		{"1_000", "p-0001", "p-1000"},
	}
	for _, tt := range tests {
		t.Run(tt.count, func(t *testing.T) {
			src := strings.Replace(base, "  - name: A\n", "  - {name: p, count: "+tt.count+"}\n  - name: A\n", 1)
			s, err := Parse("t.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			n := len(s.Dependencies) - 2
			if got := s.Dependencies[0].Name + " " + s.Dependencies[n-1].Name; got != tt.first+" "+tt.last {
				t.Errorf("members %q, want %q", got, tt.first+" "+tt.last)
			}
		})
	}
}

func TestExpandErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"count not a number", "count: 12", "count: many", `hub.yaml:4: dependencies[0].count: expected a whole number of dependencies from 1 to 5000, got "many"`},
		{"count zero", "count: 12", "count: 0", `hub.yaml:4: dependencies[0].count: expected a whole number`},
		{"count too large", "count: 12", "count: 20000", `hub.yaml:4: dependencies[0].count: expected a whole number`},
		{"unknown family", "for_each: partner}\n  - {path: /audit", "for_each: partners}\n  - {path: /audit", `hub.yaml:7: endpoints[0].for_each: unknown dependency family "partners" (families: partner)`},
		{"template without placeholder", `{path: "/p/{dep}", calls: ["{dep}"]`, `{path: "/p/x", calls: [audit]`, `hub.yaml:7: endpoints[0].for_each: the template never uses {dep}, so its 12 copies would be identical`},
		{"duplicate family", "  - {name: audit}\n", "  - {name: partner, count: 2}\n", `hub.yaml:5: dependencies[1].name: duplicate dependency family "partner"`},
		// A mistake inside a copy points at the template's line, with the copy's index.
		{"bad field in a template", "kind: semaphore, size: 20", "kind: semaphore, size: -1", `hub.yaml:14: configurations[0].pools[3].size: must be > 0, got -1`},
		{"fault on a member that does not exist", "dependency: partner-01,", "dependency: partner-13,", `hub.yaml:20: phases[0].faults[0].dependency: unknown dependency "partner-13"`},
		{"for_each on a plain list item is still strict", "  - {path: /audit, calls: [audit]}", "  - {path: /audit, calls: [audit], for_each: audit}", `hub.yaml:8: endpoints[1].for_each: unknown dependency family "audit"`},
		{"count outside dependencies is an unknown field", "  - {path: /audit, calls: [audit]}", "  - {path: /audit, calls: [audit], count: 2}", `hub.yaml:8: endpoints[12].count: unknown field "count"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(hub, tt.old) {
				t.Fatalf("hub does not contain %q", tt.old)
			}
			_, err := Parse("hub.yaml", []byte(strings.Replace(hub, tt.old, tt.new, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
