package report

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// The false positives the issue found with the old engine, each rebuilt on a synthetic run
// folder: every one must now come out anything but holds, for the reason stated.
func TestVerdictFalsePositives(t *testing.T) {
	tests := []struct {
		name   string
		world  func() world
		claim  string // measure and the rest, as in claimYAML
		rest   string
		want   string // verdict
		reason string // substring of the reason
	}{
		{
			// "P2 holds while /b fails 82% of its requests": compared with its own broken baseline.
			name: "a claim relative to an unhealthy baseline is not measurable, naming the figure",
			world: func() world {
				w := hypothesis()
				broken := prof{lat: 200 * ms_, fail: 0.82, failClass: "rejected:full", failLat: ms_}
				w.cfgs[1].profiles["baseline"]["/b"], w.cfgs[1].profiles["slow-a"]["/b"] = broken, broken
				return w
			},
			claim: "{metric: success_rate, configuration: split, phase: slow-a, endpoint: /b, minus: {phase: baseline}}",
			rest: "    op: \">=\"\n    value: -0.01\n    require:\n" +
				"      - {measure: {metric: success_rate, configuration: split, phase: baseline, endpoint: /b}, op: \">=\", value: 0.99}\n",
			want: model.VerdictNotMeasurable, reason: "precondition not met (does not hold): success_rate of /b in split/baseline = 0.18 [",
		},
		{
			// "P4 is a coin flip when there is nothing to measure": a p99 ratio over 50 requests.
			name: "a p99 of 50 requests has no upper end, so a ratio of two cannot decide",
			world: func() world {
				w := hypothesis()
				w.rate = 5
				w.cfgs[0].profiles["slow-a"]["/b"] = prof{lat: 26 * ms_}
				w.cfgs[1].profiles["slow-a"]["/b"] = prof{lat: 20 * ms_}
				w.cfgs[0].profiles["errors-a"]["/b"] = prof{lat: 20400 * time.Microsecond}
				return w
			},
			claim: "{metric: p99_ms, configuration: shared, phase: errors-a, endpoint: /b, over: {configuration: split}}",
			rest:  "    op: \"<\"\n    than: {metric: p99_ms, configuration: shared, phase: slow-a, endpoint: /b, over: {configuration: split}}\n",
			want:  model.VerdictInconclusive, reason: "= 1.02 [−∞, ∞]",
		},
		{
			// The same with the precondition P4 carries: the larger gap must be real first.
			name: "a smaller-difference claim needs the larger difference to exclude zero",
			world: func() world {
				w := hypothesis()
				w.rate = 5
				w.cfgs[0].profiles["slow-a"]["/b"] = prof{lat: 26 * ms_}
				w.cfgs[1].profiles["slow-a"]["/b"] = prof{lat: 20 * ms_}
				w.cfgs[0].profiles["errors-a"]["/b"] = prof{lat: 20400 * time.Microsecond}
				return w
			},
			claim: "{metric: p99_ms, configuration: shared, phase: errors-a, endpoint: /b, over: {configuration: split}}",
			rest: "    op: \"<\"\n    than: {metric: p99_ms, configuration: shared, phase: slow-a, endpoint: /b, over: {configuration: split}}\n" +
				"    require:\n      - {measure: {metric: p99_ms, configuration: shared, phase: slow-a, endpoint: /b, over: {configuration: split}}, op: \">\", value: 1}\n",
			want: model.VerdictNotMeasurable, reason: "precondition not met (inconclusive)",
		},
		{
			name:  "no gap in either phase: the larger difference is not real",
			world: hypothesis,
			claim: "{metric: success_rate, configuration: split, phase: errors-a, endpoint: /b, minus: {configuration: shared}}",
			rest: "    op: \"<\"\n    than: {metric: success_rate, configuration: split, phase: baseline, endpoint: /b, minus: {configuration: shared}}\n" +
				"    require:\n      - {measure: {metric: success_rate, configuration: split, phase: baseline, endpoint: /b, minus: {configuration: shared}}, op: \">\", value: 0}\n",
			want: model.VerdictNotMeasurable, reason: "= 0 [-0.019, 0.019]",
		},
		{
			// "P3 holds on evidence from a stall": a cost-of-isolation claim on a phase that is not
			// normal load (the shared pool itself fails /a there) is not measurable.
			name:  "a cost-of-isolation claim on a stall is not measurable",
			world: hypothesis,
			claim: "{metric: throughput, configuration: split, phase: slow-a, endpoint: /a, over: {configuration: shared}}",
			rest: "    op: \"<\"\n    value: 1\n    require:\n" +
				"      - {measure: {metric: success_rate, configuration: shared, phase: slow-a, endpoint: /a}, op: \">=\", value: 0.99}\n",
			want: model.VerdictNotMeasurable, reason: "success_rate of /a in shared/slow-a = 0.5 [0.431, 0.569]",
		},
		{
			// One repetition of each layout: their ratio (1, every second alike) says nothing of
			// how two runs differ, so it decides nothing without a noise floor.
			name:  "identical throughput under normal load does not hold as a cost",
			world: hypothesis,
			claim: "{metric: throughput, configuration: split, phase: baseline, endpoint: /a, over: {configuration: shared}}",
			rest: "    op: \"<\"\n    value: 1\n    require:\n" +
				"      - {measure: {metric: success_rate, configuration: shared, phase: baseline, endpoint: /a}, op: \">=\", value: 0.95}\n",
			want: model.VerdictInconclusive, reason: "= 1 [1, 1]; left - right = 0 [0, 0], needs < 0; inconclusive: (throughput of /a in split/baseline over throughput of /a in shared/baseline) compares configurations (split, shared) on one repetition each",
		},
		{
			// Requests within a second are not independent: failures that come in whole seconds
			// (half the seconds fail entirely) give 0.5 with a wide interval, where 200 independent
			// requests would give about ±0.07 and "holds".
			name: "failures clustered in seconds widen the interval: inconclusive",
			world: func() world {
				w := hypothesis()
				delete(w.cfgs[0].profiles["slow-a"], "/b")
				w.cfgs[0].extra = map[string][]req{"/b": clustered(10*time.Second, 20*time.Second, 20)}
				return w
			},
			claim: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:  "    op: \"<\"\n    value: 0.6\n",
			want:  model.VerdictInconclusive, reason: "= 0.5 [",
		},
		{
			name: "the same share spread evenly holds",
			world: func() world {
				w := hypothesis()
				w.cfgs[0].profiles["slow-a"]["/b"] = prof{lat: 20 * ms_, fail: 0.5, failClass: "rejected:full", failLat: ms_}
				return w
			},
			claim: "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}",
			rest:  "    op: \"<\"\n    value: 0.6\n",
			want:  model.VerdictHolds, reason: "= 0.5 [0.431, 0.569]",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got := judged(t, tt.world(), claimYAML("x", tt.claim, tt.rest))
			c := got["x"]
			if c.Verdict != tt.want {
				t.Errorf("verdict %q, want %q (reason: %s)", c.Verdict, tt.want, c.Reason)
			}
			if !strings.Contains(c.Reason, tt.reason) {
				t.Errorf("reason %q, want it to contain %q", c.Reason, tt.reason)
			}
		})
	}
}

