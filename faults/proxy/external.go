package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/bulkheadlab/bulkhead/faults"
)

// DefaultExternalTimeout bounds each call to an external Toxiproxy API when ctx has no earlier
// deadline.
const DefaultExternalTimeout = 10 * time.Second

// External drives a separate toxiproxy-server through its HTTP API. Create it with NewExternal;
// the zero value is not usable.
//
// It speaks the API with its own http.Client and the request/response types of Toxiproxy's client
// package (github.com/Shopify/toxiproxy/v2/client): that client's methods take no context and use
// http.DefaultClient with no timeout, so every call here is made with http.NewRequestWithContext
// instead and is bounded by ctx and by DefaultExternalTimeout. A call ended by ctx returns an error
// wrapping ctx.Err(); the server may or may not have carried out the request.
//
// Proxies are created on the server's host, listening on 127.0.0.1 (ephemeral port), so the
// service must run on the same host as the toxiproxy-server.
type External struct {
	base    string // API base URL without a trailing slash
	hc      *http.Client
	tr      *http.Transport
	version string

	mu      sync.Mutex
	created []string
	closed  bool
}

var _ Injector = (*External)(nil)

// NewExternal connects to the Toxiproxy API at apiURL ("http://127.0.0.1:8474"; the scheme may be
// left out) and checks it answers GET /version, blocking until it does, ctx is done or
// DefaultExternalTimeout passes. An API that does not answer gives an error wrapping
// ErrUnreachable: "toxiproxy at URL unreachable: ...". It creates nothing on the server.
func NewExternal(ctx context.Context, apiURL string) (*External, error) {
	base := strings.TrimRight(apiURL, "/")
	if scheme, _, ok := strings.Cut(base, "://"); ok && scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("proxy: toxiproxy url %q: scheme %q, want http or https (or none)", apiURL, scheme)
	}
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		base = "http://" + base
	}
	if _, err := url.Parse(base); err != nil {
		return nil, fmt.Errorf("proxy: toxiproxy url %q: %w", apiURL, err)
	}
	tr := &http.Transport{
		Proxy:               nil, // loopback or a lab host; never an HTTP proxy from the environment
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 2,
		IdleConnTimeout:     30 * time.Second,
	}
	x := &External{base: base, tr: tr, hc: &http.Client{Transport: tr, Timeout: DefaultExternalTimeout}}
	var v []byte
	if err := x.do(ctx, http.MethodGet, "/version", nil, http.StatusOK, &v); err != nil {
		tr.CloseIdleConnections()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("proxy: toxiproxy at %s: %w", base, ctx.Err())
		}
		return nil, fmt.Errorf("proxy: toxiproxy at %s %w: %w", base, ErrUnreachable, err)
	}
	x.version = parseVersion(v)
	return x, nil
}

// parseVersion reads the body of GET /version: JSON {"version": "2.12.0"} from Toxiproxy v2.7.0
// on, the bare version ("2.5.0") before. Anything else is kept as it came, trimmed.
func parseVersion(body []byte) string {
	var v struct {
		Version *string `json:"version"`
	}
	if json.Unmarshal(body, &v) == nil && v.Version != nil {
		return *v.Version
	}
	return strings.TrimSpace(string(body))
}

// URL returns the API base URL in use.
func (x *External) URL() string { return x.base }

// Ping checks the server still answers: GET /version, blocking until it answers, ctx is done or
// DefaultExternalTimeout passes. It returns nil on a 200 and otherwise an error wrapping
// ErrUnreachable (ctx's error too when ctx ended it). The runner calls it during a time line:
// a Toxiproxy that died takes every proxy of the run with it.
func (x *External) Ping(ctx context.Context) error {
	if err := x.do(ctx, http.MethodGet, "/version", nil, http.StatusOK, nil); err != nil {
		return fmt.Errorf("proxy: toxiproxy at %s %w: %w", x.base, ErrUnreachable, err)
	}
	return nil
}

// Version returns the version the server's /version answered: "2.12.0" for a release binary or
// `bulkhead toxiproxy serve`, "git" for a toxiproxy-server built with go build without ldflags.
func (x *External) Version() string { return x.version }

// AddProxy creates a proxy named name on the server, listening on 127.0.0.1:0 in front of upstream
// (host:port, as the server's host sees it), and returns the address the server bound. A name the
// server already has gives ErrProxyExists (even when another client made it).
func (x *External) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	return x.AddProxyAt(ctx, name, "", upstream)
}

