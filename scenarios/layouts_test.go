package scenarios

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

func TestDefaultPools(t *testing.T) {
	deps := []string{"A", "B"}
	tests := []struct {
		mode service.Mode
		p    int
		want []service.PoolConfig
	}{
		{service.ModeShared, 10, []service.PoolConfig{{Name: "shared", Kind: service.KindWorkers, Size: 10, QueueCapacity: 20, MaxWait: time.Second, Dependencies: deps}}},
		{service.ModeSplit, 10, []service.PoolConfig{
			{Name: "A", Kind: service.KindSemaphore, Size: 5, Dependencies: []string{"A"}},
			{Name: "B", Kind: service.KindSemaphore, Size: 5, Dependencies: []string{"B"}},
		}},
		{service.ModeSplit, 1, []service.PoolConfig{ // never below one permit
			{Name: "A", Kind: service.KindSemaphore, Size: 1, Dependencies: []string{"A"}},
			{Name: "B", Kind: service.KindSemaphore, Size: 1, Dependencies: []string{"B"}},
		}},
		{service.ModeNone, 10, nil},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			got := DefaultPools(tt.mode, tt.p, deps, time.Second)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DefaultPools(%s, %d) = %+v, want %+v", tt.mode, tt.p, got, tt.want)
			}
			cfg := service.Config{Mode: tt.mode, Pools: got, ClientTimeout: time.Second,
				Dependencies: []service.DependencyConfig{{Name: "A", URL: "http://127.0.0.1:1"}, {Name: "B", URL: "http://127.0.0.1:2"}},
				Endpoints:    []service.EndpointConfig{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}}}
			if err := cfg.Validate(); err != nil {
				t.Errorf("the layout does not validate: %v", err)
			}
		})
	}
}
