// Package proxytest serves an external Toxiproxy inside a test process, for tests of code that
// drives one through its HTTP API.
package proxytest

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/bulkheadlab/bulkhead/faults/proxy/apiserver"
)

// NewAPIServer serves Toxiproxy's real HTTP API handlers (apiserver.Handler) on an httptest
// server on 127.0.0.1 and returns its URL. The server and every proxy left on it are stopped at
// t's cleanup.
func NewAPIServer(t testing.TB) string {
	t.Helper()
	api := apiserver.NewToxiproxy()
	srv := httptest.NewServer(apiserver.Handler(api))
	t.Cleanup(func() {
		srv.Close()
		_ = apiserver.Clear(context.Background(), api)
	})
	return srv.URL
}
