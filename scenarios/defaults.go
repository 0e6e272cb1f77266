package scenarios

import (
	"fmt"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

// Defaults filled by Load for fields left out of a scenario file.
const (
	DefaultSeed        int64 = 1
	DefaultRepetitions       = 1
	DefaultSampleEvery       = 100 * time.Millisecond
	// DefaultLoadTimeoutFactor times the client timeout is the load generator's own timeout.
	DefaultLoadTimeoutFactor = 4
	DefaultArrivals          = ArrivalsConstant
	DefaultDeadline          = service.DeadlinePerCall
)

// Arrival processes of the load.
const (
	ArrivalsConstant = "constant"
	ArrivalsPoisson  = "poisson"
)

// DependencyNames returns the dependency names in file order.
func (s *Scenario) DependencyNames() []string {
	names := make([]string, len(s.Dependencies))
	for i, d := range s.Dependencies {
		names[i] = d.Name
	}
	return names
}

// complete fills defaults, expands `pools: default` and infers modes. Problems it finds (a
// shorthand it cannot expand) go to p.
func (s *Scenario) complete(p *problems, defaultPools map[int]string) {
	if s.Resolved == nil {
		s.Resolved = map[string]string{}
	}
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	if s.Repetitions == 0 {
		s.Repetitions = DefaultRepetitions
	}
	if s.SampleEvery == 0 {
		s.SampleEvery = DefaultSampleEvery
	}
	if s.Load.Arrivals == "" {
		s.Load.Arrivals = DefaultArrivals
	}
	if s.Load.Timeout == 0 && s.Timeout > 0 {
		s.Load.Timeout = DefaultLoadTimeoutFactor * s.Timeout
		s.Resolved["load.timeout"] = fmt.Sprintf("default %dx timeout = %v", DefaultLoadTimeoutFactor, s.Load.Timeout)
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		if e.Deadline == "" {
			e.Deadline = DefaultDeadline
		}
		if e.Rate != 0 {
			if s.Load.Rates == nil {
				s.Load.Rates = map[string]float64{}
			}
			s.Load.Rates[e.Path] = e.Rate
		} else {
			e.Rate = s.Load.Rate
		}
	}
	deps := s.DependencyNames()
	for i := range s.Configurations {
		c := &s.Configurations[i]
		if path, ok := defaultPools[i]; ok {
			s.expandDefaultPools(p, c, path, deps)
		}
		for j := range c.Pools {
			c.Pools[j].PoolConfig = c.Pools[j].PoolConfig.WithDefaults()
		}
		if c.Mode == "" {
			c.Mode = inferMode(c.Pools, deps)
		}
	}
}

func (s *Scenario) expandDefaultPools(p *problems, c *Configuration, path string, deps []string) {
	cfg := parentPath(path)
	switch service.Mode(c.Mode) {
	case service.ModeShared, service.ModeSplit:
	default:
		p.add(join(cfg, "mode"), "`pools: default` needs mode shared or split, got %q", c.Mode)
		return
	}
	if c.Size <= 0 {
		p.add(join(cfg, "size"), "`pools: default` needs size > 0 (the pool budget P), got %d", c.Size)
		return
	}
	if s.Timeout <= 0 || len(deps) == 0 {
		return // reported elsewhere; nothing sensible to expand
	}
	pools, err := defaultPools(c.Mode, c.Size, deps, s.Timeout)
	if err != nil {
		p.add(join(cfg, "size"), "`pools: default`: %v", err)
		return
	}
	c.Pools = pools
	parts := make([]string, len(c.Pools))
	for i, pl := range c.Pools {
		parts[i] = pl.String()
	}
	s.Resolved[path] = fmt.Sprintf("default %s P=%d = %s (%d slots in all)", c.Mode, c.Size, strings.Join(parts, "; "), c.Size)
}

// inferMode is the mode a configuration without one has: no pools = none, a single pool covering
// every dependency = shared, otherwise split.
func inferMode(pools []Pool, deps []string) string {
	switch {
	case len(pools) == 0:
		return string(service.ModeNone)
	case len(pools) == 1 && coversAll(pools[0], deps):
		return string(service.ModeShared)
	}
	return string(service.ModeSplit)
}

func coversAll(p Pool, deps []string) bool {
	have := map[string]bool{}
	for _, d := range p.Dependencies {
		have[d] = true
	}
	for _, d := range deps {
		if !have[d] {
			return false
		}
	}
	return true
}
