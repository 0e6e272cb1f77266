package experiment

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/target"
)

// Engine is where a configuration run's parts run: its dependencies, Toxiproxy, the system under
// test and the load. The runner calls it in that order for each configuration run, then drives
// the time line itself (the faults, through the Injector it was given; the resource samples,
// through the Target) and judges what the load wrote. Local, the default, runs everything on this
// machine as the runner always has; an engine registered by another package (RegisterEngine)
// runs them elsewhere, such as in a Kubernetes namespace (package kube).
//
// An Engine's methods may be called for several configuration runs at once (Options.Parallel);
// p.Folder tells them apart.
type Engine interface {
	// Name is the engine's registered name, recorded in every manifest.
	Name() string
	// StartDependencies starts p's fake dependencies (those without a real upstream) and a
	// Toxiproxy with no proxies yet, and says where Toxiproxy reaches each dependency. On error
	// nothing it started is left running.
	StartDependencies(ctx context.Context, p *Plan, opts Options) (*Dependencies, error)
	// StartTarget starts p's system under test, told to call the dependencies at
	// spec.Dependencies (the proxies), and blocks until it is ready or ctx ends.
	StartTarget(ctx context.Context, p *Plan, spec target.Spec, opts Options) (target.Target, error)
	// LoadInRunner reports whether the load runs in the runner's process, writing the raw files
	// the runner opens (passed to StartLoad); otherwise the engine writes them into the
	// configuration folder itself.
	LoadInRunner(opts Options) bool
	// StartLoad starts p's load against the system under test at base, from a T0 every part of
	// the load shares, and returns it with the manifest's account of where it runs. raw is the
	// runner's raw files when LoadInRunner, nil otherwise. It returns once the load has started.
	StartLoad(ctx context.Context, p *Plan, dir, base string, raw []io.Writer, lopts []loadgen.Opt, opts Options) (Load, *rundir.Load, error)
}

// Load is a configuration's running load, wherever it runs: what the runner's time line, the
// progress board and the manifest use of it.
type Load interface {
	// T0 is the time line's zero (wall clock).
	T0() time.Time
	// Progress is each attack's live account; it does not block.
	Progress() []loadgen.Progress
	// Stop stops sending; it does not block.
	Stop()
	// Wait blocks until every result is written and returns the checks (loadgen.Run.Wait).
	Wait() ([]loadgen.Check, error)
	// Pooled is the check over every attack's sends; call it after Wait.
	Pooled() loadgen.Check
}

// Dependencies is what Engine.StartDependencies started for one configuration run.
type Dependencies struct {
	// Injector is the Toxiproxy the runner puts a proxy in front of each dependency on and
	// switches the faults through. The runner closes it.
	Injector proxy.Injector
	// Unmetered says why the dependencies' answers cannot be timed by a meter in the runner's
	// process in front of each proxy ("" when they can).
	Unmetered string
	// Upstreams maps every dependency's name to the host:port Toxiproxy dials it at.
	Upstreams map[string]string
	// Fakes are the fake dependencies running in the runner's process (nil when none run
	// here): a fault that makes a dependency answer an HTTP error needs one.
	Fakes *target.Fakes
	// Abort, when set, is registered for the second interrupt (the process then exits without
	// closing anything): it removes what would otherwise outlive the runner.
	Abort func(context.Context) error
	// Close stops what StartDependencies started, after the runner closed the Injector and the
	// target; it may be nil.
	Close func(context.Context) error
}

// EngineSettings are the settings of engines that run the parts elsewhere, from the command line.
type EngineSettings struct {
	// Namespace is where the parts go ("" the engine's default).
	Namespace string
	// Kubeconfig is a kubeconfig file ("" the usual places: $KUBECONFIG, ~/.kube/config, or the
	// in-cluster service account).
	Kubeconfig string
	// Image is the bulkhead image the parts run from.
	Image string
}

var (
	enginesMu sync.Mutex
	engines   = map[string]func(EngineSettings) (Engine, error){}
)

// RegisterEngine makes an engine available by name (OpenEngine, `--engine NAME`). It panics on a
// duplicate name, as a misuse at init time.
func RegisterEngine(name string, open func(EngineSettings) (Engine, error)) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if _, dup := engines[name]; dup || name == LocalEngine {
		panic("experiment: engine " + name + " registered twice")
	}
	engines[name] = open
}

// LocalEngine is the default engine's name.
const LocalEngine = "local"

// OpenEngine returns the engine registered as name ("" or "local": Local), with its settings. An
// unknown name is an error listing the known ones.
func OpenEngine(name string, s EngineSettings) (Engine, error) {
	if name == "" || name == LocalEngine {
		return Local{}, nil
	}
	enginesMu.Lock()
	open, ok := engines[name]
	known := []string{LocalEngine}
	for n := range engines {
		known = append(known, n)
	}
	enginesMu.Unlock()
	if !ok {
		sort.Strings(known[1:])
		return nil, fmt.Errorf("engine %q: want one of %s", name, strings.Join(known, ", "))
	}
	return open(s)
}

// engineOf is the engine of a run: opts.Engine, or Local.
func engineOf(opts Options) Engine {
	if opts.Engine != nil {
		return opts.Engine
	}
	return Local{}
}
