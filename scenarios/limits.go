package scenarios

import "time"

// Bounds on what a scenario file may ask for, so that everything that validates can run on one
// machine (or `bulkhead run` says, before starting, why this machine is too small: see Estimate).
// Each error that enforces one states the bound. What the service is made of is bounded by the
// service's own limits (service.MaxPoolSize, service.MaxDependencies, ...), checked by
// service.Config.Validate.
const (
	// MaxFileSize bounds the bytes of a scenario file.
	MaxFileSize = 4 << 20
	// MaxNodes bounds the YAML nodes a file may expand to: aliases followed, `count` families and
	// `for_each` templates copied. The largest built-in scenario expands to about 20,000.
	MaxNodes = 200_000
	// MaxConfigurations and MaxPhases bound those lists.
	MaxConfigurations = 100
	MaxPhases         = 1_000
	// MaxRepetitions bounds repetitions.
	MaxRepetitions = 1_000
	// MaxTimeline bounds the whole time line (the sum of the phases' durations).
	MaxTimeline = 1_000 * time.Hour
	// MinRate is the lowest rate an endpoint may run at (one request per 1000 s); 0 is allowed
	// only as a phase's silence (Phase.Rates). The highest is loadgen.MaxRate.
	MinRate = 1e-3
	// MinSampleEvery bounds how often resources are sampled.
	MinSampleEvery = time.Millisecond
	// MaxLoadTimeout bounds the load generator's own request timeout.
	MaxLoadTimeout = 4 * time.Hour
)
