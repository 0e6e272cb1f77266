package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/bulkheadlab/bulkhead/faults"
)

// listenAddr is where every proxy listens: loopback, ephemeral port.
const listenAddr = "127.0.0.1:0"

// Embedded runs Toxiproxy in-process: proxies and toxics are driven through the library, and
// Toxiproxy's HTTP API is never started (its Listen blocks forever and exits the process on a
// listen error). Create it with NewEmbedded; the zero value is not usable.
//
// Its calls do not block on the network. They check ctx before starting and then run to the end:
// removing a toxic waits for each live connection to flush the data the toxic held, which
// Toxiproxy bounds at 5 s per connection.
type Embedded struct {
	mu      sync.Mutex
	srv     *toxiproxy.ApiServer
	proxies map[string]*embeddedProxy
	order   []string // creation order, for Close
	closed  bool
}

type embeddedProxy struct {
	p      *toxiproxy.Proxy
	listen string
	down   bool // disabled by a down fault
}

var _ Injector = (*Embedded)(nil)

// NewEmbedded returns an in-process Toxiproxy with no proxies. It starts nothing until AddProxy.
func NewEmbedded() *Embedded {
	return &Embedded{
		// A nil metrics container panics in the links; this registry is private and unused.
		srv:     toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop()),
		proxies: make(map[string]*embeddedProxy),
	}
}

// AddProxy creates and starts a proxy named name on 127.0.0.1 (ephemeral port) in front of
// upstream (host:port) and returns its listen address. The upstream is dialled per accepted
// connection, so it need not be up yet. On failure nothing is left listening.
func (e *Embedded) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	return e.AddProxyAt(ctx, name, "", upstream)
}

// AddProxyAt is AddProxy listening on listen ("" means an ephemeral loopback port).
func (e *Embedded) AddProxyAt(ctx context.Context, name, listen, upstream string) (string, error) {
	if listen == "" {
		listen = listenAddr
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, err)
	}
	if name == "" {
		return "", fmt.Errorf("proxy: add proxy: empty name")
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: upstream %q is not host:port: %w", name, upstream, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, ErrClosed)
	}
	if _, ok := e.proxies[name]; ok {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, ErrProxyExists)
	}
	p := toxiproxy.NewProxy(e.srv, name, listen, upstream)
	if err := e.srv.Collection.Add(p, true); err != nil {
		if errors.Is(err, toxiproxy.ErrProxyAlreadyExists) {
			err = ErrProxyExists
		}
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, err)
	}
	// Start has returned, so the proxy's listener is bound and Listen holds the real address.
	ep := &embeddedProxy{p: p, listen: p.Listen}
	e.proxies[name] = ep
	e.order = append(e.order, name)
	return ep.listen, nil
}

// Apply installs the proxy's part of e: it disables the proxy (ProxyDown), or adds e.Toxic,
// first removing a toxic of the same name (releasing data a latency toxic holds). e.Status is
// not the proxy's: Apply only checks the proxy exists. On a validation error nothing changes.
func (e *Embedded) Apply(ctx context.Context, proxy string, eff faults.Effect) error {
	var body []byte
	if eff.Toxic != nil {
		t, err := encode(*eff.Toxic)
		if err == nil {
			body, err = json.Marshal(t)
		}
		if err != nil {
			return fmt.Errorf("proxy: apply %s to %q: %w", describe(eff), proxy, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("proxy: apply %s to %q: %w", describe(eff), proxy, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, err := e.lookup(proxy)
	if err != nil {
		return fmt.Errorf("proxy: apply %s: %w", describe(eff), err)
	}
	if eff.ProxyDown && !ep.down {
		ep.p.Stop() // closes the listener and every live connection
		ep.down = true
	}
	if eff.Toxic == nil {
		return nil
	}
	if ep.p.Toxics.GetToxic(eff.Toxic.Name()) != nil {
		if err := ep.p.Toxics.RemoveToxic(ctx, eff.Toxic.Name()); err != nil {
			return fmt.Errorf("proxy: apply %s to %q: replace: %w", describe(eff), proxy, err)
		}
	}
	if _, err := ep.p.Toxics.AddToxicJson(bytes.NewReader(body)); err != nil {
		return fmt.Errorf("proxy: apply %s to %q: %w", describe(eff), proxy, err)
	}
	return nil
}

// Clear removes every toxic from the proxy and re-enables it if a down fault disabled it. The
// re-enabled proxy listens on the same address; if another process took that port meanwhile,
// Clear fails and the proxy stays disabled.
func (e *Embedded) Clear(ctx context.Context, proxy string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("proxy: clear %q: %w", proxy, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ep, err := e.lookup(proxy)
	if err != nil {
		return fmt.Errorf("proxy: clear: %w", err)
	}
	ep.p.Toxics.ResetToxics(ctx)
	if err := ep.enable(); err != nil {
		return fmt.Errorf("proxy: clear %q: %w", proxy, err)
	}
	return nil
}

// Close removes every proxy: it first removes their toxics (so data held by a latency toxic is
// flushed to still-open connections rather than left blocked), then stops each proxy, which closes
// its listener and its connections. It does not consult ctx: it always runs to the end. A second
// Close returns nil, and so does Close on a nil *Embedded; every other call after Close returns
// ErrClosed.
func (e *Embedded) Close(ctx context.Context) error {
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	var errs []error
	for _, name := range e.order {
		ep := e.proxies[name]
		ep.p.Toxics.ResetToxics(ctx)
		if err := e.srv.Collection.Remove(name); err != nil {
			errs = append(errs, fmt.Errorf("proxy: close proxy %q: %w", name, err))
		}
	}
	e.proxies = nil
	e.order = nil
	return errors.Join(errs...)
}

// Version returns the version of the linked Toxiproxy module ("v2.12.0").
func (e *Embedded) Version() string { return ModuleVersion() }

// lookup returns the named proxy; the caller holds e.mu.
func (e *Embedded) lookup(name string) (*embeddedProxy, error) {
	if e.closed {
		return nil, fmt.Errorf("proxy %q: %w", name, ErrClosed)
	}
	ep, ok := e.proxies[name]
	if !ok {
		return nil, fmt.Errorf("proxy %q: %w", name, ErrUnknownProxy)
	}
	return ep, nil
}

// enable restarts a proxy a down fault disabled, on the address it had.
func (ep *embeddedProxy) enable() error {
	if !ep.down {
		return nil
	}
	if err := ep.p.Start(); err != nil {
		return fmt.Errorf("re-enable proxy on %s: %w", ep.listen, err)
	}
	ep.down = false
	return nil
}
