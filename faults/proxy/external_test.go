package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/bulkheadlab/bulkhead/faults/proxy/proxytest"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// newAPIServer serves Toxiproxy's real HTTP API in this test process (see proxytest).
func newAPIServer(t *testing.T) string {
	t.Helper()
	return proxytest.NewAPIServer(t)
}

func TestExternalAgainstInProcessAPI(t *testing.T) {
	runInjectorSuite(t, func(t *testing.T) Injector {
		x, err := NewExternal(context.Background(), newAPIServer(t))
		if err != nil {
			t.Fatal(err)
		}
		return x
	})
}

func TestNewExternal(t *testing.T) {
	t.Run("unreachable URL gives a clear error", func(t *testing.T) {
		_, err := NewExternal(context.Background(), "http://127.0.0.1:1")
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
		if want := "toxiproxy at http://127.0.0.1:1 unreachable: "; !strings.Contains(err.Error(), want) {
			t.Errorf("err = %q, want it to contain %q", err, want)
		}
	})
	t.Run("scheme may be left out", func(t *testing.T) {
		u := newAPIServer(t)
		x, err := NewExternal(context.Background(), strings.TrimPrefix(u, "http://")+"/")
		if err != nil {
			t.Fatal(err)
		}
		defer x.Close(context.Background())
		if x.URL() != u {
			t.Errorf("URL() = %q, want %q", x.URL(), u)
		}
		if x.Version() != toxiproxy.Version {
			t.Errorf("Version() = %q, want the server's %q", x.Version(), toxiproxy.Version)
		}
	})
	t.Run("not a toxiproxy", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		defer srv.Close()
		if _, err := NewExternal(context.Background(), srv.URL); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("err = %v, want ErrUnreachable", err)
		}
	})
	t.Run("canceled context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := NewExternal(ctx, newAPIServer(t))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
	t.Run("a call that hangs ends with its context", func(t *testing.T) {
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}))
		defer srv.Close()
		defer close(release)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := NewExternal(ctx, srv.URL); errc <- err }()
		<-entered
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// Ping answers nil while the server answers and, once it is gone, an error wrapping
// ErrUnreachable that names its address; a context that ends first ends the call.
func TestExternalPing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/version" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"version": "2.12.0"}`))
	}))
	x, err := NewExternal(context.Background(), srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(context.Background())
	if err := x.Ping(context.Background()); err != nil {
		t.Errorf("Ping of a live server = %v, want nil", err)
	}
	srv.Close()
	err = x.Ping(context.Background())
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "toxiproxy at "+srv.URL+" unreachable") {
		t.Errorf("Ping of a closed server = %v, want ErrUnreachable naming %s", err, srv.URL)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := x.Ping(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Ping with a cancelled context = %v, want context.Canceled", err)
	}
}

// Close on a nil *External returns nil: startBench's deferred cleanup used to call it on the
// typed nil a failed NewExternal left in an Injector and panic (issue 10).
func TestExternalNilClose(t *testing.T) {
	var inj Injector
	x, err := NewExternal(context.Background(), "http://127.0.0.1:1")
	if err == nil {
		t.Fatal("NewExternal on a closed port succeeded")
	}
	inj = x // a typed nil: inj != nil
	if err := inj.Close(context.Background()); err != nil {
		t.Fatalf("Close on a nil *External = %v, want nil", err)
	}
}

func TestExternalCloseLeavesOtherProxies(t *testing.T) {
	u := newAPIServer(t)
	ctx := context.Background()
	other, err := NewExternal(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	otherListen, err := other.AddProxy(ctx, "someone-else", "127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	x, err := NewExternal(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := x.AddProxy(ctx, "mine", "127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(ctx); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", otherListen)
	if err != nil {
		t.Fatalf("another client's proxy was removed: %v", err)
	}
	conn.Close()
	if err := other.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestExternalBinary runs the suite against a real toxiproxy-server process, built from the
// module go.mod pins.
func TestExternalBinary(t *testing.T) {
	testenv.Long(t, "builds and starts a toxiproxy-server process")
	bin := toxiproxyServerBinary(t)
	apiURL := startToxiproxyServer(t, bin)
	runInjectorSuite(t, func(t *testing.T) Injector {
		x, err := NewExternal(context.Background(), apiURL)
		if err != nil {
			t.Fatal(err)
		}
		return x
	})
}

// startToxiproxyServer starts bin on 127.0.0.1 on a free port, waits until its API answers and
// stops it (by its own process) at cleanup.
func startToxiproxyServer(t *testing.T, bin string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // the server binds it next; a small window another process could take it in
	cmd := exec.Command(bin, "-host", "127.0.0.1", "-port", strconv.Itoa(port))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var werr error
	go func() { werr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // this process only, by its PID
		<-exited
	})
	apiURL := "http://127.0.0.1:" + strconv.Itoa(port)
	// Startup has no readiness signal: poll the API until it answers or the process exits.
	for deadline := time.Now().Add(10 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		x, err := NewExternal(ctx, apiURL)
		cancel()
		if err == nil {
			_ = x.Close(context.Background())
			return apiURL
		}
		select {
		case <-exited:
			t.Fatalf("toxiproxy-server exited: %v", werr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("toxiproxy-server did not answer: %v", err)
		}
	}
}

// GET /version answers JSON from Toxiproxy v2.7.0 on and the bare version before; both read as
// the version.
func TestParseVersion(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"version": "2.12.0"}` + "\n", "2.12.0"}, // v2.7.0 and later
		{`{"version": "git"}`, "git"},              // built from the module without ldflags
		{"2.5.0\n", "2.5.0"},                       // v2.5.0: plain text
		{`{"name": "x"}`, `{"name": "x"}`},         // not Toxiproxy's shape: kept as it came
	} {
		if got := parseVersion([]byte(c.body)); got != c.want {
			t.Errorf("parseVersion(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}
