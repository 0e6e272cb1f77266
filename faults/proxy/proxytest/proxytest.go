// Package proxytest serves an external Toxiproxy inside a test process, for tests of code that
// drives one through its HTTP API.
package proxytest

import (
	"context"
	"net/http/httptest"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// NewAPIServer serves Toxiproxy's real HTTP API handlers, with the route table of
// toxiproxy.ApiServer.Listen (v2.5.0, which cannot be used in tests: it binds a fixed address,
// never returns and exits the process on error), on an httptest server on 127.0.0.1, and
// returns its URL. The server and every proxy left on it are stopped at t's cleanup.
func NewAPIServer(t testing.TB) string {
	t.Helper()
	api := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	r := mux.NewRouter()
	r.HandleFunc("/reset", api.ResetState).Methods("POST")
	r.HandleFunc("/proxies", api.ProxyIndex).Methods("GET")
	r.HandleFunc("/proxies", api.ProxyCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}", api.ProxyUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}", api.ProxyDelete).Methods("DELETE")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicIndex).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics", api.ToxicCreate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicShow).Methods("GET")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicUpdate).Methods("POST")
	r.HandleFunc("/proxies/{proxy}/toxics/{toxic}", api.ToxicDelete).Methods("DELETE")
	r.HandleFunc("/version", api.Version).Methods("GET")
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.Close()
		// Proxies left behind, toxics first (see proxy.External.Close).
		for _, p := range api.Collection.Proxies() {
			p.Toxics.ResetToxics(context.Background())
		}
		_ = api.Collection.Clear()
	})
	return srv.URL
}
