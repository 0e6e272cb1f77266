package scenarios

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/service"
)

// base is a minimal valid scenario; the line numbers in the tables below refer to it.
const base = `name: t
timeout: 500ms
dependencies:
  - name: A
  - name: B
endpoints:
  - {path: /a, calls: [A]}
  - {path: /b, calls: [B]}
load:
  rate: 10/s
configurations:
  - name: none
phases:
  - name: p
    duration: 1s
`

// edit returns base with old replaced by new (old "" appends new).
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if old == "" {
		return base + new
	}
	if !strings.Contains(base, old) {
		t.Fatalf("base does not contain %q", old)
	}
	return strings.Replace(base, old, new, 1)
}

func TestParseBaseIsValid(t *testing.T) {
	if _, err := Parse("t.yaml", []byte(base)); err != nil {
		t.Fatalf("base scenario: %v", err)
	}
}

const faultPhase = "    duration: 1s\n    faults:\n      - {dependency: A, type: latency, latency: 100ms}\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string // a substring of the error: file, line, field path and message
	}{
		// Strictness: unknown, duplicate and missing fields, wrong types.
		{"unknown top-level field", "", "fooo: 1\n", `t.yaml:16: fooo: unknown field "fooo" (known: name, description, seed, timeout,`},
		{"unknown nested field", "    duration: 1s\n", "    duration: 1s\n    fualts: []\n", `t.yaml:16: phases[0].fualts: unknown field "fualts" (known: name, duration, faults, rates)`},
		{"duplicate field", "name: t\n", "name: t\nname: u\n", `t.yaml:2: name: duplicate field "name"`},
		{"missing required field", "timeout: 500ms\n", "", `t.yaml:1: timeout: missing required field "timeout"`},
		{"required field without value", "timeout: 500ms", "timeout:", `t.yaml:2: timeout: missing value (required)`},
		{"missing phase duration", "    duration: 1s\n", "", `t.yaml:14: phases[0].duration: missing required field "duration"`},
		{"list where a duration belongs", "timeout: 500ms", "timeout: [1]", `t.yaml:2: timeout: expected a duration like "250ms", got a list`},
		{"duration without a unit", "timeout: 500ms", "timeout: 500", `t.yaml:2: timeout: expected a duration with a unit like "250ms", got "500"`},
		{"unreadable duration", "duration: 1s", "duration: soon", `t.yaml:15: phases[0].duration: expected a duration like "250ms" or "0.9x timeout", got "soon"`},
		{"mapping where a list belongs", "  - name: none\n", "  - name: none\n    pools: {a: 1}\n", `t.yaml:13: configurations[0].pools: expected a list of pools or "default", got a mapping`},
		{"string where an integer belongs", "", "repetitions: many\n", `t.yaml:16: repetitions: expected an integer, got "many"`},
		{"float where an integer belongs", "", "repetitions: 1.5\n", `t.yaml:16: repetitions: expected an integer, got "1.5"`},
		{"integer too large", "", "limits: {max_inbound_conns: 99999999999}\n", `t.yaml:16: limits.max_inbound_conns: expected an integer that fits 32 bits`},
		{"list where a mapping belongs", "  - name: A\n", "  - [A]\n", `t.yaml:4: dependencies[0]: expected a mapping, got a list`},
		{"top level not a mapping", "name: t\n", "- name: t\n", `t.yaml:1: yaml syntax`},
		{"yaml syntax error", "  rate: 10/s\n", "  rate: [10/s\n", `t.yaml:`},
		{"two documents", "", "---\nname: u\n", `t.yaml:16: more than one YAML document`},
		{"not a bool", "  - name: none\n", "  - name: none\n    breakers: maybe\n", `t.yaml:13: configurations[0].breakers: expected true or false, got "maybe"`},

		// Durations and rates.
		{"zero phase duration", "duration: 1s", "duration: 0s", `t.yaml:15: phases[0].duration: must be > 0, got 0s`},
		{"negative phase duration", "duration: 1s", "duration: -1s", `t.yaml:15: phases[0].duration: must be > 0, got -1s`},
		{"zero timeout", "timeout: 500ms", "timeout: 0s", `t.yaml:2: timeout: must be > 0, got 0s`},
		{"zero rate", "rate: 10/s", "rate: 0/s", `t.yaml:10: load.rate: rate "0/s": 0 requests/s is not in (0, `},
		{"negative rate", "rate: 10/s", "rate: -5", `t.yaml:10: load.rate: rate "-5": -5 requests/s is not in (0, `},
		{"unreadable rate", "rate: 10/s", "rate: fast", `t.yaml:10: load.rate: rate "fast": "fast" is not a number`},
		{"zero rate period", "rate: 10/s", "rate: 10/0s", `t.yaml:10: load.rate: rate "10/0s": "0s" is not a positive duration`},
		{"missing rate", "  rate: 10/s\n", "  arrivals: constant\n", `t.yaml:9: load.rate: missing required field "rate"`},
		{"negative endpoint rate", "{path: /a, calls: [A]}", "{path: /a, calls: [A], rate: -1/s}", `t.yaml:7: endpoints[0].rate: rate "-1/s": -1 requests/s is not in (0, `},
		{"negative dependency latency", "  - name: A\n", "  - name: A\n    latency: -5ms\n", `t.yaml:5: dependencies[0].latency: must be >= 0, got -5ms`},
		{"sample_every zero when set", "", "sample_every: 0s\n", `t.yaml:16: sample_every: must be > 0 when set`},
		{"negative lag limit", "  rate: 10/s\n", "  rate: 10/s\n  lag_limit: -1ms\n", `t.yaml:11: load.lag_limit: must be > 0, got -1ms`},
		{"drift under a second", "  rate: 10/s\n", "  rate: 10/s\n  drift: 500ms\n", `t.yaml:11: load.drift: 500ms is shorter than 1s: a drifting stream sends 1/drift requests a second more than its rate`},
		{"drift with Poisson arrivals", "  rate: 10/s\n", "  rate: 10/s\n  arrivals: poisson\n  drift: 10s\n", `t.yaml:12: load.drift: only constant arrivals have an offset to drift (arrivals is poisson)`},
		{"load timeout not above the client timeout", "  rate: 10/s\n", "  rate: 10/s\n  timeout: 500ms\n", `t.yaml:11: load.timeout: 500ms must exceed the client timeout 500ms`},

		// Relative amounts.
		{"relative resolves to zero", faultPhase[:17], faultPhase[:len(faultPhase)-7] + "0x timeout}\n", `t.yaml:17: phases[0].faults[0].latency: "0x timeout" resolves to 0s; must be > 0`},
		{"relative resolves below zero", "duration: 1s", "duration: -2x", `t.yaml:15: phases[0].duration: "-2x" resolves to -1s; must be > 0`},
		{"relative factor unreadable", "duration: 1s", "duration: twox timeout", `t.yaml:15: phases[0].duration: "twox timeout": the factor before x is not a number`},
		{"timeout relative to itself", "timeout: 500ms", "timeout: 0.9x", `t.yaml:2: timeout: cannot be written relative to the timeout`},
		{"relative without a timeout", "timeout: 500ms\n", "", `t.yaml:14: phases[0].duration: cannot resolve "2x": timeout is missing or invalid`},

		// Faults.
		{"unknown fault type", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: explode}\n", `t.yaml:17: phases[0].faults[0].type: unknown fault type "explode" (known: ` + strings.Join(faults.Types(), ", ") + ")"},
		{"fault on unknown dependency", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - dependency: C\n        type: reset\n", `t.yaml:17: phases[0].faults[0].dependency: unknown dependency "C" (known: A, B)`},
		{"latency fault without latency", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: latency}\n", `t.yaml:17: phases[0].faults[0].latency: a latency fault needs latency > 0`},
		{"reset fault with latency", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset, latency: 1s}\n", `t.yaml:17: phases[0].faults[0].latency: only a latency fault takes latency (type is reset)`},
		{"bandwidth fault without rate", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: bandwidth}\n", `phases[0].faults[0].rate_kbps: a bandwidth fault needs rate_kbps > 0`},
		{"same fault twice in a phase", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset}\n      - {dependency: A, type: reset}\n", `t.yaml:18: phases[0].faults[1]: a second reset fault on "A" in the same phase`},
		{"unknown key of a fault", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: latency, latncy: 1s}\n", `t.yaml:17: phases[0].faults[0].latncy: unknown field "latncy" (known: dependency, type, toxicity, direction, latency, jitter)`},
		{"key of two other types", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: latency, latency: 1s, delay: 1s}\n", `t.yaml:17: phases[0].faults[0].delay: only slicer and slow_close faults take delay (type is latency)`},
		{"toxicity written 0", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset, toxicity: 0}\n", `t.yaml:17: phases[0].faults[0].toxicity: must be more than 0 and at most 1 (omit it for every connection)`},
		{"toxicity above 1", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset, toxicity: 1.5}\n", `t.yaml:17: phases[0].faults[0].toxicity: must be more than 0 and at most 1 (the share of connections), got 1.5`},
		{"toxicity not a number", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset, toxicity: half}\n", `t.yaml:17: phases[0].faults[0].toxicity: expected a number, got "half"`},
		{"toxicity on a fault that is no toxic", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: down, toxicity: 0.5}\n", `t.yaml:17: phases[0].faults[0].toxicity: only a fault made by a Toxiproxy toxic takes toxicity (down is not one)`},
		{"unknown direction", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - dependency: A\n        type: reset\n        direction: both\n", `t.yaml:19: phases[0].faults[0].direction: unknown direction "both" (known: downstream, upstream)`},
		{"slicer without a size", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: slicer, delay: 1ms}\n", `t.yaml:17: phases[0].faults[0].average_size: a slicer fault needs average_size > 0`},
		{"same fault twice in one direction", "    duration: 1s\n", "    duration: 1s\n    faults:\n      - {dependency: A, type: reset}\n      - {dependency: A, type: reset, direction: downstream}\n", `t.yaml:18: phases[0].faults[1]: a second reset fault on "A" in the same phase`},

		// Names and references.
		{"endpoint calls unknown dependency", "calls: [B]", "calls: [C]", `t.yaml:8: endpoints[1].calls[0]: unknown dependency "C" (known: A, B)`},
		{"endpoint calls nothing", "calls: [B]", "calls: []", `t.yaml:8: endpoints[1].calls: an endpoint must call at least one dependency`},
		{"endpoint path without slash", "path: /b", "path: b", `t.yaml:8: endpoints[1].path: must start with /`},
		{"unknown deadline", "{path: /a, calls: [A]}", "{path: /a, calls: [A], deadline: never}", `t.yaml:7: endpoints[0].deadline: unknown deadline "never" (known: per-call, shared)`},
		{"duplicate dependency", "  - name: B\n", "  - name: A\n", `t.yaml:5: dependencies[1].name: duplicate dependency "A"`},
		{"duplicate endpoint", "path: /b", "path: /a", `t.yaml:8: endpoints[1].path: duplicate endpoint "/a"`},
		{"duplicate configuration", "  - name: none\n", "  - name: none\n  - name: none\n", `t.yaml:13: configurations[1].name: duplicate configuration "none"`},
		{"duplicate phase", "    duration: 1s\n", "    duration: 1s\n  - {name: p, duration: 1s}\n", `t.yaml:16: phases[1].name: duplicate phase "p"`},
		{"name with a space", "name: t", "name: my run", `t.yaml:1: name: "my run": use letters, digits`},
		{"empty name", "name: t", `name: ""`, `t.yaml:1: name: must not be empty`},
		{"no phases", "phases:\n  - name: p\n    duration: 1s\n", "phases: []\n", `t.yaml:13: phases: at least one phase is needed`},
		{"no dependencies", "dependencies:\n  - name: A\n  - name: B\n", "dependencies: []\n", `t.yaml:3: dependencies: at least one dependency is needed`},
		{"unknown arrivals", "  rate: 10/s\n", "  rate: 10/s\n  arrivals: bursty\n", `t.yaml:11: load.arrivals: unknown arrivals "bursty" (known: constant, poisson)`},
		{"breaker failure ratio above one", "  - name: A\n", "  - name: A\n    breaker: {failure_ratio: 2}\n", `t.yaml:5: dependencies[0].breaker.failure_ratio: must be between 0 and 1, got 2`},

		// Pool layouts.
		{"dependency in no pool", "  - name: none\n", "  - name: s\n    pools: [{name: pa, size: 1, dependencies: [A]}]\n", `t.yaml:13: configurations[0].pools: dependency "B" is in no pool`},
		{"dependency in two pools", "  - name: none\n", "  - name: s\n    pools:\n      - {name: pa, size: 1, dependencies: [A, B]}\n      - {name: pb, size: 1, dependencies: [B]}\n", `t.yaml:15: configurations[0].pools[1].dependencies[0]: dependency "B" is already in pool "pa"`},
		{"pool on unknown dependency", "  - name: none\n", "  - name: s\n    pools: [{name: p, size: 1, dependencies: [A, B, C]}]\n", `t.yaml:13: configurations[0].pools[0].dependencies[2]: unknown dependency "C" (known: A, B)`},
		{"pool size zero", "  - name: none\n", "  - name: s\n    pools: [{name: p, size: 0, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].pools[0].size: must be > 0, got 0`},
		{"pool size negative", "  - name: none\n", "  - name: s\n    pools:\n      - name: p\n        size: -3\n        dependencies: [A, B]\n", `t.yaml:15: configurations[0].pools[0].size: must be > 0, got -3`},
		{"pool queue negative", "  - name: none\n", "  - name: s\n    pools: [{name: p, size: 1, queue: -1, dependencies: [A, B]}]\n", `configurations[0].pools[0].queue: must be >= 0`},
		{"unknown pool kind", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: threads, size: 1, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].pools[0].kind: unknown pool kind "threads" (known: ` + poolKindList() + ")"},
		{"pool key of another kind", "  - name: none\n", "  - name: s\n    pools: [{name: p, size: 1, smoothing: 0.5, dependencies: [A, B]}]\n", `configurations[0].pools[0].smoothing: only gradient2 and vegas pools take smoothing (kind is semaphore)`},
		{"adaptive parameter out of range", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: gradient2, size: 10, rtt_tolerance: 0.5, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].pools[0].rtt_tolerance: must be in [1, 100] (0 = 1.5), got 0.5`},
		{"adaptive pool with a queue", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: aimd, size: 10, queue: 3, dependencies: [A, B]}]\n", `configurations[0].pools[0].queue: an adaptive pool rejects at once when its limit is reached: queue must be 0`},
		{"duplicate pool", "  - name: none\n", "  - name: s\n    pools: [{name: p, size: 1, dependencies: [A]}, {name: p, size: 1, dependencies: [B]}]\n", `configurations[0].pools[1].name: duplicate pool "p"`},
		{"shared with two pools", "  - name: none\n", "  - name: s\n    mode: shared\n    pools: [{name: pa, size: 1, dependencies: [A]}, {name: pb, size: 1, dependencies: [B]}]\n", `t.yaml:14: configurations[0].pools: mode shared needs exactly one pool covering every dependency, got 2 pools`},
		{"shared without pools", "  - name: none\n", "  - name: s\n    mode: shared\n", `t.yaml:12: configurations[0].pools: mode shared needs exactly one pool`},
		{"split with one pool for all", "  - name: none\n", "  - name: s\n    mode: split\n    pools: [{name: p, size: 2, dependencies: [A, B]}]\n", `t.yaml:14: configurations[0].pools: mode split with one pool covering every dependency is a shared pool`},
		{"none with pools", "  - name: none\n", "  - name: s\n    mode: none\n    pools: [{name: p, size: 2, dependencies: [A, B]}]\n", `t.yaml:14: configurations[0].pools: mode none admits every call at once and takes no pools, got 1`},
		{"unknown mode", "  - name: none\n", "  - name: s\n    mode: both\n", `t.yaml:13: configurations[0].mode: unknown mode "both" (known: shared, split, none)`},
		{"default pools without size", "  - name: none\n", "  - {name: s, mode: shared, pools: default}\n", `t.yaml:12: configurations[0].size: ` + "`pools: default` needs size > 0"},
		{"default pools without mode", "  - name: none\n", "  - {name: s, size: 4, pools: default}\n", `t.yaml:12: configurations[0].mode: ` + "`pools: default` needs mode shared or split"},
		{"size with explicit pools", "  - name: none\n", "  - name: s\n    size: 4\n    pools: [{name: p, size: 4, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].size: size is P for ` + "`pools: default`"},
		// The service's own check, reported at the scenario's paths (issue 9: this pool passed
		// validate and then failed service.New).
		{"semaphore with a queue that never waits", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: semaphore, size: 2, queue: 5, max_wait: 0s, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].pools[0].max_wait: must be > 0 for a semaphore with a queue`},
		{"client timeout above the service's bound", "timeout: 500ms", "timeout: 2h", `t.yaml:2: timeout: 2h0m0s is longer than the 1h0m0s allowed`},
		{"negative connection cap", "", "limits: {max_inbound_conns: -1}\n", `t.yaml:16: limits.max_inbound_conns: must be >= 0 (0 = no cap), got -1`},
		{"pool of a billion workers", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: workers, size: 1000000000, dependencies: [A, B]}]\n", `t.yaml:13: configurations[0].pools[0].size: 1000000000 is more than the 10000 allowed`},
		{"default pools of 2^31-1", "  - name: none\n", "  - {name: s, mode: shared, size: 2147483647, pools: default}\n", `t.yaml:12: configurations[0].pools[0].size: 2147483647 is more than the 10000 allowed`},
		{"pools neither list nor default", "  - name: none\n", "  - {name: s, pools: many}\n", `t.yaml:12: configurations[0].pools: expected a list of pools or "default", got "many"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := edit(t, tc.old, tc.new)
			if tc.name == "relative without a timeout" {
				src = strings.Replace(src, "duration: 1s", "duration: 2x", 1)
			}
			s, err := Parse("t.yaml", []byte(src))
			if err == nil {
				t.Fatalf("no error; want %q\n%s", tc.want, src)
			}
			if s != nil {
				t.Errorf("scenario returned with an error")
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error does not match ErrInvalid: %v", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error does not contain\n  %s\ngot:\n  %s\nfile:\n%s", tc.want, strings.ReplaceAll(err.Error(), "\n", "\n  "), src)
			}
		})
	}
}

