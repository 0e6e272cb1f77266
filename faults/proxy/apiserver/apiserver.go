// Package apiserver serves Toxiproxy's HTTP API (github.com/Shopify/toxiproxy/v2, its own
// handlers) from this module, so that a standalone Toxiproxy needs no toxiproxy-server binary:
// `bulkhead toxiproxy serve` runs it as its own process on the host that holds the dependencies,
// and tests serve it in-process (proxytest).
//
// toxiproxy.ApiServer.Listen (v2.5.0) cannot be used for either: it never returns, has no
// shutdown, and exits the process through its logger when the address cannot be bound. Server
// binds first (a bad address is an error), serves the same route table, and stops on its
// context, removing every proxy it holds.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// NewToxiproxy returns a Toxiproxy server state with no proxies, a private metrics registry
// (a nil one panics in the links) and no logging.
func NewToxiproxy() *toxiproxy.ApiServer {
	return toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
}

// Handler returns api's HTTP API with the route table of toxiproxy.ApiServer.Listen (v2.5.0),
// without its middlewares (request logging, the refusal of browsers' user agents, the 25 s
// handler timeout). It holds no state of its own.
func Handler(api *toxiproxy.ApiServer) http.Handler {
	r := mux.NewRouter()
	r.HandleFunc("/reset", api.ResetState).Methods("POST")
	r.HandleFunc("/proxies", api.ProxyIndex).Methods("GET")
	r.HandleFunc("/proxies", api.ProxyCreate).Methods("POST")
	r.HandleFunc("/populate", api.Populate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}", api.ProxyUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyDelete).Methods("DELETE")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicIndex).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicDelete).Methods("DELETE")
	r.HandleFunc("/version", api.Version).Methods("GET")
	return r
}

// Clear removes every proxy of api, each one's toxics first: a proxy removed while a latency
// toxic holds data would leave that toxic's goroutine asleep for the whole latency (v2.5.0).
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
