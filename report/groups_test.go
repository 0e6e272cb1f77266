package report

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// writeHub writes a run folder of a hub: endpoint /p/slow on dependency slow (a latency fault in
// phase "slow") and n other partners /p/pNN, one pool each, 2 requests per partner and phase.
// Partners listed in lagging are invalid in the manifest, with the load generator's reason.
func writeHub(t *testing.T, dir string, n int, lagging ...string) string {
	t.Helper()
	phases := []rundir.Phase{
		{Name: "baseline", Start: 0, End: 2 * time.Second},
		{Name: "slow", Start: 2 * time.Second, End: 4 * time.Second, Faults: []faults.Fault{
			{Dependency: "slow", Type: "latency", Params: &faults.Latency{Latency: 450 * ms_}, AppliedAt: 2 * time.Second, RemovedAt: 4 * time.Second}}},
	}
	svc := outcome.Topology{Mode: outcome.ModeSplit, ClientTimeout: 500 * ms_}
	paths := []string{"/p/slow"}
	for i := range n {
		paths = append(paths, fmt.Sprintf("/p/p%02d", i))
	}
	for _, p := range paths {
		dep := strings.TrimPrefix(p, "/p/")
		svc.Endpoints = append(svc.Endpoints, outcome.TopologyCall{Path: p, Calls: []string{dep}})
		svc.Pools = append(svc.Pools, outcome.TopologyPool{Name: dep, Kind: "semaphore", Size: 20, Dependencies: []string{dep}})
	}
	m := rundir.Manifest{Scenario: "partners", Configuration: "semaphores", Repetition: 1, Seed: 1, Started: t0,
		Ended: t0.Add(phases[len(phases)-1].End), Valid: len(lagging) == 0, ClientTimeout: 500 * ms_, Topology: &svc, Phases: phases}
	cdir := filepath.Join(dir, "semaphores")
	if err := os.MkdirAll(filepath.Join(cdir, rundir.RawDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, p := range paths {
		var reqs []req
		for _, ph := range phases {
			for k := range 2 {
				lat := 10 * ms_
				if p == "/p/slow" && ph.Name == "slow" {
					lat = 460 * ms_
				}
				reqs = append(reqs, req{t: ph.Start + time.Duration(k)*time.Second, lat: lat, class: "ok"})
			}
		}
		raw := filepath.Join(rundir.RawDir, rundir.RawFileName(p))
		writeRaw(t, filepath.Join(cdir, raw), p, reqs)
		e := rundir.Endpoint{Path: p, RawFile: raw, Rate: 1, Arrivals: "constant", Timeout: 2 * time.Second,
			Scheduled: 4, Sent: 4, LagP99: time.Duration(i) * ms_, LagMax: time.Duration(i+1) * ms_}
		if slices.Contains(lagging, p) {
			m.Invalid = append(m.Invalid, fmt.Sprintf("%s: send lag p99 %v exceeds the 1ms limit", p, e.LagP99))
		}
		m.Endpoints = append(m.Endpoints, e)
	}
	if err := rundir.WriteJSON(filepath.Join(cdir, rundir.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	run := rundir.Run{Scenario: "partners", RunID: "20250102T030405Z-partners", Configurations: []string{"semaphores"}, Started: t0}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A hub's report lists one row per group in its settings and validity tables, folds the members'
// invalid reasons into one, and leaves the members' statistics out of summary.json unless asked.
func TestGroupedReportIsCompact(t *testing.T) {
	dir := writeHub(t, t.TempDir(), 12, "/p/p03", "/p/p07")
	s, err := generate(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, rundir.ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	report := string(md)
	t.Run("no member has a row of its own", func(t *testing.T) {
		if strings.Contains(report, "/p/p03 ") || strings.Contains(report, "| /p/p05 |") {
			t.Errorf("report.md lists a member:\n%s", report)
		}
	})
	for _, want := range []string{
		"| others (12) | 12 dependencies, one each | 1 | constant | 2000.0 |",
		"| semaphores | split | 12 pools, one per dependency of others (12) | semaphore | 20 | 0 | 0.0 | 12 dependencies |",
		"| semaphores | others (12), 2 invalid | 48 | 48 | 0 | 12.00 (worst member: /p/p11) | 13.00 |",
		"- semaphores: others (12): 2 of 12 members invalid (worst send lag p99 12.00 ms, /p/p11), e.g. /p/p03: send lag p99 4ms exceeds the 1ms limit",
	} {
		t.Run("has "+want[:min(40, len(want))], func(t *testing.T) {
			if !strings.Contains(report, want) {
				t.Errorf("report.md lacks\n%s\n---\n%s", want, report)
			}
		})
	}
	t.Run("one invalid reason for the group", func(t *testing.T) {
		if len(s.Invalid) != 1 || !reflect.DeepEqual(s.Configurations[0].EndpointGroups[0].InvalidMembers, []string{"/p/p03", "/p/p07"}) {
			t.Errorf("invalid = %q, members %v", s.Invalid, s.Configurations[0].EndpointGroups[0].InvalidMembers)
		}
	})
	readSummary := func(t *testing.T) model.Summary {
		t.Helper()
		var back model.Summary
		if err := rundir.ReadJSON(filepath.Join(dir, rundir.SummaryFile), &back); err != nil {
			t.Fatal(err)
		}
		return back
	}
	t.Run("summary.json keeps the groups, not the members", func(t *testing.T) {
		back := readSummary(t)
		c := back.Configurations[0]
		ph := c.Phases[1]
		if back.MemberStats == "" || len(c.Endpoints) != 1 || len(c.Pools) != 1 || len(ph.Endpoints) != 2 ||
			ph.Endpoints["others (12)"] == nil || ph.Endpoints["others (12)"].Requests != 24 || len(back.Aggregates[0].Phases[1].Endpoints) != 2 {
			t.Errorf("member_stats %q, %d endpoints, %d pools, phase endpoints %v", back.MemberStats, len(c.Endpoints), len(c.Pools), slices.Sorted(maps.Keys(ph.Endpoints)))
		}
		// The analysis itself keeps every member: the claims and a later GenerateWith need them.
		if len(s.Configurations[0].Phases[1].Endpoints) != 14 {
			t.Errorf("the model.Summary lost members: %d endpoints", len(s.Configurations[0].Phases[1].Endpoints))
		}
	})
	t.Run("member stats on request", func(t *testing.T) {
		if _, err := GenerateWith(dir, Options{Outputs: []output.Output{output.Markdown{}, output.JSON{MemberStats: true}}}); err != nil {
			t.Fatal(err)
		}
		back := readSummary(t)
		if back.MemberStats != "" || len(back.Configurations[0].Endpoints) != 13 || len(back.Configurations[0].Phases[1].Endpoints) != 14 {
			t.Errorf("member_stats %q, %d endpoints", back.MemberStats, len(back.Configurations[0].Endpoints))
		}
	})
}
