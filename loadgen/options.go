package loadgen

import (
	"fmt"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// Defaults of the options; reuse them as flag defaults.
const (
	// DefaultTimeout is the load generator's own request timeout (vegeta's default).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxWorkers caps the concurrent requests of one attack. It is generous on purpose:
	// unlimited workers collapse silently under CPU contention, and a small cap turns the open
	// model into a closed loop that drops sends. The self-check reports either failure.
	DefaultMaxWorkers uint64 = 10000
	// DefaultConnections is the number of idle connections kept per host.
	DefaultConnections = 10000
	// DefaultLagLimit is the send lag p99 above which a run is invalid.
	DefaultLagLimit = time.Millisecond
	// DefaultKeepAlive reuses connections.
	DefaultKeepAlive = true
)

// StopGrace is how long after the duration an attack may still be sending its last scheduled
// hits (late, which the lag reports) before it is stopped and its unsent hits count as dropped.
const StopGrace = 250 * time.Millisecond

// MinLagSamples is the fewest sends for which an attack's own send-lag p99 is judged; sparser
// attacks are judged by Run.Pooled.
const MinLagSamples = 1000

// MaxStartSkew bounds how long after T0 any attack may start its clock. The attacks are started
// one after another right after T0 (500 of them take 2-8 ms here); a larger skew means the
// process was starved at the start and the endpoints' time lines are out of step with the
// faults, so the run is invalid.
const MaxStartSkew = 100 * time.Millisecond

// maxBody bounds the response bytes read into memory per result; the rest is drained for
// keep-alive and not stored (bodies are dropped from stored results).
const maxBody = 4096

// Opt configures a Run. Options are independent of their order.
type Opt func(*options)

type options struct {
	timeout     time.Duration
	maxWorkers  uint64
	connections int
	lagLimit    time.Duration
	keepAlive   bool
	noWarm      bool
	classify    outcome.Classifier
	startAt     time.Time
}

func defaultOptions() options {
	return options{
		timeout:     DefaultTimeout,
		maxWorkers:  DefaultMaxWorkers,
		connections: DefaultConnections,
		lagLimit:    DefaultLagLimit,
		keepAlive:   DefaultKeepAlive,
		classify:    outcome.Classify,
	}
}

func (o options) validate() error {
	switch {
	case o.timeout <= 0:
		return fmt.Errorf("timeout %v must be positive: %w", o.timeout, ErrInvalid)
	case o.maxWorkers == 0:
		return fmt.Errorf("max workers must be positive: %w", ErrInvalid)
	case o.connections <= 0:
		return fmt.Errorf("connections %d must be positive: %w", o.connections, ErrInvalid)
	case o.lagLimit <= 0:
		return fmt.Errorf("lag limit %v must be positive: %w", o.lagLimit, ErrInvalid)
	}
	return nil
}

// WithTimeout sets the load generator's own request timeout, from sending to the last body byte
// (default DefaultTimeout). It must be positive.
func WithTimeout(d time.Duration) Opt { return func(o *options) { o.timeout = d } }

// WithMaxWorkers caps the concurrent requests of each attack (default DefaultMaxWorkers). When the
// cap is reached the attack cannot send on time: the Check reports the lag and the dropped sends.
// It must be positive.
func WithMaxWorkers(n uint64) Opt { return func(o *options) { o.maxWorkers = n } }

// WithConnections sets the idle connections kept per host (default DefaultConnections). It does
// not cap open connections. It must be positive.
func WithConnections(n int) Opt { return func(o *options) { o.connections = n } }

// WithoutWarm makes Start open no connection before T0 (see warm): every connection is dialed by
// the send that needs it. For a system under test that caps its inbound connections, where
// connections opened ahead would hold places the load would not have taken.
func WithoutWarm() Opt { return func(o *options) { o.noWarm = true } }

// WithLagLimit sets the send lag p99 above which a Check is invalid (default DefaultLagLimit). It
// must be positive.
func WithLagLimit(d time.Duration) Opt { return func(o *options) { o.lagLimit = d } }

// WithClassifier sets how a result is classed (the X-Loadgen-Class of the raw file; default
// outcome.Classify, the built-in service's contract). A target that does not send our headers
// passes its outcome.Mapping's Classify. A nil c means the default.
func WithClassifier(c outcome.Classifier) Opt {
	return func(o *options) {
		if c != nil {
			o.classify = c
		}
	}
}

// WithStartAt makes Start wait, once its connections are warm, until the wall-clock instant t
// and take it as T0: the time line's zero that several load generators (the shards of one run,
// Stripe) share, so that their sends are on one common schedule. When t has already passed once
// the connections are warm, the run starts at once and T0 is still t: every check's StartSkew
// then says how late it started, and past MaxStartSkew the check is invalid. The zero t means now
// (the default). With a common start, the attacks start a moment before t and lay their
// schedule from t itself, so each send's lag in the check is against the common schedule.
func WithStartAt(t time.Time) Opt { return func(o *options) { o.startAt = t } }

// WithKeepAlive turns connection reuse on or off (default DefaultKeepAlive).
func WithKeepAlive(on bool) Opt { return func(o *options) { o.keepAlive = on } }
