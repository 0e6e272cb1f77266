package scenarios

import (
	"fmt"
	"slices"

	"github.com/bulkheadlab/bulkhead/service"
)

// ServiceConfig translates one configuration of the scenario into the service's config, with
// every dependency's URL taken from depURLs (normally the Toxiproxy listener in front of it).
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
		url := depURLs[d.Name]
		if url == "" {
			return service.Config{}, fmt.Errorf("configuration %q: dependency %q: %w", c.Name, d.Name, ErrNoURL)
		}
		dc := service.DependencyConfig{Name: d.Name, URL: url}
		if d.Breaker != nil && breakers {
			dc.Breaker = &service.BreakerConfig{
				SlowCallThreshold: d.Breaker.SlowCallThreshold,
				MinCalls:          d.Breaker.MinCalls,
				FailureRatio:      d.Breaker.FailureRatio,
				OpenTimeout:       d.Breaker.OpenTimeout,
				Interval:          d.Breaker.Interval,
			}
		}
		cfg.Dependencies = append(cfg.Dependencies, dc)
	}
	for _, p := range c.Pools {
		kind := p.Kind
		if kind == "" {
			kind = DefaultPoolKind
		}
		cfg.Pools = append(cfg.Pools, service.PoolConfig{
			Name:          p.Name,
			Kind:          service.PoolKind(kind),
			Size:          p.Size,
			QueueCapacity: p.Queue,
			MaxWait:       p.MaxWait,
			Dependencies:  slices.Clone(p.Dependencies),
		})
	}
	for _, e := range s.Endpoints {
		dl := e.Deadline
		if dl == "" {
			dl = DefaultDeadline
		}
		cfg.Endpoints = append(cfg.Endpoints, service.EndpointConfig{
			Path: e.Path, Calls: slices.Clone(e.Calls), Deadline: service.Deadline(dl),
			Inbound: inboundConfig(c, mode, e),
		})
	}
	return cfg, nil
}
