package report

import (
	"strings"
	"testing"
	"time"
)

// verdictsOf analyses w and returns the verdict of every prediction by id.
func verdictsOf(t *testing.T, w world) (map[string]Prediction, *Summary) {
	t.Helper()
	s, err := Analyze(w.write(t, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Prediction{}
	for _, p := range s.Predictions {
		out[p.ID] = p
	}
	return out, s
}

func TestRolesFromData(t *testing.T) {
	_, s := verdictsOf(t, hypothesis())
	r := s.Roles
	if r.Shared != "shared" || r.Split != "split" || r.FaultDependency != "A" || r.LatencyPhase != "slow-a" ||
		r.ErrorPhase != "errors-a" || r.Baseline != "baseline" ||
		strings.Join(r.Affected, ",") != "/a" || strings.Join(r.Unaffected, ",") != "/b" {
		t.Errorf("roles = %+v", r)
	}
}

func TestPredictions(t *testing.T) {
	type change func(w *world)
	shared := func(w *world) *cfgDef { return &w.cfgs[0] }
	split := func(w *world) *cfgDef { return &w.cfgs[1] }
	tests := []struct {
		name   string
		id     string
		change change
		want   string
	}{
		{"P1 holds: /b degrades to /a's level at once", "P1", nil, VerdictHolds},
		{"P1 does not hold: /b stays fast and successful under the shared pool", "P1", func(w *world) {
			shared(w).profiles["slow-a"]["/b"] = prof{lat: 20 * ms_}
		}, VerdictDoesNotHold},
		{"P1 does not hold: /b fails as often but stays fast (p99 below half of /a's)", "P1", func(w *world) {
			shared(w).profiles["slow-a"]["/b"] = prof{lat: 25 * ms_, fail: 0.45, failClass: "rejected:full", failLat: ms_}
		}, VerdictDoesNotHold},
		{"P1 not measurable: the fault did not degrade /a", "P1", func(w *world) {
			shared(w).profiles["slow-a"]["/a"] = prof{lat: 20 * ms_}
		}, VerdictNotMeasurable},
		{"P1 not measurable: no latency fault near the timeout", "P1", func(w *world) {
			w.phases = append(w.phases[:1:1], w.phases[2:]...)
		}, VerdictNotMeasurable},

		{"P2 holds: /b at baseline, /a rejected fast", "P2", nil, VerdictHolds},
		{"P2 does not hold: /a's failures are timeouts", "P2", func(w *world) {
			split(w).profiles["slow-a"]["/a"] = prof{lat: 460 * ms_, fail: 0.6, failClass: "timeout:dependency", failLat: 500 * ms_}
		}, VerdictDoesNotHold},
		{"P2 does not hold: /a's rejections are slow", "P2", func(w *world) {
			split(w).profiles["slow-a"]["/a"] = prof{lat: 460 * ms_, fail: 0.6, failClass: "rejected:wait-timeout", failLat: 100 * ms_}
		}, VerdictDoesNotHold},
		{"P2 does not hold: /b's p99 leaves its baseline", "P2", func(w *world) {
			split(w).profiles["slow-a"]["/b"] = prof{lat: 31 * ms_}
		}, VerdictDoesNotHold},
		{"P2 does not hold: /b's error rate rises by 2 points", "P2", func(w *world) {
			split(w).profiles["slow-a"]["/b"] = prof{lat: 20 * ms_, fail: 0.02, failClass: "rejected:full", failLat: ms_}
		}, VerdictDoesNotHold},
		{"P2 not measurable: no split configuration", "P2", func(w *world) { w.cfgs = w.cfgs[:1] }, VerdictNotMeasurable},

		{"P3 holds: split loses 22% of /a's throughput where /a needs 6.4 slots of 5", "P3", nil, VerdictHolds},
		{"P3 does not hold: split serves /a as well", "P3", func(w *world) {
			split(w).profiles["mild-a"]["/a"] = prof{lat: 320 * ms_}
		}, VerdictDoesNotHold},
		{"P3 not measurable: /a never needs more than its split pool", "P3", func(w *world) {
			shared(w).profiles["mild-a"]["/a"] = prof{lat: 100 * ms_}
		}, VerdictNotMeasurable},

		{"P4 holds: no difference with fast errors", "P4", nil, VerdictHolds},
		{"P4 does not hold: the error fault separates the configurations more", "P4", func(w *world) {
			shared(w).profiles["errors-a"]["/b"] = prof{lat: 400 * ms_, fail: 0.6, failClass: "rejected:full", failLat: ms_}
		}, VerdictDoesNotHold},
		{"P4 not measurable: no error fault", "P4", func(w *world) {
			w.phases = append(w.phases[:2:2], w.phases[3:]...)
		}, VerdictNotMeasurable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := hypothesis()
			if tt.change != nil {
				tt.change(&w)
			}
			got, _ := verdictsOf(t, w)
			p := got[tt.id]
			if p.Verdict != tt.want {
				t.Fatalf("%s: %s, want %s\nevidence: %s\nnumbers: %v", tt.id, p.Verdict, tt.want, p.Evidence, p.Numbers)
			}
			wantHolds := map[string]*bool{VerdictHolds: boolPtr(true), VerdictDoesNotHold: boolPtr(false), VerdictNotMeasurable: nil}[tt.want]
			if (p.Holds == nil) != (wantHolds == nil) || (p.Holds != nil && *p.Holds != *wantHolds) {
				t.Errorf("holds = %v, want %v", p.Holds, wantHolds)
			}
			if p.Evidence == "" || p.Rule == "" {
				t.Errorf("evidence %q and rule %q must both be written", p.Evidence, p.Rule)
			}
		})
	}
}

func TestP1ReportsTimeToLevel(t *testing.T) {
	// /b stays at baseline for the first 2 s of the fault, then degrades: the first bucket where
	// it reaches /a's level is [12 s, 13 s), which ends 3 s after the fault start.
	w := hypothesis()
	c := &w.cfgs[0]
	late := prof{lat: 300 * ms_, fail: 0.45, failClass: "rejected:full", failLat: ms_}
	c.profiles["slow-a"]["/b"] = prof{}
	var reqs []req
	reqs = append(reqs, requestsOf(prof{lat: 20 * ms_}, "B", 10*time.Second, 12*time.Second, w.rate)...)
	reqs = append(reqs, requestsOf(late, "B", 12*time.Second, 20*time.Second, w.rate)...)
	delete(c.profiles["slow-a"], "/b")
	c.extra = map[string][]req{"/b": reqs}
	got, _ := verdictsOf(t, w)
	p := got["P1"]
	if v := p.Numbers["/b_time_to_level_s"]; v != 3 {
		t.Errorf("time to level = %v, want 3 (evidence %s)", v, p.Evidence)
	}
	if p.Verdict != VerdictHolds {
		t.Errorf("verdict %s, want holds at 3 s (limit 5 x 500 ms = 3 s): %s", p.Verdict, p.Evidence)
	}
}

func TestInvalidRunGetsNoVerdicts(t *testing.T) {
	w := hypothesis()
	w.cfgs[1].valid = false
	w.cfgs[1].invalid = []string{"load generator lagged: p99 lag 120ms > 10ms"}
	got, s := verdictsOf(t, w)
	if s.Valid || len(got) != 0 || len(s.Predictions) != 0 {
		t.Fatalf("valid %v, predictions %v: want invalid with no verdicts", s.Valid, s.Predictions)
	}
	want := "the run is invalid: split: load generator lagged: p99 lag 120ms > 10ms"
	if s.NoVerdicts != want {
		t.Errorf("no verdicts = %q, want %q", s.NoVerdicts, want)
	}
	if v := s.Verdicts(); !strings.HasPrefix(v, "no verdicts: "+want) {
		t.Errorf("Verdicts() = %q", v)
	}
}
