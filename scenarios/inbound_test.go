package scenarios_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// inboundFile is a small scenario with an inbound endpoint; the error cases replace text in it to
// make a variant.
const inboundFile = `name: t
timeout: 1s
dependencies:
  - name: A
  - name: W
endpoints:
  - {path: /a, calls: [A]}
  - path: /w
    calls: [W]
    rate: 10/s
    inbound: {attempts: 7, retry_delay: 50ms, max_backlog: 100, dedupe: true}
load:
  rate: 5/s
configurations:
  - name: shared
    mode: shared
    pools:
      - {name: shared, size: 5, dependencies: [A, W]}
  - name: capped
    mode: split
    pools:
      - {name: lookups, size: 3, dependencies: [A]}
      - {name: webhooks, size: 2, dependencies: [], inbound: [/w]}
      - {name: W, size: 1, dependencies: [W]}
phases:
  - name: before
    duration: 2s
  - name: burst
    duration: 1s
    rates: {/w: 100/s, /a: 0}
  - name: after
    duration: 2s
`

func TestInboundScenario(t *testing.T) {
	sc, err := scenarios.Parse("t.yaml", []byte(inboundFile))
	if err != nil {
		t.Fatal(err)
	}
	t.Run("the endpoint's inbound shape reaches the service", func(t *testing.T) {
		urls := map[string]string{"A": "http://127.0.0.1:1", "W": "http://127.0.0.1:2"}
		want := map[string]string{"shared": "shared", "capped": "webhooks"}
		for _, c := range sc.Configurations {
			cfg, err := sc.ServiceConfig(c, urls)
			if err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			in := cfg.Endpoints[1].Inbound
			wantIn := service.InboundConfig{Pool: want[c.Name], Attempts: 7, RetryDelay: 50 * time.Millisecond, MaxBacklog: 100, Dedupe: true}
			if in == nil || *in != wantIn || cfg.Endpoints[0].Inbound != nil {
				t.Errorf("%s: /w inbound %+v, /a %+v; want %+v and nil", c.Name, in, cfg.Endpoints[0].Inbound, wantIn)
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("%s: service config does not validate: %v", c.Name, err)
			}
		}
	})
	t.Run("per-phase rates become segments at the phase offsets", func(t *testing.T) {
		tests := []struct {
			path string
			want []loadgen.Segment
			ok   bool
		}{
			{"/w", []loadgen.Segment{{Start: 0, Rate: 10}, {Start: 2 * time.Second, Rate: 100}, {Start: 3 * time.Second, Rate: 10}}, true},
			{"/a", []loadgen.Segment{{Start: 0, Rate: 5}, {Start: 2 * time.Second, Rate: 0}, {Start: 3 * time.Second, Rate: 5}}, true},
		}
		for _, tt := range tests {
			var ep scenarios.Endpoint
			for _, e := range sc.Endpoints {
				if e.Path == tt.path {
					ep = e
				}
			}
			got, ok := sc.RateSegments(ep)
			if ok != tt.ok || len(got) != len(tt.want) {
				t.Fatalf("%s: %v, %t; want %v", tt.path, got, ok, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("%s segment %d: %v, want %v", tt.path, i, got[i], tt.want[i])
				}
			}
		}
		if _, ok := sc.RateSegments(scenarios.Endpoint{EndpointConfig: service.EndpointConfig{Path: "/x"}, Rate: 3}); ok {
			t.Error("an endpoint no phase overrides has segments")
		}
	})
}

func TestInboundScenarioErrors(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		{"unknown endpoint in a phase's rates", "rates: {/w: 100/s, /a: 0}", "rates: {/nope: 100/s}", `phases[1].rates./nope: unknown endpoint "/nope"`},
		{"bad rate", "rates: {/w: 100/s, /a: 0}", "rates: {/w: fast}", `phases[1].rates./w`},
		{"a pool listing an endpoint that is not inbound", "inbound: [/w]}", "inbound: [/a]}", `"/a" is not an inbound endpoint`},
		{"inbound endpoint in no pool in split mode", "      - {name: webhooks, size: 2, dependencies: [], inbound: [/w]}\n", "", `inbound endpoint "/w" is processed under no pool`},
		{"an empty pool without inbound endpoints", ", inbound: [/w]}", ", inbound: []}", "a pool must cover at least one dependency"},
		{"negative attempts", "attempts: 7", "attempts: -1", "endpoints[1].inbound.attempts: must be >= 0"},
		{"unknown inbound field", "dedupe: true", "dedup: true", `unknown field "dedup"`},
		{"an endpoint that never sends", "    duration: 2s\n", "    duration: 2s\n    rates: {/a: 0}\n", `endpoint "/a" sends nothing`},
		{"per-phase rates with poisson arrivals", "rate: 5/s\n", "rate: 5/s\n  arrivals: poisson\n", "per-phase rates need load.arrivals constant"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(inboundFile, tt.old) {
				t.Fatalf("test file has no %q", tt.old)
			}
			// Every occurrence: "never sends" silences /a in both phases that do not already.
			_, err := scenarios.Parse("t.yaml", []byte(strings.ReplaceAll(inboundFile, tt.old, tt.new)))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				return
			}
			if !errors.Is(err, scenarios.ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse = %v; want an ErrInvalid containing %q", err, tt.want)
			}
		})
	}
}

// TestWebhooksScaledDown is the webhooks scenario (seed 000, the other direction) in miniature:
