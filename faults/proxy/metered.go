package proxy

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy/meter"
)

// Metered is an Injector whose every proxy has a meter.Meter in front of it, so that each
// dependency's answers are timed from the dependency's side, the injected faults included
// (dependencies.csv). Create it with NewMetered around the injector that runs the proxies.
//
// Why a pass-through of the harness's own in front of each proxy, and not a Toxiproxy toxic: a
// toxic sees one direction of one connection as a stream of chunks, with no way to pair a
// request in the upstream chain with its answer in the downstream one; Toxiproxy appends a
// toxic added later (every fault) behind it in the chain, so a timing toxic would see the answers
// before the latency a fault adds; and a toxic registered in this process cannot run in an
// external toxiproxy-server. The meter sits where the target's calls enter the dependency side,
// sees both directions of each connection, and works with either injector. Its cost (measured by
// BenchmarkMeteredExchange in this package) is one more loopback hop per call.
//
// The target calls a dependency at the meter's address (the listen address AddProxyAt is given,
// or an ephemeral one); the proxy behind it listens on an ephemeral loopback port. So the proxy
// must run on this host: an embedded Toxiproxy, or an external one on this host. A down fault
// pauses the meter before the proxy is disabled (both refuse connections), and Clear resumes it
// after the proxy is enabled again.
type Metered struct {
	inner Injector

	mu     sync.Mutex
	meters map[string]*meter.Meter
	order  []string
}

var _ Injector = (*Metered)(nil)

// NewMetered returns an injector that meters every proxy inner creates.
func NewMetered(inner Injector) *Metered {
	return &Metered{inner: inner, meters: map[string]*meter.Meter{}}
}

// AddProxy is AddProxyAt on an ephemeral loopback address.
func (x *Metered) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	return x.AddProxyAt(ctx, name, "", upstream)
}

// AddProxyAt creates the proxy through the inner injector on an ephemeral loopback port and a
// meter in front of it on listen ("" means 127.0.0.1:0), and returns the meter's address: the one
// the target is to call. If the meter cannot listen, the error names the address; the proxy
// stays until Close.
func (x *Metered) AddProxyAt(ctx context.Context, name, listen, upstream string) (string, error) {
	behind, err := x.inner.AddProxyAt(ctx, name, "", upstream)
	if err != nil {
		return "", err
	}
	m, err := meter.Listen(name, listen, behind)
	if err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, err)
	}
	x.mu.Lock()
	x.meters[name] = m
	x.order = append(x.order, name)
	x.mu.Unlock()
	return m.Addr(), nil
}

// Meter returns the meter in front of the named proxy, or nil.
func (x *Metered) Meter(name string) *meter.Meter {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.meters[name]
}

// Apply pauses the meter for a down effect, then installs e through the inner injector.
func (x *Metered) Apply(ctx context.Context, proxy string, e faults.Effect) error {
	if e.ProxyDown {
		if m := x.Meter(proxy); m != nil {
			m.Pause()
		}
	}
	return x.inner.Apply(ctx, proxy, e)
}

// Clear clears the proxy through the inner injector, then resumes its meter if a down fault
// paused it.
func (x *Metered) Clear(ctx context.Context, proxy string) error {
	if err := x.inner.Clear(ctx, proxy); err != nil {
		return err
	}
	if m := x.Meter(proxy); m != nil {
		if err := m.Resume(); err != nil {
			return fmt.Errorf("proxy: clear %q: %w", proxy, err)
		}
	}
	return nil
}

// Close stops every meter, then closes the inner injector. A second Close returns nil.
func (x *Metered) Close(ctx context.Context) error {
	if x == nil {
		return nil
	}
	x.mu.Lock()
	order := x.order
	x.order = nil
	meters := x.meters
	x.mu.Unlock()
	var errs []error
	for _, name := range order {
		errs = append(errs, meters[name].Close())
	}
	errs = append(errs, x.inner.Close(ctx))
	return errors.Join(errs...)
}

// Version names the inner injector's Toxiproxy.
func (x *Metered) Version() string { return x.inner.Version() }
