package target

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/service"
)

// BuiltIn is the built-in sample service's kind: the system under test of a configuration that
// writes no target, started in this process from the plan's service config. The zero value is
// ready to use.
type BuiltIn struct{}

func init() { Register(BuiltIn{}) }

var _ Kind = BuiltIn{}

func (BuiltIn) Name() string { return BuiltInKind }
func (BuiltIn) Key() string  { return "" }
func (BuiltIn) Doc() string {
	return "the built-in sample service, built from the configuration's mode and pools (no target: written)"
}
func (BuiltIn) NewParams() any          { return nil }
func (BuiltIn) Check(*Config) []Problem { return nil }
func (BuiltIn) Remote() bool            { return false }

// Start starts the built-in service with spec.Service listening on spec.Addr and returns it. It
// does not block beyond the listen. It returns the service's validation or construction error
// or the listen error; nothing is left running then.
func (BuiltIn) Start(_ context.Context, spec Spec) (Target, error) {
	return StartService(spec.Service, spec.Addr)
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

// Record says it is the built-in service.
func (s *Service) Record() Record {
	return Record{Kind: BuiltInKind, Description: "the built-in service", URL: s.url}
}

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
