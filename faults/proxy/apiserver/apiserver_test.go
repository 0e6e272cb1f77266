package apiserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/faults/proxy/apiserver"
)

// A Server answers the External injector like toxiproxy-server: a proxy made through the API
// forwards to its upstream, a reset fault installed through the API breaks it, and stopping
// the server removes the proxy (its listener closes).
func TestServerServesTheAPIAndStopsItsProxies(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "up") }))
	defer up.Close()
	s, err := apiserver.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	defer func() { stop(); <-served }()

	x, err := proxy.NewExternal(ctx, "http://"+s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	listen, err := x.AddProxyAt(ctx, "dep", "127.0.0.1:0", strings.TrimPrefix(up.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	get := func() (string, error) {
		resp, err := client.Get("http://" + listen + "/")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	if body, err := get(); err != nil || body != "up" {
		t.Fatalf("through the proxy: %q, %v; want the upstream's answer", body, err)
	}
	if err := x.Apply(ctx, "dep", faults.New("dep", &faults.Reset{}).Effect()); err != nil {
		t.Fatal(err)
	}
	if _, err := get(); err == nil {
		t.Fatal("a reset fault installed through the API let a request through")
	}

	stop()
	if err := <-served; err != nil {
		t.Fatalf("Serve after stop: %v", err)
	}
	served <- nil // for the deferred receive
	if c, err := net.DialTimeout("tcp", listen, time.Second); err == nil {
		c.Close()
		t.Fatalf("the proxy still listens on %s after the server stopped", listen)
	}
}

// Listen on an address already taken is an error naming it, not an exit of the process.
func TestListenTakenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = apiserver.Listen(l.Addr().String())
	var op *net.OpError
	if err == nil || !errors.As(err, &op) || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("err = %v, want a listen error naming %s", err, l.Addr())
	}
}

// The API is Toxiproxy's own route table with its middlewares: /version answers JSON (v2.7.0
// on), and a browser's user agent is refused, so a page open on the same host cannot drive the
// unauthenticated API.
func TestHandlerIsToxiproxysRoutes(t *testing.T) {
	srv := httptest.NewServer(apiserver.Handler(apiserver.NewToxiproxy()))
	defer srv.Close()
	get := func(path, agent string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("User-Agent", agent)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, b
	}
	code, body := get("/version", "Go-http-client/1.1")
	var v struct{ Version string }
	if code != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Version == "" {
		t.Errorf("GET /version: %d %q, want 200 and JSON naming a version", code, body)
	}
	if code, body := get("/proxies", "Mozilla/5.0 (X11; Linux x86_64)"); code != http.StatusForbidden {
		t.Errorf("GET /proxies from a browser: %d %q, want 403", code, body)
	}
}
