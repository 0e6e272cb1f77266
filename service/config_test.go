package service

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// validConfig is a two-dependency split config that passes Validate; cases break one field.
func validConfig() Config {
	deps := []string{"A", "B"}
	return Config{
		Mode:  ModeSplit,
		Pools: DefaultPools(ModeSplit, 4, deps, time.Second),
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
		want   string // a problem the error must name; "" means valid
	}{
		{"valid split", func(*Config) {}, ""},
		{"valid shared default", func(c *Config) {
			c.Mode, c.Pools = ModeShared, DefaultPools(ModeShared, 4, []string{"A", "B"}, time.Second)
		}, ""},
		{"shared pool listing no dependency covers all", func(c *Config) {
			c.Mode, c.Pools = "", []PoolConfig{{Name: "shared", Size: 2}}
		}, ""},
		{"valid none", func(c *Config) { c.Mode, c.Pools = ModeNone, nil }, ""},
		{"unknown mode", func(c *Config) { c.Mode = "both" }, `mode: mode "both": must be shared, split or none`},
		{"zero client timeout", func(c *Config) { c.ClientTimeout = 0 }, "client_timeout: must be > 0"},
		{"pool size zero", func(c *Config) { c.Pools[1].Size = 0 }, "pools[1].size: must be > 0"},
		{"negative queue", func(c *Config) { c.Pools[0].QueueCapacity = -1 }, "pools[0].queue_capacity: must be >= 0"},
		{"semaphore queue without max wait", func(c *Config) { c.Pools[0].QueueCapacity = 3 }, "pools[0].max_wait: must be > 0 for a semaphore"},
		{"unknown kind", func(c *Config) { c.Pools[0].Kind = "threads" }, `pools[0].kind: kind "threads"`},
		{"dependency in two pools", func(c *Config) { c.Pools[1].Dependencies = []string{"A"} }, `pools[1].dependencies[0]: "A" is already in pool "A"`},
		{"dependency in no pool", func(c *Config) { c.Pools = c.Pools[:1] }, `dependency "B" is in no pool`},
		{"pool of unknown dependency", func(c *Config) { c.Pools[1].Dependencies = []string{"C"} }, `pools[1].dependencies[0]: unknown dependency "C"`},
		{"pools in mode none", func(c *Config) { c.Mode = ModeNone }, "pools: must be empty in mode none"},
		{"two pools in mode shared", func(c *Config) { c.Mode = ModeShared }, "pools: mode shared needs exactly one pool, got 2"},
		{"duplicate pool name", func(c *Config) { c.Pools[1].Name = "A" }, `pools[1].name: "A" is declared twice`},
		{"pool name shaped like a breaker", func(c *Config) { c.Pools[0].Name = "breaker:A" }, "pools[0].name"},
		{"endpoint on the metrics path", func(c *Config) { c.Endpoints[1].Path = MetricsPath }, `endpoints[1].path: "/metrics" collides`},
		{"endpoint on the resources path", func(c *Config) { c.Endpoints[0].Path = DebugResourcesPath }, `endpoints[0].path: "/debug/resources" collides`},
		{"endpoint without slash", func(c *Config) { c.Endpoints[0].Path = "a" }, `endpoints[0].path: "a" must start with /`},
		{"endpoint calls unknown dependency", func(c *Config) { c.Endpoints[0].Calls = []string{"Z"} }, `endpoints[0].calls[0]: unknown dependency "Z"`},
		{"endpoint calls nothing", func(c *Config) { c.Endpoints[0].Calls = nil }, "endpoints[0].calls: must name at least one dependency"},
		{"bad deadline", func(c *Config) { c.Endpoints[0].Deadline = "sum" }, `endpoints[0].deadline: "sum"`},
		{"bad dependency url", func(c *Config) { c.Dependencies[0].URL = "127.0.0.1:1" }, "dependencies[0].url"},
		{"duplicate dependency", func(c *Config) { c.Dependencies[1].Name = "A" }, `dependencies[1].name: "A" is declared twice`},
		{"breaker ratio", func(c *Config) { c.Dependencies[0].Breaker = &BreakerConfig{FailureRatio: 2} }, "dependencies[0].breaker.failure_ratio"},
		{"negative caps", func(c *Config) { c.MaxInboundConns = -1 }, "max_inbound_conns: must be >= 0"},
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
				return
			}
			if err == nil || !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate = %v, want ErrInvalidConfig naming %q", err, tt.want)
			}
			if _, nerr := New(c); !errors.Is(nerr, ErrInvalidConfig) {
				t.Errorf("New = %v, want the validation error", nerr)
			}
		})
	}
}

func TestDefaultPools(t *testing.T) {
	deps := []string{"A", "B"}
	tests := []struct {
		mode Mode
		p    int
		want []PoolConfig
	}{
		{ModeShared, 10, []PoolConfig{{Name: "shared", Kind: KindWorkers, Size: 10, QueueCapacity: 20, MaxWait: time.Second, Dependencies: deps}}},
		{ModeSplit, 10, []PoolConfig{
			{Name: "A", Kind: KindSemaphore, Size: 5, Dependencies: []string{"A"}},
			{Name: "B", Kind: KindSemaphore, Size: 5, Dependencies: []string{"B"}},
		}},
		{ModeSplit, 1, []PoolConfig{ // never below one permit
			{Name: "A", Kind: KindSemaphore, Size: 1, Dependencies: []string{"A"}},
			{Name: "B", Kind: KindSemaphore, Size: 1, Dependencies: []string{"B"}},
		}},
		{ModeNone, 10, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			got := DefaultPools(tt.mode, tt.p, deps, time.Second)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DefaultPools(%s, %d) = %+v, want %+v", tt.mode, tt.p, got, tt.want)
			}
		})
	}
}