// AddProxyAt is AddProxy listening on listen ("" means an ephemeral loopback port of the
// Toxiproxy server's host).
func (x *External) AddProxyAt(ctx context.Context, name, listen, upstream string) (string, error) {
	if listen == "" {
		listen = listenAddr
	}
	if name == "" {
		return "", fmt.Errorf("proxy: add proxy: empty name")
	}
	if _, _, err := net.SplitHostPort(upstream); err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: upstream %q is not host:port: %w", name, upstream, err)
	}
	if err := x.check(); err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, err)
	}
	in := toxiclient.Proxy{Name: name, Listen: listen, Upstream: upstream, Enabled: true}
	var out toxiclient.Proxy
	if err := x.do(ctx, http.MethodPost, "/proxies", in, http.StatusCreated, &out); err != nil {
		return "", fmt.Errorf("proxy: add proxy %q: %w", name, err)
	}
	x.mu.Lock()
	x.created = append(x.created, name)
	x.mu.Unlock()
	return out.Listen, nil
}

// Apply installs the proxy's part of e: it disables the proxy (ProxyDown), or adds e.Toxic; a
// toxic of the same name already there (409) is deleted and added again. e.Status is not the
// proxy's: Apply only checks the proxy exists. It makes one to three API calls; on a validation
// error it makes none.
func (x *External) Apply(ctx context.Context, proxy string, e faults.Effect) error {
	var in toxicJSON
	if e.Toxic != nil {
		var err error
		if in, err = encode(*e.Toxic); err != nil {
			return fmt.Errorf("proxy: apply %s to %q: %w", describe(e), proxy, err)
		}
	}
	if err := x.check(); err != nil {
		return fmt.Errorf("proxy: apply %s to %q: %w", describe(e), proxy, err)
	}
	path := "/proxies/" + url.PathEscape(proxy)
	var err error
	switch {
	case e.ProxyDown:
		err = x.do(ctx, http.MethodPost, path, struct {
			Enabled bool `json:"enabled"`
		}{false}, http.StatusOK, nil)
	case e.Toxic != nil:
		err = x.do(ctx, http.MethodPost, path+"/toxics", in, http.StatusOK, nil)
		if errors.Is(err, errToxicExists) {
			err = x.do(ctx, http.MethodDelete, path+"/toxics/"+url.PathEscape(in.Name), nil, http.StatusNoContent, nil)
			if err == nil {
				err = x.do(ctx, http.MethodPost, path+"/toxics", in, http.StatusOK, nil)
			}
		}
	default:
		_, err = x.proxyState(ctx, proxy)
	}
	if err != nil {
		return fmt.Errorf("proxy: apply %s to %q: %w", describe(e), proxy, err)
	}
	return nil
}

// Clear deletes every toxic on the proxy and enables it.
func (x *External) Clear(ctx context.Context, proxy string) error {
	if err := x.check(); err != nil {
		return fmt.Errorf("proxy: clear %q: %w", proxy, err)
	}
	if err := x.reset(ctx, proxy, true); err != nil {
		return fmt.Errorf("proxy: clear %q: %w", proxy, err)
	}
	return nil
}

// Close deletes every proxy this injector created, removing its toxics first (deleting a proxy
// stops it and closes its connections), and leaves other proxies on the server alone. Each
// deletion is bounded by ctx; a proxy already gone is not an error. A second Close returns nil,
// and so does Close on a nil *External; every other call after Close returns ErrClosed.
func (x *External) Close(ctx context.Context) error {
	if x == nil {
		return nil // a failed NewExternal left a typed nil in an Injector (issue 10)
	}
	x.mu.Lock()
	if x.closed {
		x.mu.Unlock()
		return nil
	}
	x.closed = true
	names := x.created
	x.created = nil
	x.mu.Unlock()

	var errs []error
	for _, name := range names {
		// Toxics first: a proxy deleted with a latency toxic holding data leaves that toxic's
		// goroutine asleep for the whole latency in the server (Toxiproxy, v2.12.0 included, does not
		// interrupt toxics on stop).
		err := x.removeToxics(ctx, name)
		if err == nil {
			err = x.do(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(name), nil, http.StatusNoContent, nil)
		}
		if err != nil && !errors.Is(err, ErrUnknownProxy) {
			errs = append(errs, fmt.Errorf("proxy: close proxy %q: %w", name, err))
		}
	}
	x.tr.CloseIdleConnections()
	return errors.Join(errs...)
}

