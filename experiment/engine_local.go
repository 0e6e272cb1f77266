package experiment

import (
	"context"
	"fmt"
	"io"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/target"
)

// Local is the default Engine: every part on this machine. The fake dependencies run in the
// runner's process, Toxiproxy is embedded (or the external server at Options.Toxiproxy), the
// system under test is Options.Target or the configuration's target kind (target.Of), and the
// load runs in the layout of Options.Load (in this process, or `bulkhead attack` children,
// Options.Shards of them).
type Local struct{}

var _ Engine = Local{}

// Name returns "local".
func (Local) Name() string { return LocalEngine }

// StartDependencies starts the fakes in this process and Toxiproxy, embedded or external.
func (Local) StartDependencies(ctx context.Context, p *Plan, opts Options) (_ *Dependencies, err error) {
	d := &Dependencies{Upstreams: map[string]string{}, Unmetered: unmeteredWhy(opts.Toxiproxy)}
	if opts.Toxiproxy != "" {
		x, err := proxy.NewExternal(ctx, opts.Toxiproxy)
		if err != nil {
			return nil, err
		}
		d.Injector = x // only a real one: a typed nil would make the injector non-nil
		d.Abort = x.Close
	} else {
		d.Injector = proxy.NewEmbedded()
	}
	defer func() {
		if err != nil {
			d.Injector.Close(context.Background())
		}
	}()
	upstreams := map[string]string{}
	for _, dep := range p.Scenario.Dependencies {
		if dep.Upstream != "" {
			upstreams[dep.Name] = "http://" + dep.Upstream
		}
	}
	if d.Fakes, err = target.StartFakes(p.Scenario.FakeDependencies(func(i int) int64 { return p.DependencySeeds[i] }), upstreams); err != nil {
		return nil, err
	}
	fakes := d.Fakes
	d.Close = func(context.Context) error { fakes.Close(); return nil }
	for _, dep := range p.Scenario.Dependencies {
		up := dep.Upstream
		if up == "" {
			up = hostOf(d.Fakes.URLs[dep.Name])
		} else if err := reachable(ctx, up); err != nil {
			fakes.Close()
			return nil, fmt.Errorf("dependency %s: upstream %s: %w", dep.Name, up, err)
		}
		d.Upstreams[dep.Name] = up
	}
	return d, nil
}

// StartTarget starts Options.Target, or the configuration's own target kind.
func (Local) StartTarget(ctx context.Context, p *Plan, spec target.Spec, opts Options) (target.Target, error) {
	if opts.Target != nil {
		return opts.Target.Start(ctx, spec)
	}
	k, err := target.Of(spec.Config)
	if err != nil {
		return nil, err
	}
	return k.Start(ctx, spec)
}

// LoadInRunner is true in the in-process layout.
func (Local) LoadInRunner(opts Options) bool { return opts.Load != LoadProcess }

// StartLoad starts the load in opts.Load's layout (startLoad).
func (Local) StartLoad(ctx context.Context, p *Plan, dir, base string, raw []io.Writer, lopts []loadgen.Opt, opts Options) (Load, *rundir.Load, error) {
	return startLoad(ctx, p, dir, base, opts.Load, raw, lopts, opts)
}
