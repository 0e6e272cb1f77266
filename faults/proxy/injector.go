package proxy

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/bulkheadlab/bulkhead/faults"
)

// Errors callers may branch on with errors.Is.
var (
	// ErrInvalidToxic is returned by Apply for a toxic that cannot be sent to Toxiproxy (no type,
	// an unknown stream, a toxicity outside (0, 1]).
	ErrInvalidToxic = errors.New("invalid toxic")
	// ErrUnknownProxy is returned for a proxy name the injector does not have.
	ErrUnknownProxy = errors.New("unknown proxy")
	// ErrProxyExists is returned by AddProxy for a name already in use.
	ErrProxyExists = errors.New("proxy already exists")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("injector closed")
	// ErrUnreachable is returned by NewExternal when the Toxiproxy API does not answer.
	ErrUnreachable = errors.New("unreachable")
)

// Injector puts proxies in front of dependencies and installs faults' effects on them.
// Implementations are safe for concurrent use.
type Injector interface {
	// AddProxy creates a proxy named name listening on 127.0.0.1:0 (ephemeral) in front of
	// upstream (host:port) and returns its listen address host:port.
	AddProxy(ctx context.Context, name, upstream string) (listen string, err error)
	// AddProxyAt is AddProxy listening on listen (host:port; "" means 127.0.0.1:0), so that a
	// service can be configured with the address before the run. An address already taken is
	// an error naming it.
	AddProxyAt(ctx context.Context, name, listen, upstream string) (string, error)
	// Apply installs the proxy's part of e, adding to what the proxy already has: e.Toxic is
	// added (replacing a toxic of the same name, that is of the same type and stream), and
	// e.ProxyDown disables the proxy. e.Status is the dependency's own answer, not the proxy's:
	// Apply leaves it to the caller and does nothing for it.
	Apply(ctx context.Context, proxy string, e faults.Effect) error
	// Clear removes every toxic and re-enables the proxy.
	Clear(ctx context.Context, proxy string) error
	// Close removes every proxy this injector created and stops an embedded server; safe to call
	// twice, and on a nil implementation.
	Close(ctx context.Context) error
	// Version names the Toxiproxy in use.
	Version() string
}

// toxicJSON is one Toxiproxy toxic as both the in-process JSON and the HTTP API take it.
type toxicJSON struct {
	Name       string           `json:"name"`
	Type       string           `json:"type"`
	Stream     string           `json:"stream"`
	Toxicity   float32          `json:"toxicity"`
	Attributes map[string]int64 `json:"attributes"`
}

// encode checks t and returns it in Toxiproxy's form.
func encode(t faults.Toxic) (toxicJSON, error) {
	if err := t.Validate(); err != nil {
		return toxicJSON{}, fmt.Errorf("%w: %v", ErrInvalidToxic, err)
	}
	return toxicJSON{Name: t.Name(), Type: t.Type, Stream: t.Stream.String(), Toxicity: float32(t.Toxicity), Attributes: t.Attributes}, nil
}

// describe names an effect in errors ("toxic bulkhead_latency_downstream", "down").
func describe(e faults.Effect) string {
	switch {
	case e.Toxic != nil:
		return "toxic " + e.Toxic.Name()
	case e.ProxyDown:
		return "down"
	}
	return "nothing"
}

// toxiproxyModule is the module whose version ModuleVersion reports.
const toxiproxyModule = "github.com/Shopify/toxiproxy/v2"

// fallbackVersion is the version pinned in go.mod, used when the binary carries no build info.
const fallbackVersion = "v2.12.0"

// ModuleVersion returns the version of the Toxiproxy module linked into this binary ("v2.12.0"),
// read from the build info, or the go.mod pin when the build info does not list it.
func ModuleVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == toxiproxyModule {
				if m.Replace != nil && m.Replace.Version != "" {
					return m.Replace.Version
				}
				if m.Version != "" {
					return m.Version
				}
			}
		}
	}
	return fallbackVersion
}
