package target

import (
	"fmt"

	"github.com/bulkheadlab/bulkhead/dependency"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// Fakes are the fake dependency servers a target calls, started from a scenario's dependencies.
type Fakes struct {
	// Servers and URLs are keyed by dependency name.
	Servers map[string]*dependency.Server
	URLs    map[string]string
}

// StartFakes starts one fake dependency server on an ephemeral loopback port for every
// dependency of deps that has no URL in given, each seeded with seed(i) (i its index in deps),
// and returns them with their URLs. It does not block beyond the listens. On error it closes
// whatever it started.
func StartFakes(deps []scenarios.Dependency, given map[string]string, seed func(i int) int64) (*Fakes, error) {
	f := &Fakes{Servers: map[string]*dependency.Server{}, URLs: map[string]string{}}
	for i, d := range deps {
		if _, ok := given[d.Name]; ok {
			continue
		}
		srv := dependency.New(dependency.Config{Name: d.Name, Latency: d.Latency, Jitter: d.Jitter, Seed: seed(i)})
		u, err := srv.Start("")
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("start dependency %s: %w", d.Name, err)
		}
		f.Servers[d.Name], f.URLs[d.Name] = srv, u
	}
	return f, nil
}

// Close stops every fake dependency.
func (f *Fakes) Close() {
	for _, s := range f.Servers {
		s.Close()
	}
}
