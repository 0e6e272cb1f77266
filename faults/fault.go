package faults

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// Type is the kind of fault.
type Type string

// The fault types. Every one but TypeHTTPError is a TCP fault made by Toxiproxy.
const (
	TypeLatency   Type = "latency"
	TypeReset     Type = "reset"
	TypeTimeout   Type = "timeout"
	TypeDown      Type = "down"
	TypeBandwidth Type = "bandwidth"
	// TypeHTTPError is the dependency answering an HTTP error status. Toxiproxy cannot produce
	// it; the dependency server does (dependency.Server.SetFailing).
	TypeHTTPError Type = "http-error"
)

// Types lists every fault type in a fixed order.
var Types = []Type{TypeLatency, TypeReset, TypeTimeout, TypeDown, TypeBandwidth, TypeHTTPError}

// Errors callers may branch on with errors.Is.
var (
	// ErrUnknownType is returned by ParseType (and Apply) for a name that is not a Type.
	ErrUnknownType = errors.New("unknown fault type")
	// ErrNotTCP is returned by Apply for a fault Toxiproxy cannot make (http-error).
	ErrNotTCP = errors.New("fault is not a tcp fault")
	// ErrInvalidFault is returned by Fault.Validate and Apply for amounts that cannot be applied.
	ErrInvalidFault = errors.New("invalid fault")
	// ErrUnknownProxy is returned for a proxy name the injector does not have.
	ErrUnknownProxy = errors.New("unknown proxy")
	// ErrProxyExists is returned by AddProxy for a name already in use.
	ErrProxyExists = errors.New("proxy already exists")
	// ErrClosed is returned by every call after Close.
	ErrClosed = errors.New("injector closed")
	// ErrUnreachable is returned by NewExternal when the Toxiproxy API does not answer.
	ErrUnreachable = errors.New("unreachable")
)

// ParseType returns the Type named s, or ErrUnknownType.
func ParseType(s string) (Type, error) {
	for _, t := range Types {
		if string(t) == s {
			return t, nil
		}
	}
	return "", fmt.Errorf("faults: %w %q (want one of latency, reset, timeout, down, bandwidth, http-error)", ErrUnknownType, s)
}

// String returns the type's name, as ParseType accepts it.
func (t Type) String() string { return string(t) }

// TCP reports whether Toxiproxy makes this fault (every type but http-error).
func (t Type) TCP() bool {
	switch t {
	case TypeLatency, TypeReset, TypeTimeout, TypeDown, TypeBandwidth:
		return true
	}
	return false
}

// Fault is one fault on one proxy. Only the fields of its Type are used.
type Fault struct {
	Type Type
	// Latency is the delay added to each response chunk (latency). Rounded to whole milliseconds;
	// must be at least 1ms.
	Latency time.Duration
	// Jitter is Toxiproxy's jitter (latency): each delay is Latency ± a uniform Jitter, drawn from
	// Toxiproxy's own global random source (not seeded by the run). Rounded to milliseconds; 0
	// means none.
	Jitter time.Duration
	// RateKBps is the response bandwidth in KB/s (bandwidth). Must be > 0.
	RateKBps int
}

// Validate reports whether f can be applied: a known type and amounts in range. It returns an
// error wrapping ErrUnknownType or ErrInvalidFault. A valid http-error fault is still refused by
// Apply with ErrNotTCP.
func (f Fault) Validate() error {
	if _, err := ParseType(string(f.Type)); err != nil {
		return err
	}
	switch f.Type {
	case TypeLatency:
		if millis(f.Latency) < 1 {
			return fmt.Errorf("faults: %w: latency %v is below 1ms", ErrInvalidFault, f.Latency)
		}
		if f.Jitter < 0 {
			return fmt.Errorf("faults: %w: negative jitter %v", ErrInvalidFault, f.Jitter)
		}
	case TypeBandwidth:
		if f.RateKBps <= 0 {
			return fmt.Errorf("faults: %w: bandwidth rate %d KB/s must be > 0", ErrInvalidFault, f.RateKBps)
		}
	}
	return nil
}

// String describes f for logs ("latency 450ms±0s", "down").
func (f Fault) String() string {
	switch f.Type {
	case TypeLatency:
		return fmt.Sprintf("latency %v±%v", f.Latency, f.Jitter)
	case TypeBandwidth:
		return fmt.Sprintf("bandwidth %dKB/s", f.RateKBps)
	}
	return string(f.Type)
}

func millis(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }

// Injector puts faults in front of dependencies. Implementations are safe for concurrent use.
type Injector interface {
	// AddProxy creates a proxy named name listening on 127.0.0.1:0 (ephemeral) in front of
	// upstream (host:port) and returns its listen address host:port.
	AddProxy(ctx context.Context, name, upstream string) (listen string, err error)
	// Apply replaces the proxy's faults with f (toxics on the downstream direction, toxicity 1.0).
	Apply(ctx context.Context, proxy string, f Fault) error
	// Clear removes every toxic and re-enables the proxy.
	Clear(ctx context.Context, proxy string) error
	// Close removes every proxy this injector created and stops an embedded server; safe to call
	// twice.
	Close(ctx context.Context) error
	// Version names the Toxiproxy in use.
	Version() string
}

// toxic is one Toxiproxy toxic as both the in-process JSON and the HTTP API take it.
type toxic struct {
	Name       string         `json:"name"`
	Type       string         `json:"type"`
	Stream     string         `json:"stream"`
	Toxicity   float32        `json:"toxicity"`
	Attributes map[string]any `json:"attributes"`
}

// toxicFor maps a validated TCP fault to its toxic. It returns ok false for down, which is not a
// toxic but a disabled proxy.
func toxicFor(f Fault) (t toxic, ok bool) {
	t = toxic{Stream: "downstream", Toxicity: 1.0} // the client's zero toxicity means never
	switch f.Type {
	case TypeLatency:
		t.Type = "latency"
		t.Attributes = map[string]any{"latency": millis(f.Latency), "jitter": millis(f.Jitter)}
	case TypeReset:
		t.Type = "reset_peer"
		t.Attributes = map[string]any{"timeout": 0}
	case TypeTimeout:
		t.Type = "timeout"
		t.Attributes = map[string]any{"timeout": 0}
	case TypeBandwidth:
		t.Type = "bandwidth"
		t.Attributes = map[string]any{"rate": f.RateKBps}
	default:
		return toxic{}, false
	}
	t.Name = "bulkhead_" + t.Type + "_downstream"
	return t, true
}

// checkApplicable validates f for Apply.
func checkApplicable(f Fault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if !f.Type.TCP() {
		return fmt.Errorf("faults: %w: %s is made by the dependency server, not Toxiproxy", ErrNotTCP, f.Type)
	}
	return nil
}

// toxiproxyModule is the module whose version ModuleVersion reports.
const toxiproxyModule = "github.com/Shopify/toxiproxy/v2"

// fallbackVersion is the version pinned in go.mod, used when the binary carries no build info.
const fallbackVersion = "v2.5.0"

// ModuleVersion returns the version of the Toxiproxy module linked into this binary ("v2.5.0"),
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