// Every problem of a file is reported, one per line, in line order, each a *FieldError.
func TestParseReportsAllProblems(t *testing.T) {
	src := strings.NewReplacer(
		"timeout: 500ms", "timeout: 500ms\nbogus: 1", // line 3
		"calls: [B]", "calls: [C]", // line 9
		"duration: 1s", "duration: 0s", // line 16
	).Replace(base)
	_, err := Parse("t.yaml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	want := []string{
		`t.yaml:3: bogus: unknown field "bogus"`,
		`t.yaml:9: endpoints[1].calls[0]: unknown dependency "C"`,
		`t.yaml:16: phases[0].duration: must be > 0`,
	}
	if len(lines) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("problem %d = %q, want prefix %q", i, lines[i], w)
		}
	}
	var fe *FieldError
	if !errors.As(err, &fe) || fe.File != "t.yaml" || fe.Line != 3 || fe.Field != "bogus" {
		t.Errorf("errors.As FieldError = %+v, want the first problem at t.yaml:3 bogus", fe)
	}
}

// A missing or mistyped field is reported once, not again as an invalid value.
func TestParseDoesNotRepeatAProblem(t *testing.T) {
	_, err := Parse("t.yaml", []byte(edit(t, "timeout: 500ms", "timeout: soon")))
	if err == nil {
		t.Fatal("no error")
	}
	if n := strings.Count(err.Error(), "timeout:"); n != 1 {
		t.Errorf("timeout reported %d times:\n%s", n, err)
	}
}

