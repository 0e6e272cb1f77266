package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

func TestDefaultPools(t *testing.T) {
	two := []string{"A", "B"}
	three := []string{"A", "B", "C"}
	sem := func(d string, n int) service.PoolConfig {
		return service.PoolConfig{Name: d, Kind: service.KindSemaphore, Size: n, Dependencies: []string{d}}
	}
	tests := []struct {
		name    string
		mode    service.Mode
		p       int
		deps    []string
		want    []service.PoolConfig
		wantErr string
	}{
		{"shared", service.ModeShared, 10, two, []service.PoolConfig{{Name: "shared", Kind: service.KindWorkers, Size: 10, QueueCapacity: 20, MaxWait: time.Second, Dependencies: two}}, ""},
		{"split P/2 of two", service.ModeSplit, 10, two, []service.PoolConfig{sem("A", 5), sem("B", 5)}, ""},
		{"split P/3 of three", service.ModeSplit, 12, three, []service.PoolConfig{sem("A", 4), sem("B", 4), sem("C", 4)}, ""},
		{"split of one holds all P", service.ModeSplit, 10, []string{"A"}, []service.PoolConfig{sem("A", 10)}, ""},
		// Issue 22: size 12 among three was 6 each, 18 in all against shared's 12.
		{"uneven split refused", service.ModeSplit, 10, three, nil, "10 slots do not split evenly among 3 dependencies: each would get 3, 9 in all against the shared layout's 10; give a size 3 divides (9 or 12)"},
		{"fewer slots than dependencies refused", service.ModeSplit, 1, two, nil, "give a size 2 divides (2)"},
		{"no slots refused", service.ModeShared, 0, two, nil, "at least 1"},
		{"none", service.ModeNone, 10, two, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultPools(tt.mode, tt.p, tt.deps, time.Second)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("DefaultPools(%s, %d) = %+v, %v; want %+v", tt.mode, tt.p, got, err, tt.want)
			}
			slots := 0
			for _, p := range got {
				slots += p.Size
			}
			if tt.mode != service.ModeNone && slots != tt.p {
				t.Errorf("%d slots in all, want P = %d", slots, tt.p)
			}
			cfg := service.Config{Mode: tt.mode, Pools: got, ClientTimeout: time.Second}
			for i, d := range tt.deps {
				cfg.Dependencies = append(cfg.Dependencies, service.DependencyConfig{Name: d, URL: "http://127.0.0.1:" + string(rune('1'+i))})
				cfg.Endpoints = append(cfg.Endpoints, service.EndpointConfig{Path: "/" + d, Calls: []string{d}})
			}
			if err := cfg.Validate(); err != nil {
				t.Errorf("the layout does not validate: %v", err)
			}
		})
	}
}

// A scenario whose `pools: default` cannot give the split layout the shared layout's slots is
// refused at the configuration's size, with the reason.
func TestDefaultPoolsRefusedInAFile(t *testing.T) {
	src := strings.Replace(edit(t, "  - {path: /b, calls: [B]}\n", "  - {path: /b, calls: [B]}\n  - {path: /c, calls: [C]}\n"),
		"  - name: none\n", "  - {name: split, mode: split, size: 10, pools: default}\n", 1)
	src = strings.Replace(src, "dependencies:\n", "dependencies:\n  - {name: C}\n", 1)
	_, err := Parse("t.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "configurations[0].size: `pools: default`: 10 slots do not split evenly among 3 dependencies") {
		t.Fatalf("err = %v", err)
	}
}
