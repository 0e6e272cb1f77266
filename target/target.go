// Package target is the seam between the runner and the system under test. A system under test
// is of a registered Kind (kind.go): the built-in sample service running in this process
// (builtin.go), a command the runner starts (command.go), a service already running at a URL
// (url.go), or a container image an engine that runs images starts (image.go; the local engine
// refuses it). Each kind is one file: the scenario keys it takes beside the common ones of Config,
// its checks, how it starts and what it records. The loader decodes a target through the kind's
// parameters, the runner starts it through Kind.Start, the manifest records its Record, and the
// report prints the Record's description: none of them names a concrete kind, so a new kind is
// its file and its test, added without touching the runner (the Kubernetes engine asks a kind
// whether it is Remote, and renders an image target's container from ResolveImage).
//
// For each configuration run the runner starts a Target, tells it where the (proxied)
// dependencies are (Spec.Dependencies), sends the load to its base URL, samples its resources
// while the time line runs, and closes it.
package target

import (
	"context"
	"encoding/json"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/service"
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
	// Record says what the target is, as the manifest records it.
	Record() Record
	// Close stops the target, waiting for in-flight requests until ctx ends, and releases
	// everything it started. It returns ctx's error when requests were still running.
	Close(ctx context.Context) error
}

// Spec is what a target is started from: the configuration to serve and where its dependencies
// are.
type Spec struct {
	// Name is the configuration's name, for messages.
	Name string
	// Config is the target as the scenario writes it; nil for the built-in service.
	Config *Config
	// Service is the built-in service's config for this configuration, its dependencies' URLs
	// filled with Dependencies (the plan resolves it once; see service.Config.WithURLs). Only the
	// built-in kind reads it.
	Service service.Config
	// Dependencies maps every dependency's name to the URL the target must call it at: normally
	// the proxy in front of the dependency, so faults reach the target.
	Dependencies map[string]string
	// Dir is the folder a target's relative paths (a command's dir) are relative to: the
	// scenario file's folder; "" means the working directory.
	Dir string
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

// Checker is implemented by targets that can fail on their own while the load runs (a child
// that exits, a metrics endpoint that stops answering); the runner records Problems in the
// manifest at the end of the run.
type Checker interface {
	Problems() []string
}
