package scenarios

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/dependency"
	"github.com/bulkheadlab/bulkhead/service"
)

// ServiceConfig returns the service's config for one configuration of the scenario, with every
// dependency's URL taken from depURLs (normally the Toxiproxy listener in front of it); a nil
// depURLs gives every dependency its PlaceholderURL (the config a run plans with, filled with
// service.Config.WithURLs once the proxies listen).
// ClientTimeout is the scenario's Timeout, the limits are the scenario's, and a dependency's
// breaker is on when it declares one and c.Breakers is nil or true. It does not block and does
// not change the scenario. It returns an error matching ErrInvalid when the scenario with c as its
// only configuration does not validate, or ErrNoURL when a dependency has no URL in depURLs; the
// returned Config is then the zero value. The result shares no slices with the scenario.
func (s *Scenario) ServiceConfig(c Configuration, depURLs map[string]string) (service.Config, error) {
	one := *s
	one.Configurations = []Configuration{c}
	one.Claims = nil                           // claims name the other configurations too; they are the report's business
	one.Roles.Shared, one.Roles.Split = "", "" // so do the roles
	if err := one.Validate(); err != nil {
		return service.Config{}, fmt.Errorf("configuration %q: %w", c.Name, err)
	}
	if depURLs == nil {
		return s.serviceConfig(c, PlaceholderURL), nil
	}
	for _, d := range s.Dependencies {
		if depURLs[d.Name] == "" {
			return service.Config{}, fmt.Errorf("configuration %q: dependency %q: %w", c.Name, d.Name, ErrNoURL)
		}
	}
	return s.serviceConfig(c, func(name string) string { return depURLs[name] }), nil
}

// serviceConfig builds configuration c's service config as it is, without checking it, the
// dependencies' URLs taken from url. The scenario's dependencies, endpoints and pools are the
// service's own types, so this only picks them, fills the defaults and copies the slices.
func (s *Scenario) serviceConfig(c Configuration, url func(name string) string) service.Config {
	mode := c.Mode
	if mode == "" {
		mode = inferMode(c.Pools, s.DependencyNames())
	}
	breakers := c.Breakers == nil || *c.Breakers
	cfg := service.Config{
		Mode:             service.Mode(mode),
		ClientTimeout:    s.Timeout,
		MaxInboundConns:  s.Limits.MaxInboundConns,
		MaxOutboundConns: s.Limits.MaxOutboundConns,
	}
	for _, d := range s.Dependencies {
		dc := d.DependencyConfig
		dc.URL = url(d.Name)
		if dc.Breaker != nil && breakers {
			b := *dc.Breaker
			dc.Breaker = &b
		} else {
			dc.Breaker = nil
		}
		cfg.Dependencies = append(cfg.Dependencies, dc)
	}
	for _, p := range c.Pools {
		pc := p.PoolConfig.WithDefaults()
		pc.Dependencies = slices.Clone(pc.Dependencies)
		cfg.Pools = append(cfg.Pools, pc)
	}
	for _, e := range s.Endpoints {
		ec := e.EndpointConfig
		ec.Calls = slices.Clone(ec.Calls)
		if ec.Deadline == "" {
			ec.Deadline = DefaultDeadline
		}
		ec.Inbound = inboundConfig(c, mode, e)
		cfg.Endpoints = append(cfg.Endpoints, ec)
	}
	return cfg
}

// FakeDependencies returns the fake dependency servers' configs of the scenario's dependencies,
// in order, each seeded with seed(i) (i its index): what target.StartFakes starts for those a
// run is not given an upstream for.
func (s *Scenario) FakeDependencies(seed func(i int) int64) []dependency.Config {
	out := make([]dependency.Config, len(s.Dependencies))
	for i, d := range s.Dependencies {
		out[i] = dependency.Config{Name: d.Name, Latency: d.Latency, Jitter: d.Jitter, Seed: seed(i)}
	}
	return out
}

// Dir is the folder the scenario's relative paths are relative to: its file's folder, "" for a
// built-in scenario (the working directory).
func (s *Scenario) Dir() string {
	if s.Path == "" || strings.HasPrefix(s.Path, "builtin:") {
		return ""
	}
	return filepath.Dir(s.Path)
}
