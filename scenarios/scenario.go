package scenarios

import (
	"time"
)

// Scenario is one experiment, as loaded from a YAML file and validated. Amounts written relative
// to the client timeout ("0.9x timeout") are already resolved to durations here; the original text
// is kept in Resolved so the run records both.
type Scenario struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Seed feeds every random source of the run (jitter, Poisson arrivals). 0 means 1.
	Seed int64 `yaml:"seed"`
	// Timeout is the client timeout of every dependency call, identical in every configuration.
	Timeout        time.Duration   `yaml:"timeout"`
	Dependencies   []Dependency    `yaml:"dependencies"`
	Endpoints      []Endpoint      `yaml:"endpoints"`
	Configurations []Configuration `yaml:"configurations"`
	Load           Load            `yaml:"load"`
	Phases         []Phase         `yaml:"phases"`
	// Repetitions runs every configuration this many times. 0 means 1.
	Repetitions int `yaml:"repetitions"`
	// Limits are service-wide caps, applied in every configuration.
	Limits Limits `yaml:"limits"`
	// SampleEvery is the resource sampling period. 0 means 100ms.
	SampleEvery time.Duration `yaml:"sample_every"`

	// Path is the file the scenario was loaded from ("builtin:hypothesis" for embedded ones).
	Path string `yaml:"-"`
	// Resolved records relative amounts and their resolved values, e.g.
	// "phases[3].faults[0].latency": "0.9x timeout = 450ms".
	Resolved map[string]string `yaml:"-"`
}

// Dependency is one fake dependency server.
type Dependency struct {
	Name string `yaml:"name"`
	// Latency is the dependency's own base latency; Jitter adds a uniform [0, Jitter) from the
	// seeded source.
	Latency time.Duration `yaml:"latency"`
	Jitter  time.Duration `yaml:"jitter"`
	// Breaker, when set, puts a circuit breaker in front of this dependency in every configuration
	// that does not override it.
	Breaker *Breaker `yaml:"breaker"`
}

// Breaker mirrors service.BreakerConfig in YAML.
type Breaker struct {
	SlowCallThreshold time.Duration `yaml:"slow_call_threshold"`
	MinCalls          uint32        `yaml:"min_calls"`
	FailureRatio      float64       `yaml:"failure_ratio"`
	OpenTimeout       time.Duration `yaml:"open_timeout"`
}

// Endpoint is one inbound path of the service.
type Endpoint struct {
	Path     string   `yaml:"path"`
	Calls    []string `yaml:"calls"`
	Deadline string   `yaml:"deadline"` // per-call (default) | shared
	// Rate overrides Load.Rate for this endpoint (requests per second). 0 means Load.Rate.
	Rate float64 `yaml:"-"`
}

// Configuration is one pool layout to compare.
type Configuration struct {
	Name string `yaml:"name"`
	// Mode is shared, split or none.
	Mode  string `yaml:"mode"`
	Pools []Pool `yaml:"pools"`
	// Breakers, when true, keeps the dependencies' breakers on in this configuration; when false
	// they are off. Nil means on where a dependency declares one.
	Breakers *bool `yaml:"breakers"`
}

// Pool mirrors service.PoolConfig in YAML.
type Pool struct {
	Name         string        `yaml:"name"`
	Kind         string        `yaml:"kind"` // semaphore | workers
	Size         int           `yaml:"size"`
	Queue        int           `yaml:"queue"`
	MaxWait      time.Duration `yaml:"max_wait"`
	Dependencies []string      `yaml:"dependencies"`
}

// Load is the open-model load: one constant-rate (or Poisson) attack per endpoint across the
// whole time line.
type Load struct {
	// Rate is requests per second per endpoint, written "50/s" or "50/1s" or a plain number.
	Rate float64 `yaml:"-"`
	// Rates overrides Rate per endpoint path.
	Rates map[string]float64 `yaml:"-"`
	// Arrivals is constant (default) or poisson.
	Arrivals string `yaml:"arrivals"`
	// Timeout is the load generator's own request timeout. 0 means 4x the client timeout.
	Timeout time.Duration `yaml:"timeout"`
}

// Phase is one span of the time line with the faults it applies.
type Phase struct {
	Name     string        `yaml:"name"`
	Duration time.Duration `yaml:"duration"`
	Faults   []Fault       `yaml:"faults"`
}

// Fault is one fault in front of one dependency.
type Fault struct {
	Dependency string `yaml:"dependency"`
	// Type is latency | reset | timeout | http-error | down | bandwidth.
	Type     string        `yaml:"type"`
	Latency  time.Duration `yaml:"-"` // latency: added delay (may be written "0.9x timeout")
	Jitter   time.Duration `yaml:"-"`
	RateKBps int           `yaml:"rate_kbps"` // bandwidth
}

// Limits are optional service-wide caps.
type Limits struct {
	MaxInboundConns  int `yaml:"max_inbound_conns"`
	MaxOutboundConns int `yaml:"max_outbound_conns"`
}

// Duration returns the length of the whole time line.
func (s *Scenario) Duration() time.Duration {
	var d time.Duration
	for _, p := range s.Phases {
		d += p.Duration
	}
	return d
}
