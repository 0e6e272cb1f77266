package scenarios

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

func TestServiceConfig(t *testing.T) {
	src := strings.NewReplacer(
		"  - name: A\n", "  - name: A\n    breaker: {slow_call_threshold: 400ms, min_calls: 5}\n",
		"  - name: none\n", `  - name: none
  - {name: shared, mode: shared, size: 10, pools: default}
  - {name: split, mode: split, size: 10, pools: default, breakers: false}
`,
		"{path: /b, calls: [B]}", "{path: /b, calls: [B]}\n  - {path: /ab, calls: [A, B], deadline: shared}",
	).Replace(base) + "limits: {max_inbound_conns: 7, max_outbound_conns: 9}\n"
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{"A": "http://127.0.0.1:1", "B": "http://127.0.0.1:2"}
	breakerA := &service.BreakerConfig{SlowCallThreshold: 400 * time.Millisecond, MinCalls: 5}
	endpoints := []service.EndpointConfig{
		{Path: "/a", Calls: []string{"A"}, Deadline: service.DeadlinePerCall},
		{Path: "/b", Calls: []string{"B"}, Deadline: service.DeadlinePerCall},
		{Path: "/ab", Calls: []string{"A", "B"}, Deadline: service.DeadlineShared},
	}
	common := func(mode service.Mode, pools []service.PoolConfig, breaker *service.BreakerConfig) service.Config {
		return service.Config{
			Mode:  mode,
			Pools: pools,
			Dependencies: []service.DependencyConfig{
				{Name: "A", URL: "http://127.0.0.1:1", Breaker: breaker},
				{Name: "B", URL: "http://127.0.0.1:2"},
			},
			Endpoints:        endpoints,
			ClientTimeout:    500 * time.Millisecond,
			MaxInboundConns:  7,
			MaxOutboundConns: 9,
		}
	}
	tests := []struct {
		config string
		want   service.Config
	}{
		{"none", common(service.ModeNone, nil, breakerA)},
		{"shared", common(service.ModeShared, []service.PoolConfig{
			{Name: "shared", Kind: service.KindWorkers, Size: 10, QueueCapacity: 20, MaxWait: 500 * time.Millisecond, Dependencies: []string{"A", "B"}},
		}, breakerA)},
		// breakers: false turns A's breaker off in this configuration only.
		{"split", common(service.ModeSplit, []service.PoolConfig{
			{Name: "A", Kind: service.KindSemaphore, Size: 5, Dependencies: []string{"A"}},
			{Name: "B", Kind: service.KindSemaphore, Size: 5, Dependencies: []string{"B"}},
		}, nil)},
	}
	for i, tc := range tests {
		t.Run(tc.config, func(t *testing.T) {
			c := s.Configurations[i]
			got, err := s.ServiceConfig(c, urls)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ServiceConfig(%s) =\n%+v\nwant\n%+v", c.Name, got, tc.want)
			}
			// The result must not share slices with the scenario.
			if len(got.Pools) > 0 {
				got.Pools[0].Dependencies[0] = "X"
				if c.Pools[0].Dependencies[0] == "X" {
					t.Error("ServiceConfig aliases the scenario's pool dependencies")
				}
			}
		})
	}
	t.Run("missing url", func(t *testing.T) {
		_, err := s.ServiceConfig(s.Configurations[0], map[string]string{"A": "http://127.0.0.1:1"})
		if !errors.Is(err, ErrNoURL) || !strings.Contains(err.Error(), `dependency "B"`) {
			t.Errorf("error = %v, want ErrNoURL naming B", err)
		}
	})
	t.Run("invalid configuration", func(t *testing.T) {
		c := s.Configurations[2]
		c.Pools = c.Pools[:1] // B left in no pool
		_, err := s.ServiceConfig(c, urls)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `dependency "B" is in no pool`) {
			t.Errorf("error = %v, want ErrInvalid: B in no pool", err)
		}
	})
}