func TestParseDefaults(t *testing.T) {
	src := edit(t, "  - name: none\n", `  - name: none
  - name: one
    pools: [{name: all, size: 4, dependencies: [A, B]}]
  - name: two
    pools: [{name: pa, size: 2, dependencies: [A]}, {name: pb, kind: workers, size: 2, dependencies: [B]}]
`)
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"seed", s.Seed, int64(1)},
		{"repetitions", s.Repetitions, 1},
		{"sample_every", s.SampleEvery, 100 * time.Millisecond},
		{"load.arrivals", s.Load.Arrivals, "constant"},
		{"load.timeout is 4x timeout", s.Load.Timeout, 2 * time.Second},
		{"load.timeout recorded", s.Resolved["load.timeout"], "default 4x timeout = 2s"},
		{"endpoint deadline", s.Endpoints[0].Deadline, service.DeadlinePerCall},
		{"endpoint rate is load rate", s.Endpoints[1].Rate, 10.0},
		{"no per-endpoint rates", len(s.Load.Rates), 0},
		{"mode without pools", s.Configurations[0].Mode, "none"},
		{"mode with one pool for all", s.Configurations[1].Mode, "shared"},
		{"mode with a pool per dependency", s.Configurations[2].Mode, "split"},
		{"pool kind", s.Configurations[1].Pools[0].Kind, service.KindSemaphore},
		{"pool kind as written", s.Configurations[2].Pools[1].Kind, service.KindWorkers},
		{"path", s.Path, "t.yaml"},
		{"raw", string(s.Raw), src},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestParseRateForms(t *testing.T) {
	tests := []struct {
		text string
		want float64
	}{
		{"50/s", 50},
		{"50/1s", 50},
		{"3000/1m", 50},
		{"5/100ms", 50},
		{"50", 50},
		{"12.5", 12.5},
		{`"20"`, 20},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(edit(t, "rate: 10/s", "rate: "+tc.text)))
			if err != nil {
				t.Fatal(err)
			}
			if s.Load.Rate != tc.want {
				t.Errorf("load.rate %s = %v/s, want %v/s", tc.text, s.Load.Rate, tc.want)
			}
		})
	}
}

