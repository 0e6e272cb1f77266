// Package target is the seam between the runner and the system under test. The runner starts a
// Target for each configuration run through a Starter, tells it where the (proxied) dependencies
// are, sends the load to its base URL, samples its resources while the time line runs, and closes
// it. The built-in sample service running in this process is one Starter (BuiltIn); an external
// process or a remote URL is another implementation of the same two interfaces, added without
// touching the runner.
//
// How the other kinds fit: a command target's Starter runs the user's command (under the
// process supervisor), passing Spec.Addr and every Spec.Dependencies address (as flags or
// environment variables), waits for its readiness check, and returns a Target whose Resources
// scrape its metrics and whose Close stops the process; a URL target's Starter checks the URL
// answers and returns a Target whose Close does nothing. The runner chooses the Starter
// (experiment.Options.Target) and needs nothing else from either.
package target

import (
	"context"
	"encoding/json"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// Target is one running system under test, serving one configuration.
type Target interface {
	// URL is the base URL the load generator sends to, without a trailing slash
	// ("http://127.0.0.1:PORT"); an endpoint's path is appended to it.
	URL() string
	// Resources returns the target's scarce resources now (pool slots, queues, connections ...).
	// It does not block on the network for the built-in service; a target that cannot report
	// resources returns nil. It is called from the sampler while load runs, so it must be safe
	// for concurrent use.
	Resources() []outcome.Resource
	// Close stops the target, waiting for in-flight requests until ctx ends, and releases
	// everything it started. It returns ctx's error when requests were still running.
	Close(ctx context.Context) error
}

// Spec is what a target is started from: the configuration to serve and where its dependencies
// are.
type Spec struct {
	// Scenario is the scenario as run (after overrides).
	Scenario *scenarios.Scenario
	// Configuration is the one configuration (pool layout) this target serves.
	Configuration scenarios.Configuration
	// Dependencies maps every dependency's name to the URL the target must call it at: normally
	// the Toxiproxy listener in front of the fake dependency, so faults reach the target.
	Dependencies map[string]string
	// Addr is the address to listen on; "" means an ephemeral loopback port.
	Addr string
	// Folder is the configuration's run folder, where a command target's stdout and stderr go;
	// "" discards them.
	Folder string
}

// Starter starts targets. Start blocks until the target is ready to serve (listening, or
// answering its readiness check) or ctx ends; on error nothing it started is left running.
type Starter interface {
	Start(ctx context.Context, spec Spec) (Target, error)
}

// Describer is implemented by targets that can record their own configuration as they run it
// (the built-in service records its service config); the runner writes it to the manifest.
type Describer interface {
	Describe() (json.RawMessage, error)
}
