package service

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// validConfig is a two-dependency split config that passes Validate; cases break one field.
func validConfig() Config {
	deps := []string{"A", "B"}
	return Config{
		Mode:  ModeSplit,
		Pools: layout(ModeSplit, 4, deps, time.Second),
		Dependencies: []DependencyConfig{
			{Name: "A", URL: "http://127.0.0.1:1"},
			{Name: "B", URL: "http://127.0.0.1:2"},
		},
		Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}},
		ClientTimeout: time.Second,
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Config)
		want   string // "path: reason" of a problem the error must list; "" means valid
	}{
		{"valid split", func(*Config) {}, ""},
		{"valid shared", func(c *Config) {
			c.Mode, c.Pools = ModeShared, layout(ModeShared, 4, []string{"A", "B"}, time.Second)
		}, ""},
		{"shared pool listing no dependency covers all", func(c *Config) {
			c.Mode, c.Pools = "", []PoolConfig{{Name: "shared", Size: 2}}
		}, ""},
		{"valid none", func(c *Config) { c.Mode, c.Pools = ModeNone, nil }, ""},
		{"a trailing slash serves a subtree", func(c *Config) { c.Endpoints[0].Path = "/a/" }, ""},
		{"the root path", func(c *Config) { c.Endpoints[0].Path = "/" }, ""},
		{"pools at the bounds", func(c *Config) {
			c.Pools[0].Kind, c.Pools[0].Size, c.Pools[0].QueueCapacity = KindWorkers, MaxPoolSize, MaxQueueCapacity
		}, ""},
		{"unknown mode", func(c *Config) { c.Mode = "both" }, `mode: unknown mode "both" (known: shared, split, none)`},
		{"zero client timeout", func(c *Config) { c.ClientTimeout = 0 }, "client_timeout: must be > 0, got 0s"},
		{"client timeout of a day", func(c *Config) { c.ClientTimeout = 24 * time.Hour }, "client_timeout: 24h0m0s is longer than the 1h0m0s allowed"},
		{"pool size zero", func(c *Config) { c.Pools[1].Size = 0 }, "pools[1].size: must be > 0, got 0"},
		{"pool of a billion", func(c *Config) { c.Pools[1].Size = 1_000_000_000 }, "pools[1].size: 1000000000 is more than the 10000 allowed"},
		{"negative queue", func(c *Config) { c.Pools[0].QueueCapacity = -1 }, "pools[0].queue: must be >= 0 (0 = no waiting room), got -1"},
		{"huge queue", func(c *Config) { c.Pools[0].QueueCapacity = 1 << 30 }, "pools[0].queue: 1073741824 is more than the 100000 allowed"},
		{"too many workers together", func(c *Config) {
			for i := range c.Pools {
				c.Pools[i].Kind, c.Pools[i].Size = KindWorkers, MaxPoolSize
			}
			c.Pools = append(c.Pools, PoolConfig{Name: "C", Kind: KindWorkers, Size: MaxPoolSize})
			c.Dependencies = append(c.Dependencies, DependencyConfig{Name: "C", URL: "http://127.0.0.1:3"})
			c.Pools[2].Dependencies = []string{"C"}
		}, "pools: the pools start 30000 goroutines together, more than the 20000 allowed"},
		{"semaphore queue without max wait", func(c *Config) { c.Pools[0].QueueCapacity = 3 }, "pools[0].max_wait: must be > 0 for a semaphore with a queue"},
		{"max wait of a day", func(c *Config) { c.Pools[0].MaxWait = 24 * time.Hour }, "pools[0].max_wait: 24h0m0s is longer than the 1h0m0s allowed"},
		{"unknown kind", func(c *Config) { c.Pools[0].Kind = "threads" }, `pools[0].kind: unknown pool kind "threads" (known: ` + knownPoolKinds() + ")"},
		{"dependency in two pools", func(c *Config) { c.Pools[1].Dependencies = []string{"A"} }, `pools[1].dependencies[0]: dependency "A" is already in pool "A"`},
		{"dependency in no pool", func(c *Config) { c.Pools = c.Pools[:1] }, `pools: dependency "B" is in no pool`},
		{"pool of unknown dependency", func(c *Config) { c.Pools[1].Dependencies = []string{"C"} }, `pools[1].dependencies[0]: unknown dependency "C"`},
		{"pools in mode none", func(c *Config) { c.Mode = ModeNone }, "pools: mode none admits every call at once and takes no pools, got 2"},
		{"two pools in mode shared", func(c *Config) { c.Mode = ModeShared }, "pools: mode shared needs exactly one pool covering every dependency, got 2 pools"},
		{"duplicate pool name", func(c *Config) { c.Pools[1].Name = "A" }, `pools[1].name: duplicate pool "A"`},
		{"pool name shaped like a breaker", func(c *Config) { c.Pools[0].Name = "breaker:A" }, `pools[0].name: "breaker:A": use letters, digits`},
		{"endpoint on the metrics path", func(c *Config) { c.Endpoints[1].Path = MetricsPath }, `endpoints[1].path: "/metrics" collides with the service's own /metrics`},
		{"endpoint under the metrics path", func(c *Config) { c.Endpoints[1].Path = "/metrics/x" }, `endpoints[1].path: "/metrics/x" collides`},
		{"endpoint on the resources path", func(c *Config) { c.Endpoints[0].Path = DebugResourcesPath }, `endpoints[0].path: "/debug/resources" collides with the service's own /debug`},
		{"endpoint without slash", func(c *Config) { c.Endpoints[0].Path = "a" }, `endpoints[0].path: must start with /, got "a"`},
		{"a router wildcard", func(c *Config) { c.Endpoints[0].Path = "/x/{p}" }, `endpoints[0].path: "/x/{p}" holds { or }, which the router reads as a wildcard pattern`},
		{"an unclosed brace", func(c *Config) { c.Endpoints[0].Path = "/{" }, `endpoints[0].path: "/{" holds { or }`},
		{"dot-dot", func(c *Config) { c.Endpoints[0].Path = "/a/../b" }, `endpoints[0].path: "/a/../b" is not a clean path`},
		{"double slash", func(c *Config) { c.Endpoints[0].Path = "//a" }, `endpoints[0].path: "//a" is not a clean path`},
		{"NUL", func(c *Config) { c.Endpoints[0].Path = "/a\x00" }, `endpoints[0].path: "/a\x00" holds a space, a control character`},
		{"bad escape", func(c *Config) { c.Endpoints[0].Path = "/%zz" }, `endpoints[0].path: "/%zz" holds a percent-escape`},
		{"query", func(c *Config) { c.Endpoints[0].Path = "/a?b" }, `endpoints[0].path: "/a?b" holds a space, a control character, ?, # or \`},
		{"invalid UTF-8", func(c *Config) { c.Endpoints[0].Path = "/\xff" }, `endpoints[0].path: "/\xff" is not valid UTF-8`},
		{"endpoint calls unknown dependency", func(c *Config) { c.Endpoints[0].Calls = []string{"Z"} }, `endpoints[0].calls[0]: unknown dependency "Z" (known: A, B)`},
		{"endpoint calls nothing", func(c *Config) { c.Endpoints[0].Calls = nil }, "endpoints[0].calls: an endpoint must call at least one dependency"},
		{"endpoint calls twice", func(c *Config) { c.Endpoints[0].Calls = []string{"A", "A"} }, `endpoints[0].calls[1]: dependency "A" called twice`},
		{"duplicate endpoint", func(c *Config) { c.Endpoints[1].Path = "/a" }, `endpoints[1].path: duplicate endpoint "/a"`},
		{"bad deadline", func(c *Config) { c.Endpoints[0].Deadline = "sum" }, `endpoints[0].deadline: unknown deadline "sum" (known: per-call, shared)`},
		{"bad dependency url", func(c *Config) { c.Dependencies[0].URL = "127.0.0.1:1" }, `dependencies[0].url: "127.0.0.1:1" is not an http(s) URL with a host`},
		{"duplicate dependency", func(c *Config) { c.Dependencies[1].Name = "A" }, `dependencies[1].name: duplicate dependency "A"`},
		{"dependency name with a space", func(c *Config) { c.Dependencies[1].Name = "my dep" }, `dependencies[1].name: "my dep": use letters, digits`},
		{"breaker ratio", func(c *Config) { c.Dependencies[0].Breaker = &BreakerConfig{FailureRatio: 2} }, "dependencies[0].breaker.failure_ratio: must be between 0 and 1, got 2"},
		{"negative breaker period", func(c *Config) { c.Dependencies[0].Breaker = &BreakerConfig{OpenTimeout: -1} }, "dependencies[0].breaker.open_timeout: must be >= 0, got -1ns"},
		{"negative caps", func(c *Config) { c.MaxInboundConns = -1 }, "max_inbound_conns: must be >= 0 (0 = no cap), got -1"},
		{"caps too high", func(c *Config) { c.MaxOutboundConns = 1 << 31 }, "max_outbound_conns: 2147483648 is more than the 1000000 allowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig()
			tt.change(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate = %v, want nil", err)
				}
				s, err := New(c)
				if err != nil {
					t.Fatalf("New after Validate passed: %v", err)
				}
				s.Shutdown(t.Context())
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("Validate = %v, want a *ValidationError matching ErrInvalidConfig", err)
			}
			found := false
			for _, p := range ve.Problems {
				found = found || strings.HasPrefix(p.Error(), tt.want)
			}
			if !found {
				t.Fatalf("Validate = %v, want a problem starting %q", err, tt.want)
			}
			if _, nerr := New(c); !errors.Is(nerr, ErrInvalidConfig) {
				t.Errorf("New = %v, want the validation error", nerr)
			}
		})
	}
}

// Every problem names its field by a path; a config with several problems lists them all.
func TestValidateListsEveryProblem(t *testing.T) {
	c := validConfig()
	c.ClientTimeout = 0
	c.Pools[1].Size = 0
	c.Endpoints[0].Path = "/{x}"
	var ve *ValidationError
	if !errors.As(c.Validate(), &ve) {
		t.Fatal("no *ValidationError")
	}
	var paths []string
	for _, p := range ve.Problems {
		paths = append(paths, p.Path)
	}
	if got, want := strings.Join(paths, " "), "client_timeout endpoints[0].path pools[1].size"; got != want {
		t.Errorf("problem paths = %q, want %q", got, want)
	}
}

// The router's own conflicts (which Validate's path rules already exclude) come back from New
// as errors, never as a panic.
func TestRouterRefusalIsAnError(t *testing.T) {
	h := http.NotFoundHandler()
	r := newRouter(h, h)
	if err := r.handle("/x/{p}", h); err != nil {
		t.Fatalf("first pattern: %v", err)
	}
	if err := r.handle("/x/{q}", h); err == nil || !strings.Contains(err.Error(), "conflicts") {
		t.Errorf("conflicting pattern: err = %v, want the router's conflict", err)
	}
}