func TestParseEndpointRate(t *testing.T) {
	s, err := Parse("t.yaml", []byte(edit(t, "{path: /b, calls: [B]}", "{path: /b, calls: [B], rate: 3000/1m}")))
	if err != nil {
		t.Fatal(err)
	}
	if s.Endpoints[0].Rate != 10 || s.Endpoints[1].Rate != 50 {
		t.Errorf("endpoint rates = %v, %v; want 10 (load.rate), 50 (own)", s.Endpoints[0].Rate, s.Endpoints[1].Rate)
	}
	if len(s.Load.Rates) != 1 || s.Load.Rates["/b"] != 50 {
		t.Errorf("Load.Rates = %v, want map[/b:50]", s.Load.Rates)
	}
}

// A fault's keys come from its type's definition in package faults: every type decodes, with
// relative amounts resolved and toxicity and direction kept, and nothing in the loader names them.
func TestParseFaultTypes(t *testing.T) {
	tests := []struct {
		yaml string
		want faults.Fault
	}{
		{"{dependency: A, type: latency, latency: 0.9x timeout, jitter: 10ms}",
			faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond, Jitter: 10 * time.Millisecond})},
		{"{dependency: A, type: reset}", faults.New("A", &faults.Reset{})},
		{"{dependency: A, type: timeout}", faults.New("A", &faults.Timeout{})},
		{"{dependency: A, type: timeout, close_after: 0.5x}", faults.New("A", &faults.Timeout{CloseAfter: 250 * time.Millisecond})},
		{"{dependency: A, type: http-error}", faults.New("A", &faults.HTTPError{})},
		{"{dependency: A, type: http-error, status: 503}", faults.New("A", &faults.HTTPError{Status: 503})},
		{"{dependency: A, type: down}", faults.New("A", &faults.Down{})},
		{"{dependency: A, type: bandwidth, rate_kbps: 64}", faults.New("A", &faults.Bandwidth{RateKBps: 64})},
		{"{dependency: A, type: slicer, average_size: 64, size_variation: 16, delay: 0.002x}",
			faults.New("A", &faults.Slicer{AverageSize: 64, SizeVariation: 16, Delay: time.Millisecond})},
		{"{dependency: A, type: slow_close, delay: 2x timeout}", faults.New("A", &faults.SlowClose{Delay: time.Second})},
		{"{dependency: A, type: limit_data, bytes: 1000}", faults.New("A", &faults.LimitData{Bytes: 1000})},
		{"{dependency: A, type: reset, toxicity: 0.25, direction: upstream}",
			faults.Fault{Dependency: "A", Type: "reset", Params: &faults.Reset{}, Toxicity: 0.25, Direction: faults.Upstream}},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(edit(t, "    duration: 1s\n", "    duration: 1s\n    faults:\n      - "+tt.yaml+"\n")))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Phases[0].Faults[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v (%v), want %+v (%v)", got, got.Params, tt.want, tt.want.Params)
			}
		})
	}
	t.Run("two directions of one type add up", func(t *testing.T) {
		_, err := Parse("t.yaml", []byte(edit(t, "    duration: 1s\n", "    duration: 1s\n    faults:\n"+
			"      - {dependency: A, type: latency, latency: 10ms}\n      - {dependency: A, type: latency, latency: 10ms, direction: upstream}\n")))
		if err != nil {
			t.Fatal(err)
		}
	})
}

// A pool's kind decides which keys beside the common ones it takes, read through the pool kinds
// registry; durations may be relative to the timeout; a marshalled scenario loads back the same.
func TestParsePoolKinds(t *testing.T) {
	tests := []struct {
		yaml string
		want service.PoolConfig
	}{
		{"{name: p, size: 4, dependencies: [A, B]}", service.PoolConfig{Name: "p", Kind: service.KindSemaphore, Size: 4, Dependencies: []string{"A", "B"}}},
		{"{name: p, kind: workers, size: 4, queue: 8, max_wait: 1x, dependencies: [A, B]}",
			service.PoolConfig{Name: "p", Kind: service.KindWorkers, Size: 4, QueueCapacity: 8, MaxWait: 500 * time.Millisecond, Dependencies: []string{"A", "B"}}},
		{"{name: p, kind: gradient2, size: 10, dependencies: [A, B]}",
			service.PoolConfig{Name: "p", Kind: service.KindGradient2, Size: 10, Dependencies: []string{"A", "B"}, Params: &service.Gradient2Params{}}},
		{"{name: p, kind: aimd, size: 10, min_limit: 2, backoff_ratio: 0.75, timeout: 0.8x, dependencies: [A, B]}",
			service.PoolConfig{Name: "p", Kind: service.KindAIMD, Size: 10, Dependencies: []string{"A", "B"},
				Params: &service.AIMDParams{MinLimit: 2, BackoffRatio: 0.75, Timeout: 400 * time.Millisecond}}},
		{"{name: p, kind: vegas, size: 10, alpha: 2, beta: 5, seed: 7, dependencies: [A, B]}",
			service.PoolConfig{Name: "p", Kind: service.KindVegas, Size: 10, Dependencies: []string{"A", "B"},
				Params: &service.VegasParams{Alpha: 2, Beta: 5, Seed: 7}}},
	}
	for _, tt := range tests {
		t.Run(tt.yaml, func(t *testing.T) {
			s, err := Parse("t.yaml", []byte(edit(t, "  - name: none\n", "  - name: s\n    pools: ["+tt.yaml+"]\n")))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Configurations[0].Pools[0].PoolConfig; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v (%v), want %+v (%v)", got, got.Params, tt.want, tt.want.Params)
			}
			out, err := s.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			back, err := Parse("back.yaml", out)
			if err != nil {
				t.Fatalf("marshalled scenario does not load: %v\n%s", err, out)
			}
			if got := back.Configurations[0].Pools[0].PoolConfig; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("after a marshal round trip %+v (%v), want %+v", got, got.Params, tt.want)
			}
		})
	}
}