// clustered returns requests at rate per second over [from, to) that all fail in even seconds
// and all succeed in odd ones.
func clustered(from, to time.Duration, rate int) []req {
	var out []req
	step := time.Second / time.Duration(rate)
	for t := from; t < to; t += step {
		r := req{t: t, lat: 20 * ms_, class: "ok", dep: "B"}
		if int(t/time.Second)%2 == 0 {
			r.class, r.lat = "rejected:full", ms_
		}
		out = append(out, r)
	}
	return out
}

// The intervals have no random part: the same folder gives the same intervals every time.
func TestVerdictReproducible(t *testing.T) {
	w := hypothesis()
	delete(w.cfgs[0].profiles["slow-a"], "/b")
	w.cfgs[0].extra = map[string][]req{"/b": clustered(10*time.Second, 20*time.Second, 20)}
	claims := claimYAML("x", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n")
	_, a := judged(t, w, claims)
	_, b := judged(t, w, claims)
	if *a["x"].Left.Lo != *b["x"].Left.Lo || *a["x"].Left.Hi != *b["x"].Left.Hi {
		t.Errorf("intervals differ between two analyses: %+v vs %+v", a["x"].Left, b["x"].Left)
	}
	if lo, hi := *a["x"].Left.Lo, *a["x"].Left.Hi; !(lo < 0.4 && hi > 0.6) {
		t.Errorf("clustered failures give [%g, %g], want wider than ±0.1 around 0.5", lo, hi)
	}
}
