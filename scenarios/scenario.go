package scenarios

import (
	"math"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/service"
)

// Scenario is one experiment, as loaded from a YAML file and validated. Amounts written relative
// to the client timeout ("0.9x timeout") are already resolved to durations here; the original text
// is kept in Resolved so the run records both.
//
// The yaml tags name the keys of the scenario file, and the scenario tags what else the loader
// needs to know of a key (required, a rate, ...): Load decodes through these types by reflection,
// node by node so that every problem has its file, line and field (decode.go). yaml.Marshal of a
// loaded Scenario writes a file that loads back to the same values, with every default and
// relative amount resolved.
type Scenario struct {
	// Name names the scenario: the run folder is <timestamp>-<name>.
	Name string `yaml:"name" scenario:"required"`
	// Description says what the scenario tests, for list and the report.
	Description string `yaml:"description,omitempty"`
	// Seed feeds every random source of the run (jitter, Poisson arrivals). 0 means 1.
	Seed int64 `yaml:"seed"`
	// Timeout is the client timeout of every dependency call, identical in every configuration.
	Timeout        time.Duration   `yaml:"timeout" scenario:"required,absolute"`
	Dependencies   []Dependency    `yaml:"dependencies" scenario:"required"`
	Endpoints      []Endpoint      `yaml:"endpoints" scenario:"required"`
	Configurations []Configuration `yaml:"configurations" scenario:"required"`
	Load           LoadSpec        `yaml:"load" scenario:"required"`
	Phases         []Phase         `yaml:"phases" scenario:"required"`
	// Repetitions runs every configuration this many times. 0 means 1.
	Repetitions int `yaml:"repetitions"`
	// Limits are service-wide caps, applied in every configuration.
	Limits Limits `yaml:"limits,omitempty"`
	// SampleEvery is the resource sampling period. 0 means 100ms.
	SampleEvery time.Duration `yaml:"sample_every" scenario:"nonzero,default=100ms"`
	// Claims are the seed's claims as data, judged by the report on the run's numbers (see
	// Claim): those the tests derive (marked with Claim.Test) and those written in claims:.
	Claims []claim.Claim `yaml:"claims,omitempty"`
	// Tests are the named tests whose claims the loader derives from Roles (see Test).
	Tests []Test `yaml:"tests,omitempty"`
	// Roles name the parts the seed-004 claims and the sizing sweep rest on (which
	// configuration is shared, which endpoint unaffected, which phase the baseline ...).
	Roles claim.Roles `yaml:"roles,omitempty"`
	// NoiseFloor declares, per metric, how far a figure of one run may move from run to run
	// (a 95% half-width: "10%" of the figure, or a number in the metric's unit). With one
	// repetition a claim comparing configurations is decided only beyond it; with two or more
	// the repetitions measure it and it is not used. Every claim carries it (AllClaims).
	NoiseFloor map[string]claim.Floor `yaml:"noise_floor,omitempty"`
	// Sweep is the default grid of `bulkhead sweep` over this scenario (see SweepSpec); nil when
	// the file has no sweep: block. It plays no part in `bulkhead run`.
	Sweep *SweepSpec `yaml:"sweep,omitempty"`

	// Path is the file the scenario was loaded from ("builtin:hypothesis" for embedded ones).
	Path string `yaml:"-"`
	// Resolved records relative amounts, defaults derived from other fields and pool shorthands,
	// keyed by field path, e.g. "phases[3].faults[0].latency": "0.9x timeout = 450ms".
	Resolved map[string]string `yaml:"-"`
	// Raw is the file's bytes as loaded (what a run copies to scenario.yaml).
	Raw []byte `yaml:"-"`

	// lines maps field paths to the line they were written on, so that Validate can point at the
	// file after the runner changed a value. Nil for a scenario built in Go.
	lines map[string]int
}

// AllClaims returns the claims the run is judged by, each carrying the scenario's noise floors:
// what the runner records in claims.json.
func (s *Scenario) AllClaims() []claim.Claim {
	out := slices.Clone(s.Claims)
	for i := range out {
		out[i].NoiseFloor = s.NoiseFloor
	}
	return out
}

// Dependency is one dependency: the service's own DependencyConfig (name and breaker; a scenario
// file writes no URL, the runner fills it with the proxy in front of the dependency) and how the
// fake dependency server behind it answers.
type Dependency struct {
	// DependencyConfig's Breaker, when set, puts a circuit breaker in front of this dependency in
	// every configuration that does not turn breakers off.
	service.DependencyConfig `yaml:",inline"`
	// Latency is the dependency's own base latency; Jitter adds a uniform [0, Jitter) from the
	// seeded source. Both in [0, service.MaxDuration].
	Latency time.Duration `yaml:"latency"`
	Jitter  time.Duration `yaml:"jitter"`
	// Upstream, when set, is a real server (host:port) the dependency's proxy forwards to,
	// instead of a built-in fake; Latency and Jitter are then not used.
	Upstream string `yaml:"upstream,omitempty"`
	// Listen, when set, is the address (host:port) the dependency's Toxiproxy proxy listens on,
	// so a service can be configured before the run; else an ephemeral loopback port.
	Listen string `yaml:"listen,omitempty"`
}

// Endpoint is one inbound path of the service: the service's own EndpointConfig (path, calls,
// deadline and, for an accept-fast endpoint, its inbound shape; which pool processes it is a
// matter of the configuration, see Pool.Inbound) and the rate the load generator sends at.
type Endpoint struct {
	service.EndpointConfig `yaml:",inline"`
	// Rate is this endpoint's request rate per second. Written `rate: 20/s` on the endpoint, it
	// overrides load.rate; Load fills it with Load.Rate otherwise, so after Load it is always > 0.
	// A phase's `rates:` overrides it during that phase (see Phase.Rates).
	Rate float64 `yaml:"rate" scenario:"rate"`
}