func TestParseRelativeAmounts(t *testing.T) {
	tests := []struct {
		name, field, text string
		want              time.Duration
	}{
		{"fault latency with timeout", "phases[0].faults[0].latency", "0.9x timeout", 450 * time.Millisecond},
		{"fault latency short form", "phases[0].faults[0].latency", "0.9x", 450 * time.Millisecond},
		{"more than the timeout", "phases[0].faults[0].latency", "1.5x timeout", 750 * time.Millisecond},
		{"phase duration", "phases[0].duration", "20x timeout", 10 * time.Second},
		{"pool max_wait", "configurations[0].pools[0].max_wait", "1x timeout", 500 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := edit(t, "  - name: none\n", "  - name: c\n    pools: [{name: p, size: 1, max_wait: 0s, dependencies: [A, B]}]\n")
			src = strings.Replace(src, faultPhase[:17], faultPhase, 1)
			switch tc.field {
			case "phases[0].faults[0].latency":
				src = strings.Replace(src, "latency: 100ms", "latency: "+tc.text, 1)
			case "phases[0].duration":
				src = strings.Replace(src, "duration: 1s", "duration: "+tc.text, 1)
			default:
				src = strings.Replace(src, "max_wait: 0s", "max_wait: "+tc.text, 1)
			}
			s, err := Parse("t.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			var got time.Duration
			switch tc.field {
			case "phases[0].faults[0].latency":
				got = s.Phases[0].Faults[0].Params.(*faults.Latency).Latency
			case "phases[0].duration":
				got = s.Phases[0].Duration
			default:
				got = s.Configurations[0].Pools[0].MaxWait
			}
			if got != tc.want {
				t.Errorf("%s = %v, want %v", tc.field, got, tc.want)
			}
			wantRec := tc.text + " = " + tc.want.String() + " (timeout 500ms)"
			if s.Resolved[tc.field] != wantRec {
				t.Errorf("Resolved[%s] = %q, want %q", tc.field, s.Resolved[tc.field], wantRec)
			}
		})
	}
}

