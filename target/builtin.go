package target

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/service"
)

// BuiltIn starts the built-in sample service in this process, configured from the scenario's
// configuration. The zero value is ready to use.
type BuiltIn struct{}

var _ Starter = BuiltIn{}

// Start translates spec into a service config (the scenario's configuration with spec's
// dependency URLs), starts the service listening on spec.Addr and returns it. It does not block
// beyond the listen. It returns the scenario's validation error, a service construction error or
// the listen error; nothing is left running then.
func (BuiltIn) Start(_ context.Context, spec Spec) (Target, error) {
	cfg, err := spec.Scenario.ServiceConfig(spec.Configuration, spec.Dependencies)
	if err != nil {
		return nil, err
	}
	return StartService(cfg, spec.Addr)
}

// Service is the built-in service running in this process, as a Target.
type Service struct {
	svc *service.Service
	cfg service.Config
	url string

	mu   sync.Mutex
	prev *service.Snapshot // the previous Resources call's sample
}

var (
	_ Target    = (*Service)(nil)
	_ Describer = (*Service)(nil)
)

// StartService starts the built-in service with cfg on addr ("" means an ephemeral loopback
// port) and returns it once it listens. `bulkhead serve` without a scenario starts it this way.
func StartService(cfg service.Config, addr string) (*Service, error) {
	svc, err := service.New(cfg)
	if err != nil {
		return nil, err
	}
	url, err := svc.Start(addr)
	if err != nil {
		svc.Shutdown(context.Background())
		return nil, err
	}
	return &Service{svc: svc, cfg: cfg, url: url}, nil
}

// URL returns the base URL the service listens on.
func (s *Service) URL() string { return s.url }

// Resources returns the service's resource account now, read from its counters, with the exact
// figures of the interval since the previous call (service.Service.Sample, ResourcesSince): the
// first call gives point samples, each later one the interval that ends with it. It is the
// sampler's call: another caller would cut the sampler's intervals in two.
func (s *Service) Resources() []outcome.Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := s.svc.Sample()
	rs := snap.ResourcesSince(s.prev)
	s.prev = &snap
	return rs
}

// Close shuts the service down gracefully (see service.Service.Shutdown).
func (s *Service) Close(ctx context.Context) error { return s.svc.Shutdown(ctx) }

// Describe returns the service config it runs, with the dependencies' actual URLs.
func (s *Service) Describe() (json.RawMessage, error) { return json.Marshal(s.cfg) }

// Config returns the service config it runs.
func (s *Service) Config() service.Config { return s.cfg }