func (x *External) check() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.closed {
		return ErrClosed
	}
	return nil
}

// reset deletes every toxic on the proxy and sets it enabled or disabled.
func (x *External) reset(ctx context.Context, proxy string, enabled bool) error {
	path := "/proxies/" + url.PathEscape(proxy)
	p, err := x.proxyState(ctx, proxy)
	if err != nil {
		return err
	}
	if err := x.deleteToxics(ctx, proxy, p.ActiveToxics); err != nil {
		return err
	}
	if p.Enabled != enabled {
		in := struct {
			Enabled bool `json:"enabled"`
		}{enabled}
		if err := x.do(ctx, http.MethodPost, path, in, http.StatusOK, nil); err != nil {
			return fmt.Errorf("set enabled %v: %w", enabled, err)
		}
	}
	return nil
}

// removeToxics deletes every toxic on the proxy.
func (x *External) removeToxics(ctx context.Context, proxy string) error {
	p, err := x.proxyState(ctx, proxy)
	if err != nil {
		return err
	}
	return x.deleteToxics(ctx, proxy, p.ActiveToxics)
}

// proxyState fetches the proxy with its toxics.
func (x *External) proxyState(ctx context.Context, proxy string) (toxiclient.Proxy, error) {
	var p toxiclient.Proxy
	err := x.do(ctx, http.MethodGet, "/proxies/"+url.PathEscape(proxy), nil, http.StatusOK, &p)
	return p, err
}

// deleteToxics deletes the named toxics from the proxy; one already gone is not an error.
func (x *External) deleteToxics(ctx context.Context, proxy string, toxics toxiclient.Toxics) error {
	for _, t := range toxics {
		path := "/proxies/" + url.PathEscape(proxy) + "/toxics/" + url.PathEscape(t.Name)
		err := x.do(ctx, http.MethodDelete, path, nil, http.StatusNoContent, nil)
		if err != nil && !errors.Is(err, errToxicNotFound) {
			return fmt.Errorf("remove toxic %q: %w", t.Name, err)
		}
	}
	return nil
}

// errToxicNotFound marks a 404 on a toxic (deleted meanwhile); errToxicExists a 409 on adding
// one.
var (
	errToxicNotFound = errors.New("toxic not found")
	errToxicExists   = errors.New("toxic already exists")
)

// do sends one API request with ctx and decodes the answer into out (a *[]byte takes the raw
// body). A status other than want becomes an error carrying the server's message; 404 "proxy not
// found" wraps ErrUnknownProxy and 409 "proxy already exists" wraps ErrProxyExists.
func (x *External) do(ctx context.Context, method, path string, in any, want int, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("%s %s: encode: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, x.base+path, body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := x.hc.Do(req)
	if err != nil {
		return err // already names method and URL
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	if resp.StatusCode != want {
		var apiErr toxiclient.ApiError
		if json.Unmarshal(raw, &apiErr) != nil || apiErr.Message == "" {
			apiErr = toxiclient.ApiError{Message: strings.TrimSpace(string(raw)), Status: resp.StatusCode}
		}
		err := fmt.Errorf("%s %s: http %d: %s", method, path, resp.StatusCode, apiErr.Message)
		switch {
		case resp.StatusCode == http.StatusNotFound && strings.Contains(apiErr.Message, "proxy not found"):
			err = fmt.Errorf("%w: %w", ErrUnknownProxy, err)
		case resp.StatusCode == http.StatusNotFound && strings.Contains(apiErr.Message, "toxic not found"):
			err = fmt.Errorf("%w: %w", errToxicNotFound, err)
		case resp.StatusCode == http.StatusConflict && strings.Contains(apiErr.Message, "toxic already exists"):
			err = fmt.Errorf("%w: %w", errToxicExists, err)
		case resp.StatusCode == http.StatusConflict && strings.Contains(apiErr.Message, "proxy already exists"):
			err = fmt.Errorf("%w: %w", ErrProxyExists, err)
		}
		return err
	}
	switch o := out.(type) {
	case nil:
	case *[]byte:
		*o = raw
	default:
		if err := json.Unmarshal(raw, out); err != nil {
			return fmt.Errorf("%s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}