// Configuration is one pool layout to compare.
type Configuration struct {
	// Name names the configuration (its folder in the run folder, and what claims and roles
	// name): a plain name.
	Name string `yaml:"name" scenario:"required"`
	// Mode is shared, split or none. Load infers it when not written: no pools = none, one pool
	// covering every dependency = shared, anything else = split.
	Mode  string `yaml:"mode"`
	Pools []Pool `yaml:"pools"`
	// Breakers, when true, keeps the dependencies' breakers on in this configuration; when false
	// they are off. Nil means on where a dependency declares one.
	Breakers *bool `yaml:"breakers,omitempty"`
	// Size is P in the shorthand `pools: default` (see DefaultPools). Load expands the shorthand
	// into Pools and records the expansion in Scenario.Resolved; Size is then informational and is
	// not marshalled, since Pools is.
	Size int `yaml:"-" scenario:"key=size"`
	// Target is the system under test when it is not the built-in service: a command the runner
	// starts or a URL already running. Nil means the built-in service; Mode and Pools then
	// describe the target for the report instead of building it.
	Target *Target `yaml:"target,omitempty"`
}

// Pool is one pool of a configuration: the service's own PoolConfig, and the inbound endpoints
// it processes.
type Pool struct {
	service.PoolConfig `yaml:",inline"`
	// Inbound lists the inbound endpoints (by path) whose processing takes slots of this pool:
	// the inbound bulkhead. A pool may hold inbound endpoints only (dependencies: []).
	Inbound []string `yaml:"inbound,omitempty"`
}

// MarshalYAML writes the pool as one flat mapping: the service pool with its kind's parameters,
// then inbound.
func (p Pool) MarshalYAML() (any, error) {
	return p.PoolConfig.MarshalYAMLWith(struct {
		Inbound []string `yaml:"inbound,omitempty"`
	}{p.Inbound})
}

// LoadSpec is the open-model load: one constant-rate (or Poisson) attack per endpoint across the
// whole time line. (Named LoadSpec, not Load, because the package's Load function reads a file.)
type LoadSpec struct {
	// Rate is requests per second per endpoint, written "50/s" or "50/1s" or a plain number.
	Rate float64 `yaml:"rate" scenario:"required,rate"`
	// Rates holds the endpoints that set their own `rate:`, by path (the effective rate of every
	// endpoint is Endpoint.Rate). Filled by Load; not a key of the file.
	Rates map[string]float64 `yaml:"-"`
	// Arrivals is constant (default) or poisson.
	Arrivals string `yaml:"arrivals"`
	// Timeout is the load generator's own request timeout. 0 means 4x the client timeout.
	Timeout time.Duration `yaml:"timeout"`
	// Drift, with constant arrivals and several endpoints, is how long each further endpoint's
	// stream takes to drift one whole interval ahead of the first endpoint's: it sends 1/drift
	// requests a second more than its rate (50.1/s for 50/s and 10s), so that within every phase
	// a few drifts long the streams meet at every offset, not only at the one a repetition starts
	// from. 0 keeps each repetition at its own fixed offset. At least 1s.
	Drift time.Duration `yaml:"drift,omitempty" scenario:"absolute"`
	// LagLimit is the send-lag p99 above which a configuration's run is invalid. 0 means the
	// load generator's default (1 ms). A scenario whose effects are measured in hundreds of
	// milliseconds may declare a looser bound, with its reason in a comment; the run records it.
	LagLimit time.Duration `yaml:"lag_limit,omitempty" scenario:"absolute"`
}

// Phase is one span of the time line with the faults it applies.
type Phase struct {
	// Name names the phase, unique in the time line (what claims and roles name).
	Name string `yaml:"name" scenario:"required"`
	// Duration is how long the phase lasts; the phases follow each other on one time line.
	Duration time.Duration `yaml:"duration" scenario:"required"`
	// Faults are the faults applied during the phase (see package faults for the types, their
	// keys and what each installs). Amounts written relative to the timeout are resolved.
	Faults []faults.Fault `yaml:"faults,omitempty"`
	// Rates overrides endpoints' rates (requests per second, by path) during this phase, e.g. a
	// webhook burst at several times the normal rate; 0 silences an endpoint for the phase.
	Rates map[string]float64 `yaml:"rates,omitempty" scenario:"rate,zero"`
}

// Limits are optional service-wide caps. 0 means no cap.
type Limits struct {
	// MaxInboundConns caps the built-in service's concurrent inbound connections.
	MaxInboundConns int `yaml:"max_inbound_conns,omitempty"`
	// MaxOutboundConns caps the built-in service's connections to all dependencies together.
	MaxOutboundConns int `yaml:"max_outbound_conns,omitempty"`
}

// Duration returns the length of the whole time line. It saturates at the largest Duration
// instead of overflowing (a scenario that validates is far below it, see MaxTimeline).
func (s *Scenario) Duration() time.Duration {
	var d time.Duration
	for _, p := range s.Phases {
		switch {
		case p.Duration > 0 && d > math.MaxInt64-p.Duration:
			return math.MaxInt64
		case p.Duration < 0 && d < math.MinInt64-p.Duration:
			return math.MinInt64
		}
		d += p.Duration
	}
	return d
}
