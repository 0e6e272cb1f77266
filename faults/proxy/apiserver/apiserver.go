// Package apiserver serves Toxiproxy's HTTP API (github.com/Shopify/toxiproxy/v2, its own
// routes and handlers) from this module, so that a standalone Toxiproxy needs no toxiproxy-server
// binary: `bulkhead toxiproxy serve` runs it as its own process on the host that holds the
// dependencies, and tests serve it in-process (proxytest).
//
// The routes are Toxiproxy's own (ApiServer.Routes, v2.6.0 and later), middlewares included: a
// 25 s handler timeout, and a 403 for a browser's user agent ("Mozilla/..."), which protects
// the unauthenticated API from pages a browser on the same host opens. Server adds what
// ApiServer.Listen and Shutdown (v2.12.0) lack for this module: Listen binds before anything is
// served, so a bad or taken address is an error at once and port 0 reports the port it picked
// (ApiServer.Listen binds inside its blocking call and never says which); Serve stops on a
// context, and stopping removes every proxy (ApiServer.Shutdown stops the HTTP server only, and
// reads a field ApiServer.Listen writes from another goroutine without synchronisation).
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// NewToxiproxy returns a Toxiproxy server state with no proxies, a private metrics registry
// (a nil one panics in the links) and no logging.
func NewToxiproxy() *toxiproxy.ApiServer {
	return toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
}

// Handler returns api's HTTP API: Toxiproxy's own route table and middlewares
// (toxiproxy.ApiServer.Routes). It holds no state of its own.
func Handler(api *toxiproxy.ApiServer) http.Handler { return api.Routes() }

// Clear removes every proxy of api, each one's toxics first: a proxy removed while a latency
// toxic holds data would leave that toxic's goroutine asleep for the whole latency (v2.5.0 to
// v2.12.0 alike: their proxy, link and toxic code is the same).
// It waits for each live connection to flush what a toxic held (Toxiproxy bounds that at 5 s
// per connection).
func Clear(ctx context.Context, api *toxiproxy.ApiServer) error {
	for _, p := range api.Collection.Proxies() {
		p.Toxics.ResetToxics(ctx)
	}
	return api.Collection.Clear()
}

// Server is Toxiproxy's HTTP API on a bound listener. Create it with Listen; the zero value is
// not usable.
type Server struct {
	api *toxiproxy.ApiServer
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr ("10.0.0.2:8474"; port 0 picks one) for Toxiproxy's API, with no proxies
// yet, and returns the Server; nothing is served until Serve. A bad or taken address is an
// error naming it.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("toxiproxy api: listen %s: %w", addr, err)
	}
	api := NewToxiproxy()
	return &Server{
		api: api,
		ln:  ln,
		srv: &http.Server{Handler: Handler(api), ReadHeaderTimeout: 10 * time.Second},
	}, nil
}

// Addr returns the address the API listens on (the real port when Listen was given port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves the API until ctx ends, then stops accepting API calls, waits up to 5 s for
// calls in progress, and removes every proxy (toxics first, then the proxy, which closes its
// listener and connections). It returns nil after a stop by ctx, or the error that ended serving.
func (s *Server) Serve(ctx context.Context) error {
	errc := make(chan error, 1)
	go func() { errc <- s.srv.Serve(s.ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = s.srv.Shutdown(sctx)
		cancel()
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
			err = errors.Join(err, serr)
		}
	}
	return errors.Join(err, Clear(context.Background(), s.api))
}
