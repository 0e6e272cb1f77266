package report

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// TestNodeExampleNoQueueClaims judges the claims examples/node-bulkhead/scenario.yaml makes in
// place of the hypothesis' P1-p99-level (a limit without a queue turns a starved /b away at once)
// on three shared configurations while A stalls: server.js's (/b rejected in 1 ms), a queueing
// pool's (/b rejected after waiting 500 ms) and one where /b times out. They hold only for the
// first: the claims tell a limit without a queue from the hypothesis' queueing pool.
func TestNodeExampleNoQueueClaims(t *testing.T) {
	sc, err := scenarios.Load(filepath.Join("..", "examples", "node-bulkhead", "scenario.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{"P1-b-rejected", "P1-b-fails-fast"}
	var claims []claim.Claim
	for _, c := range sc.Claims {
		if slices.Contains(ids, c.ID) {
			claims = append(claims, c)
		}
	}
	if len(claims) != len(ids) {
		t.Fatalf("scenario.yaml has %d of the claims %v", len(claims), ids)
	}
	phases := []rundir.Phase{
		{Name: "baseline", Start: 0, End: 10 * time.Second},
		{Name: "latency", Start: 10 * time.Second, End: 20 * time.Second, Faults: []faults.Fault{
			{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * ms_}, AppliedAt: 10 * time.Second, RemovedAt: 20 * time.Second}}},
	}
	ok := prof{lat: 8 * ms_}
	// /a as measured against server.js: 57% turned away at once, the rest served after the stall.
	aStalled := prof{lat: 460 * ms_, fail: 0.57, failClass: "rejected:full", failLat: ms_}
	tests := []struct {
		name      string
		bStarved  prof
		wantHolds map[string]bool
	}{
		{"no queue (server.js): /b rejected at once",
			prof{lat: 8 * ms_, fail: 0.9, failClass: "rejected:full", failLat: ms_},
			map[string]bool{"P1-b-rejected": true, "P1-b-fails-fast": true}},
		{"queueing pool: /b rejected after waiting out the timeout",
			prof{lat: 300 * ms_, fail: 0.6, failClass: "rejected:wait-timeout", failLat: 500 * ms_},
			map[string]bool{"P1-b-rejected": true, "P1-b-fails-fast": false}},
		{"/b times out",
			prof{lat: 8 * ms_, fail: 0.9, failClass: "timeout:dependency", failLat: 500 * ms_},
			map[string]bool{"P1-b-rejected": false, "P1-b-fails-fast": false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := world{phases: phases, rate: 50, timeout: 500 * ms_, cfgs: []cfgDef{
				{name: "shared", mode: "shared", pools: sharedPools(10), valid: true, profiles: map[string]map[string]prof{
					"baseline": {"/a": ok, "/b": ok},
					"latency":  {"/a": aStalled, "/b": tt.bStarved},
				}},
				{name: "split", mode: "split", pools: splitPools(5), valid: true, profiles: map[string]map[string]prof{
					"baseline": {"/a": ok, "/b": ok},
					"latency":  {"/a": aStalled, "/b": ok},
				}},
			}}
			dir := w.write(t, t.TempDir())
			if err := rundir.WriteJSON(filepath.Join(dir, rundir.ClaimsFile), claims); err != nil {
				t.Fatal(err)
			}
			rundirtest.Seal(t, dir)
			s, err := Analyze(dir)
			if err != nil {
				t.Fatal(err)
			}
			if s.Verdict.Note != "" {
				t.Fatalf("claims note: %s", s.Verdict.Note)
			}
			if len(s.Verdict.Claims) != len(ids) {
				t.Fatalf("%d claims judged, want %d", len(s.Verdict.Claims), len(ids))
			}
			for _, c := range s.Verdict.Claims {
				want := tt.wantHolds[c.ID]
				if c.Holds == nil || *c.Holds != want {
					t.Errorf("%s: %s (%s), want holds=%v", c.ID, c.Verdict, c.Reason, want)
				}
			}
		})
	}
}
