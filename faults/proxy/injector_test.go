package proxy

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

// upstream is a loopback HTTP dependency that counts the requests it served.
type upstream struct {
	srv    *httptest.Server
	served atomic.Int64
	body   []byte
}

func newUpstream(t *testing.T, bodySize int) *upstream {
	t.Helper()
	u := &upstream{body: []byte(strings.Repeat("x", bodySize))}
	if bodySize == 0 {
		u.body = []byte("ok")
	}
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.served.Add(1)
		_, _ = w.Write(u.body)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) addr() string { return u.srv.Listener.Addr().String() }

// client is an HTTP client with its own transport, so each case starts with an empty pool.
func newClient(t *testing.T, timeout time.Duration) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConnsPerHost: 4}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: timeout}
}

// get fetches url and reads the whole body; reused says whether a pooled connection was used.
func get(c *http.Client, url string) (body string, reused bool, err error) {
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { reused = reused || i.Reused }}
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodGet, url, nil)
	if err != nil {
		return "", false, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", reused, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = errors.New(resp.Status)
	}
	return string(b), reused, err
}

func mustGet(t *testing.T, c *http.Client, url string) {
	t.Helper()
	if _, _, err := get(c, url); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// fixture is one proxy in front of one upstream.
type fixture struct {
	inj   Injector
	up    *upstream
	name  string
	url   string // through the proxy
	ctx   context.Context
	proxy string // listen address
}

func newFixture(t *testing.T, inj Injector, name string, bodySize int) *fixture {
	t.Helper()
	up := newUpstream(t, bodySize)
	ctx := context.Background()
	listen, err := inj.AddProxy(ctx, name, up.addr())
	if err != nil {
		t.Fatalf("AddProxy: %v", err)
	}
	if !strings.HasPrefix(listen, "127.0.0.1:") || strings.HasSuffix(listen, ":0") {
		t.Fatalf("proxy listens on %q, want 127.0.0.1 and a real port", listen)
	}
	return &fixture{inj: inj, up: up, name: name, url: "http://" + listen + "/", ctx: ctx, proxy: listen}
}

// apply installs the effect of the fault p (every connection, downstream).
func (f *fixture) apply(t *testing.T, p faults.Params) {
	t.Helper()
	flt := faults.New(f.name, p)
	if err := f.inj.Apply(f.ctx, f.name, flt.Effect()); err != nil {
		t.Fatalf("Apply(%s): %v", flt, err)
	}
}

func (f *fixture) clear(t *testing.T) {
	t.Helper()
	if err := f.inj.Clear(f.ctx, f.name); err != nil {
		t.Fatalf("Clear: %v", err)
	}
}

// runInjectorSuite specifies the behaviour every Injector must have. newInj returns a fresh
// injector; the suite closes it.
func runInjectorSuite(t *testing.T, newInj func(t *testing.T) Injector) {
	inj := newInj(t)
	t.Cleanup(func() { _ = inj.Close(context.Background()) })
	n := 0
	fresh := func(t *testing.T, bodySize int) *fixture {
		n++
		return newFixture(t, inj, "dep"+string(rune('a'+n)), bodySize)
	}

	t.Run("no fault passes through", func(t *testing.T) {
		f := fresh(t, 0)
		body, _, err := get(newClient(t, 5*time.Second), f.url)
		if err != nil || body != "ok" {
			t.Fatalf("GET = %q, %v; want ok", body, err)
		}
	})

	t.Run("latency adds at least the amount", func(t *testing.T) {
		const latency = 60 * time.Millisecond
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		f.apply(t, &faults.Latency{Latency: latency})
		start := time.Now()
		mustGet(t, c, f.url)
		if d := time.Since(start); d < latency {
			t.Errorf("GET through a %v latency took %v", latency, d)
		}
	})

	t.Run("latency hits a live keep-alive connection at once", func(t *testing.T) {
		const latency = 60 * time.Millisecond
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		mustGet(t, c, f.url) // opens the connection the next request reuses
		f.apply(t, &faults.Latency{Latency: latency})
		start := time.Now()
		_, reused, err := get(c, f.url)
		if err != nil {
			t.Fatal(err)
		}
		if !reused {
			t.Fatal("second request did not reuse the pooled connection")
		}
		if d := time.Since(start); d < latency {
			t.Errorf("GET on a live connection took %v, want at least %v", d, latency)
		}
	})

	t.Run("clearing latency releases held data at once", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 0) // no client timeout: only the release can end the request
		f.apply(t, &faults.Latency{Latency: time.Hour})
		done := make(chan error, 1)
		go func() { _, _, err := get(c, f.url); done <- err }()
		// Whether Clear lands before or after the response reaches the toxic, the request must
		// complete; if held data were not released it would hang for an hour.
		for f.up.served.Load() == 0 {
			runtime.Gosched()
		}
		f.clear(t)
		if err := <-done; err != nil {
			t.Fatalf("GET after clearing the latency: %v", err)
		}
	})

	t.Run("reset gives connection reset", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		f.apply(t, &faults.Reset{})
		_, _, err := get(c, f.url)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("GET = %v, want ECONNRESET", err)
		}
		f.clear(t)
		mustGet(t, c, f.url)
	})

	t.Run("reset on a pooled connection", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		mustGet(t, c, f.url)
		before := f.up.served.Load()
		f.apply(t, &faults.Reset{})
		_, _, err := get(c, f.url)
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("GET on a pooled connection = %v, want ECONNRESET", err)
		}
		// The pooled connection is closed gracefully (EOF), the transport retries the GET on a new
		// connection, and that one is reset: the dependency served the request twice.
		if got := f.up.served.Load() - before; got != 2 {
			t.Errorf("dependency served %d requests for one GET, want 2 (EOF on the pooled connection, then a retry)", got)
		}
	})

	t.Run("reset on a pooled connection without retry reads EOF", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		mustGet(t, c, f.url)
		f.apply(t, &faults.Reset{})
		// A body without GetBody makes the request non-replayable, so the transport cannot retry
		// and the first connection's fate shows: a graceful close, not an RST.
		req, err := http.NewRequest(http.MethodPost, f.url, io.NopCloser(strings.NewReader("x")))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, io.EOF) {
			t.Fatalf("POST on a pooled connection = %v, want EOF", err)
		}
	})

	t.Run("timeout hangs until the client timeout", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 50*time.Millisecond)
		f.apply(t, &faults.Timeout{})
		_, _, err := get(c, f.url)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("GET = %v, want a client timeout", err)
		}
		f.clear(t)
		mustGet(t, c, f.url)
	})

	t.Run("clearing timeout closes the stalled connection", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 0) // no client timeout: only Clear can end the request
		f.apply(t, &faults.Timeout{})
		done := make(chan error, 1)
		go func() { _, _, err := get(c, f.url); done <- err }()
		for f.up.served.Load() == 0 {
			runtime.Gosched()
		}
		f.clear(t)
		// The stalled response is dropped, not delivered: the connection is closed under it.
		if err := <-done; !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("GET stalled by a cleared timeout = %v, want EOF", err)
		}
	})

	t.Run("down refuses connections and Clear restores", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		mustGet(t, c, f.url) // a pooled connection, which down must close
		f.apply(t, &faults.Down{})
		f.apply(t, &faults.Down{}) // idempotent
		_, _, err := get(c, f.url)
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("GET while down = %v, want ECONNREFUSED", err)
		}
		f.clear(t)
		body, _, err := get(c, f.url)
		if err != nil || body != "ok" {
			t.Fatalf("GET after Clear = %q, %v", body, err)
		}
	})

	t.Run("a toxic added to a down proxy leaves it down until Clear", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		f.apply(t, &faults.Down{})
		f.apply(t, &faults.Latency{Latency: time.Millisecond})
		if _, _, err := get(c, f.url); !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("GET while down with a toxic = %v, want ECONNREFUSED", err)
		}
		f.clear(t)
		mustGet(t, c, f.url)
	})

	t.Run("toxics add up and one of the same type and stream replaces the last", func(t *testing.T) {
		const latency = 40 * time.Millisecond
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		f.apply(t, &faults.Latency{Latency: time.Hour})
		f.apply(t, &faults.Latency{Latency: latency}) // replaces the hour, or the GET would hang
		up := faults.New(f.name, &faults.Latency{Latency: latency})
		up.Direction = faults.Upstream
		if err := f.inj.Apply(f.ctx, f.name, up.Effect()); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		mustGet(t, c, f.url)
		if d := time.Since(start); d < 2*latency {
			t.Errorf("GET through %v upstream and %v downstream took %v, want at least %v", latency, latency, d, 2*latency)
		}
	})

	t.Run("an upstream reset never reaches the dependency", func(t *testing.T) {
		f := fresh(t, 0)
		c := newClient(t, 5*time.Second)
		up := faults.Fault{Dependency: f.name, Type: "reset", Params: &faults.Reset{}, Direction: faults.Upstream}
		if err := f.inj.Apply(f.ctx, f.name, up.Effect()); err != nil {
			t.Fatal(err)
		}
		if _, _, err := get(c, f.url); !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("GET = %v, want ECONNRESET", err)
		}
		if n := f.up.served.Load(); n != 0 {
			t.Errorf("dependency served %d requests through an upstream reset, want 0", n)
		}
	})

	t.Run("limit_data cuts the answer", func(t *testing.T) {
		const size = 10 * 1024
		f := fresh(t, size)
		c := newClient(t, 5*time.Second)
		f.apply(t, &faults.LimitData{Bytes: size / 2})
		body, _, err := get(c, f.url)
		if err == nil || len(body) >= size {
			t.Fatalf("GET = %d bytes, %v; want a cut answer", len(body), err)
		}
	})

	t.Run("a toxic on a share of connections is accepted", func(t *testing.T) {
		f := fresh(t, 0)
		half := faults.Fault{Dependency: f.name, Type: "slicer", Params: &faults.Slicer{AverageSize: 1}, Toxicity: 0.5}
		if err := f.inj.Apply(f.ctx, f.name, half.Effect()); err != nil {
			t.Fatal(err)
		}
		mustGet(t, newClient(t, 5*time.Second), f.url) // sliced to single bytes or not, the answer is whole
	})

	t.Run("the dependency's status is not the proxy's", func(t *testing.T) {
		f := fresh(t, 0)
		if err := f.inj.Apply(f.ctx, f.name, faults.New(f.name, &faults.HTTPError{}).Effect()); err != nil {
			t.Fatalf("Apply(http-error) = %v, want nil: nothing to do on the proxy", err)
		}
		mustGet(t, newClient(t, 5*time.Second), f.url)
	})

	t.Run("bandwidth slows the response", func(t *testing.T) {
		const size, rate = 20 * 1024, 100 // 20 KiB at 100 KB/s: about 200ms
		f := fresh(t, size)
		c := newClient(t, 10*time.Second)
		f.apply(t, &faults.Bandwidth{RateKBps: rate})
		start := time.Now()
		body, _, err := get(c, f.url)
		if err != nil || len(body) != size {
			t.Fatalf("GET = %d bytes, %v", len(body), err)
		}
		if d, want := time.Since(start), 150*time.Millisecond; d < want {
			t.Errorf("%d bytes at %d KB/s took %v, want at least %v", size, rate, d, want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		f := fresh(t, 0)
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		reset := faults.New(f.name, &faults.Reset{}).Effect()
		toxicWith := func(change func(*faults.Toxic)) faults.Effect {
			t := *reset.Toxic
			change(&t)
			return faults.Effect{Toxic: &t}
		}
		tests := []struct {
			name string
			call func() error
			want error
		}{
			{"toxic without a type", func() error { return inj.Apply(f.ctx, f.name, faults.Effect{Toxic: &faults.Toxic{Toxicity: 1}}) }, ErrInvalidToxic},
			{"toxicity zero", func() error { return inj.Apply(f.ctx, f.name, toxicWith(func(t *faults.Toxic) { t.Toxicity = 0 })) }, ErrInvalidToxic},
			{"unknown stream", func() error {
				return inj.Apply(f.ctx, f.name, toxicWith(func(t *faults.Toxic) { t.Stream = "sideways" }))
			}, ErrInvalidToxic},
			{"apply to unknown proxy", func() error { return inj.Apply(f.ctx, "nope", reset) }, ErrUnknownProxy},
			{"apply status to unknown proxy", func() error { return inj.Apply(f.ctx, "nope", faults.Effect{Status: 500}) }, ErrUnknownProxy},
			{"clear unknown proxy", func() error { return inj.Clear(f.ctx, "nope") }, ErrUnknownProxy},
			{"duplicate proxy", func() error { _, err := inj.AddProxy(f.ctx, f.name, f.up.addr()); return err }, ErrProxyExists},
			{"canceled apply", func() error { return inj.Apply(canceled, f.name, reset) }, context.Canceled},
			{"canceled clear", func() error { return inj.Clear(canceled, f.name) }, context.Canceled},
			{"canceled add", func() error { _, err := inj.AddProxy(canceled, "new", f.up.addr()); return err }, context.Canceled},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if err := tt.call(); !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
			})
		}
		// None of the refused calls left a fault behind.
		mustGet(t, newClient(t, 5*time.Second), f.url)
	})

	t.Run("close removes every proxy", func(t *testing.T) {
		inj := newInj(t)
		a := newFixture(t, inj, "close-a", 0)
		b := newFixture(t, inj, "close-b", 0)
		c := newClient(t, 5*time.Second)
		mustGet(t, c, a.url)
		a.apply(t, &faults.Latency{Latency: time.Hour}) // held data at Close
		b.apply(t, &faults.Down{})
		held := make(chan error, 1)
		go func() { _, _, err := get(c, a.url); held <- err }()
		for a.up.served.Load() < 2 {
			runtime.Gosched()
		}
		if err := inj.Close(context.Background()); err != nil {
			t.Fatalf("Close: %v", err)
		}
		<-held // released or cut, but not left hanging
		if err := inj.Close(context.Background()); err != nil {
			t.Errorf("second Close: %v", err)
		}
		for _, f := range []*fixture{a, b} {
			if conn, err := net.Dial("tcp", f.proxy); err == nil {
				conn.Close()
				t.Errorf("proxy %s still accepts connections after Close", f.proxy)
			}
		}
		if err := inj.Apply(context.Background(), "close-a", faults.New("close-a", &faults.Reset{}).Effect()); !errors.Is(err, ErrClosed) {
			t.Errorf("Apply after Close = %v, want ErrClosed", err)
		}
		if _, err := inj.AddProxy(context.Background(), "close-c", a.up.addr()); !errors.Is(err, ErrClosed) {
			t.Errorf("AddProxy after Close = %v, want ErrClosed", err)
		}
	})
}

// The version ModuleVersion falls back to is the one go.mod requires.
func TestFallbackVersionIsGoModPin(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "\t" + toxiproxyModule + " " + fallbackVersion + "\n"
	if !strings.Contains(string(b), want) {
		t.Errorf("go.mod has no line %q: update fallbackVersion with the pin", strings.TrimSpace(want))
	}
}
