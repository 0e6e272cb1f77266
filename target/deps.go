package target

import (
	"fmt"

	"github.com/bulkheadlab/bulkhead/dependency"
)

// Fakes are the fake dependency servers a target calls, started from a scenario's dependencies.
type Fakes struct {
	// Servers and URLs are keyed by dependency name.
	Servers map[string]*dependency.Server
	URLs    map[string]string
}

// Server returns the fake of dependency name, nil when there is none (f nil, or a real
// upstream).
func (f *Fakes) Server(name string) *dependency.Server {
	if f == nil {
		return nil
	}
	return f.Servers[name]
}

// StartFakes starts one fake dependency server on an ephemeral loopback port for every
// dependency of deps that has no URL in given (each as configured, its Seed included), and
// returns them with their URLs. It does not block beyond the listens. On error it closes
// whatever it started.
func StartFakes(deps []dependency.Config, given map[string]string) (*Fakes, error) {
	f := &Fakes{Servers: map[string]*dependency.Server{}, URLs: map[string]string{}}
	for _, d := range deps {
		if _, ok := given[d.Name]; ok {
			continue
		}
		srv := dependency.New(d)
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