// Validate keeps pointing at the file after a loaded scenario was changed in Go (CLI overrides).
func TestValidateAfterOverride(t *testing.T) {
	s, err := Parse("t.yaml", []byte(base))
	if err != nil {
		t.Fatal(err)
	}
	s.Load.Rate = -1
	s.Phases[0].Duration = 0
	err = s.Validate()
	for _, want := range []string{
		"t.yaml:10: load.rate: must be a rate in [0.001, 1e+09] requests/s, got -1",
		"t.yaml:15: phases[0].duration: must be > 0, got 0s",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to contain %q", err, want)
		}
	}
	// A scenario built in Go has no file and no lines.
	err = (&Scenario{}).Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "name: must not be empty") {
		t.Errorf("Validate() of an empty scenario = %v, want it to start with %q", err, "name: must not be empty")
	}
}

func TestParseWholeFile(t *testing.T) {
	tests := []struct {
		name, src, want string // want "" = valid
	}{
		{"empty file", "", "t.yaml: empty file"},
		{"only a comment", "# nothing\n", "t.yaml: empty file"},
		{"a list, not a mapping", "- a\n- b\n", "t.yaml:1: expected a mapping, got a list"},
		{"a scalar, not a mapping", "hello\n", `t.yaml:1: expected a mapping, got "hello"`},
		{"x- keys hold anchors", "x-phase: &p {name: p, duration: 1s}\n" + strings.Replace(base, "phases:\n  - name: p\n    duration: 1s\n", "phases: [*p]\n", 1), ""},
		{"x- keys only at the top", strings.Replace(base, "  rate: 10/s\n", "  rate: 10/s\n  x-note: 1\n", 1), `t.yaml:11: load.x-note: unknown field "x-note"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(tc.src))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error: %v", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want && !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("error = %v, want %q", err, tc.want)
			}
		})
	}
}

// poolKindList is the registered pool kinds as an "unknown pool kind" message lists them.
func poolKindList() string {
	var names []string
	for _, k := range service.PoolKinds() {
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}
