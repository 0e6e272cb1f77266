package h1

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// client is how the load generator uses Transport: no client timeout, redirects not followed.
func client(tr http.RoundTripper) *http.Client {
	return &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// netHTTPClient is the same client on net/http's Transport with the same timeout.
func netHTTPClient(timeout time.Duration) *http.Client {
	c := client(&http.Transport{})
	c.Timeout = timeout
	return c
}

// countingServer is an httptest server that counts the connections it accepted.
func countingServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// get does GET url through c and returns the status, the body and the error.
func get(t *testing.T, c *http.Client, url string, header ...string) (*http.Response, string, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

func TestResponsesOfEveryFramingArriveWholeOnOneConnection(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Bulkhead-Outcome", "ok")
		w.Header().Set("X-Seen-Attack", r.Header.Get("X-Vegeta-Attack"))
		w.Header().Set("X-Seen-Agent", r.UserAgent())
		switch r.URL.Path {
		case "/length":
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		case "/chunked":
			io.WriteString(w, "chunk one ")
			w.(http.Flusher).Flush()
			io.WriteString(w, "chunk two")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/big":
			io.WriteString(w, strings.Repeat("x", 100_000))
		case "/status":
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "rejected")
		case "/redirect":
			http.Redirect(w, r, "/length", http.StatusFound)
		}
	})
	tr := New(Options{Timeout: 5 * time.Second, MaxIdlePerHost: 10})
	defer tr.CloseIdleConnections()
	c := client(tr)
	for _, tc := range []struct {
		path, body string
		code       int
	}{
		{"/length", "hello", 200},
		{"/chunked", "chunk one chunk two", 200},
		{"/empty", "", 204},
		{"/big", strings.Repeat("x", 100_000), 200},
		{"/status?q=1", "rejected", 503},
		{"/redirect", "<a href=\"/length\">Found</a>.\n\n", 302},
		{"/length", "hello", 200},
	} {
		resp, body, err := get(t, c, srv.URL+tc.path, "X-Vegeta-Attack", "/a")
		if err != nil {
			t.Fatalf("%s: %v", tc.path, err)
		}
		if resp.StatusCode != tc.code || body != tc.body {
			t.Errorf("%s: got %d %q, want %d %q", tc.path, resp.StatusCode, body, tc.code, tc.body)
		}
		if got := resp.Header.Get("X-Seen-Attack"); got != "/a" {
			t.Errorf("%s: the server saw attack header %q, want /a", tc.path, got)
		}
		if got := resp.Header.Get("X-Seen-Agent"); got != "Go-http-client/1.1" {
			t.Errorf("%s: the server saw user agent %q, want net/http's", tc.path, got)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("sequential requests used %d connections, want 1 (keep-alive)", n)
	}
	if n := tr.Dials(); n != 1 {
		t.Errorf("the transport counted %d dials, want 1", n)
	}
}

func TestHeadResponseHasNoBody(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
	})
	tr := New(Options{Timeout: 5 * time.Second})
	c := client(tr)
	for range 2 {
		req, _ := http.NewRequest(http.MethodHead, srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if len(b) != 0 || resp.ContentLength != 1000 {
			t.Errorf("HEAD: body %d bytes, content length %d; want 0 and 1000", len(b), resp.ContentLength)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("two HEADs used %d connections, want 1", n)
	}
}

func TestConcurrentRequestsEachGetTheirOwnConnectionAndKeepIt(t *testing.T) {
	release := make(chan struct{})
	var arrived sync.WaitGroup
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			arrived.Done()
			<-release
		}
		io.WriteString(w, r.URL.Path)
	})
	tr := New(Options{Timeout: 5 * time.Second, MaxIdlePerHost: 10})
	c := client(tr)
	const n = 5
	arrived.Add(n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, body, err := get(t, c, srv.URL+"/hold"); err != nil || body != "/hold" {
				errs <- fmt.Errorf("body %q, error %v", body, err)
			}
		}()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for range 2 * n {
		if _, _, err := get(t, c, srv.URL+"/again"); err != nil {
			t.Fatal(err)
		}
	}
	if got := conns.Load(); got != n {
		t.Errorf("%d concurrent then %d sequential requests used %d connections, want %d", n, 2*n, got, n)
	}
}

func TestWarmOpensConnectionsThatTheFirstRequestsUseAndSendsNothing(t *testing.T) {
	release := make(chan struct{})
	var arrived sync.WaitGroup
	var requests atomic.Int64
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		arrived.Done()
		<-release
	})
	tr := New(Options{Timeout: 5 * time.Second, MaxIdlePerHost: 10})
	const n = 3
	if got := tr.Warm(t.Context(), srv.URL+"/x", n); got != n {
		t.Fatalf("Warm opened %d connections, want %d", got, n)
	}
	// n requests held at once need n connections: the warmed ones, with no dial.
	arrived.Add(n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if _, _, err := get(t, client(tr), srv.URL+"/x"); err != nil {
				t.Error(err)
			}
		})
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	if got := tr.Dials(); got != n {
		t.Errorf("%d dials for %d warmed connections and %d requests, want %d", got, n, n, n)
	}
	if got := conns.Load(); got != n {
		t.Errorf("the server accepted %d connections, want %d", got, n)
	}
	if got := requests.Load(); got != n {
		t.Errorf("the server saw %d requests for %d sent: Warm sent some", got, n)
	}
}

func TestWarmOpensNothingItWouldNotUse(t *testing.T) {
	srv, _ := countingServer(t, func(http.ResponseWriter, *http.Request) {})
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ln.Close()
		return "http://" + ln.Addr().String() + "/"
	}()
	for _, tc := range []struct {
		name        string
		o           Options
		url         string
		n           int
		want, dials int
	}{
		{"more than the pool keeps", Options{MaxIdlePerHost: 2}, srv.URL + "/", 5, 2, 2},
		{"keep-alive off", Options{DisableKeepAlives: true}, srv.URL + "/", 3, 0, 0},
		{"https, which net/http serves", Options{}, strings.Replace(srv.URL, "http:", "https:", 1) + "/", 3, 0, 0},
		{"a port nobody listens on: the first refusal ends it", Options{}, closed, 3, 0, 1},
		{"not a URL", Options{}, "http://[::1", 3, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := New(tc.o)
			if got := tr.Warm(t.Context(), tc.url, tc.n); got != tc.want {
				t.Errorf("Warm(%q, %d) opened %d connections, want %d", tc.url, tc.n, got, tc.want)
			}
			if got := tr.Dials(); got != uint64(tc.dials) {
				t.Errorf("Warm(%q, %d) dialed %d times, want %d", tc.url, tc.n, got, tc.dials)
			}
		})
	}
}

func TestConnectionCloseIsHonouredBothWays(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		w.Header().Set("X-Client-Close", fmt.Sprint(r.Close))
	})
	c := client(New(Options{Timeout: 5 * time.Second}))
	for _, path := range []string{"/close", "/close", "/keep", "/keep"} {
		if _, _, err := get(t, c, srv.URL+path); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 3 {
		t.Errorf("close, close, keep, keep used %d connections, want 3", n)
	}

	noKeep := client(New(Options{Timeout: 5 * time.Second, DisableKeepAlives: true}))
	before := conns.Load()
	for range 3 {
		resp, _, err := get(t, noKeep, srv.URL+"/keep")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("X-Client-Close") != "true" {
			t.Error("with keep-alives disabled the request did not ask to close")
		}
	}
	if n := conns.Load() - before; n != 3 {
		t.Errorf("3 requests without keep-alive used %d connections, want 3", n)
	}
}

// rawServer accepts connections on loopback and hands each to serve in its own goroutine.
func rawServer(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c)
			}()
		}
	}()
	return "http://" + ln.Addr().String() + "/"
}

// readRequest reads one request's head from br, or reports false when the client went away.
func readRequest(br *bufio.Reader) bool {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return false
		}
		if line == "\r\n" {
			return true
		}
	}
}

// oneShotServer answers one request per connection with 200 "ok" and then closes it without
// saying so, as a server whose keep-alive timeout just passed does. It returns its URL and the
// count of connections it accepted.
func oneShotServer(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var accepted atomic.Int64
	url := rawServer(t, func(c net.Conn) {
		accepted.Add(1)
		if readRequest(bufio.NewReader(c)) {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	return url, &accepted
}

func TestRequestOnAnIdleConnectionTheServerClosedIsSentAgain(t *testing.T) {
	url, accepted := oneShotServer(t)
	c := client(New(Options{Timeout: 5 * time.Second}))
	for i := range 5 {
		if _, body, err := get(t, c, url); err != nil || body != "ok" {
			t.Fatalf("request %d: body %q, error %v; want ok, retried on a new connection", i, body, err)
		}
	}
	if n := accepted.Load(); n < 5 {
		t.Errorf("the server accepted %d connections for 5 requests, want at least 5", n)
	}
}

func TestANonIdempotentRequestIsNotSentAgain(t *testing.T) {
	url, accepted := oneShotServer(t)
	c := client(New(Options{Timeout: 5 * time.Second}))
	if _, _, err := get(t, c, url); err != nil {
		t.Fatal(err)
	}
	// The connection is pooled; the server has closed it. A DELETE on it fails, as with net/http.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	if resp, err := c.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("DELETE on a connection the server closed succeeded; want the error, not a resend")
	}
	if n := accepted.Load(); n != 1 {
		t.Errorf("the server accepted %d connections, want 1 (the DELETE not resent)", n)
	}
}

// failures are servers that fail in each way the load generator classifies. Each returns the
// URL to GET.
var failures = []struct {
	name  string
	class string
	start func(t *testing.T) string
}{
	{"refused", "connection:refused", func(t *testing.T) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url := "http://" + ln.Addr().String() + "/"
		ln.Close()
		return url
	}},
	{"timeout before the headers", "timeout:client", func(t *testing.T) string {
		done := make(chan struct{})
		// Registered after rawServer's cleanup, so it runs first and the handler returns.
		defer t.Cleanup(func() { close(done) })
		return rawServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			<-done
		})
	}},
	{"timeout in the body", "timeout:client", func(t *testing.T) string {
		done := make(chan struct{})
		// Registered after rawServer's cleanup, so it runs first and the handler returns.
		defer t.Cleanup(func() { close(done) })
		return rawServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
			<-done
		})
	}},
	{"reset", "connection:reset", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			c.(*net.TCPConn).SetLinger(0)
		})
	}},
	{"closed before the response", "connection:eof", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) { readRequest(bufio.NewReader(c)) })
	}},
	{"closed in the body", "connection:eof", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
		})
	}},
	{"not HTTP", "other:malformed-http-response-ssh-openssh", func(t *testing.T) string {
		return rawServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			io.WriteString(c, "SSH-2.0-OpenSSH\r\n\r\n")
		})
	}},
}

// classOf does what the load generator does with a GET: read the whole body, and classify the
// status and headers or the error text.
func classOf(t *testing.T, c *http.Client, url string) (string, error) {
	resp, _, err := get(t, c, url)
	if err != nil {
		return outcome.Classify(0, nil, err.Error()), err
	}
	return outcome.Classify(resp.StatusCode, resp.Header, ""), nil
}

func TestEveryFailureGetsTheClassNetHTTPGives(t *testing.T) {
	const timeout = 200 * time.Millisecond
	for _, f := range failures {
		t.Run(f.name, func(t *testing.T) {
			url := f.start(t)
			tr := New(Options{Timeout: timeout})
			defer tr.CloseIdleConnections()
			got, err := classOf(t, client(tr), url)
			want, wantErr := classOf(t, netHTTPClient(timeout), url)
			if got != f.class || want != f.class {
				t.Errorf("class %q (error %v), net/http's %q (error %v); want both %q", got, err, want, wantErr, f.class)
			}
			var ne net.Error
			if strings.HasPrefix(f.class, "timeout") && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Errorf("error %v is not a net.Error timeout", err)
			}
		})
	}
}

func TestHeadersThatWouldBreakTheFramingAreNotSent(t *testing.T) {
	var requests atomic.Int64
	srv, _ := countingServer(t, func(http.ResponseWriter, *http.Request) { requests.Add(1) })
	c := client(New(Options{Timeout: 5 * time.Second}))
	for _, h := range [][2]string{
		{"X-Vegeta-Attack", "/a\r\nX-Injected: 1"},
		{"X-Vegeta-Attack", "/a\nGET / HTTP/1.1"},
		{"Bad Name", "v"},
		{"X-Ok", "nul\x00"},
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header[h[0]] = []string{h[1]}
		if _, err := c.Do(req); err == nil || !strings.Contains(err.Error(), "invalid header field") {
			t.Errorf("header %q: %q: error %v, want an invalid header field error", h[0], h[1], err)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
}

func TestRequestsWithABodyOrCredentialsGoThroughNetHTTP(t *testing.T) {
	srv, _ := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if user, pass, ok := r.BasicAuth(); ok {
			b = []byte(user + ":" + pass)
		}
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	c := client(New(Options{Timeout: 5 * time.Second}))
	// Credentials in the URL become an Authorization header, as net/http sends them.
	u := strings.Replace(srv.URL, "http://", "http://user:secret@", 1)
	if resp, err := c.Get(u + "/auth"); err != nil {
		t.Fatal(err)
	} else {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "GET user:secret" {
			t.Errorf("with credentials in the URL the server saw %q, want GET user:secret", b)
		}
	}
	resp, err := c.Post(srv.URL, "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "POST payload" {
		t.Errorf("the server saw %q, want POST payload", b)
	}
}

// https goes through net/http, under the same timeout as h1's own exchanges: a body that
// stalls ends in a timeout, as it would with http.Client's.
func TestHTTPSGoesThroughNetHTTPUnderTheTimeout(t *testing.T) {
	done := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stall" {
			w.Header().Set("Content-Length", "10")
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
			<-done
			return
		}
		io.WriteString(w, "over tls")
	}))
	defer srv.Close()
	defer close(done)
	tr := New(Options{Timeout: 300 * time.Millisecond})
	tr.fallback.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	c := client(tr)
	if _, body, err := get(t, c, srv.URL+"/"); err != nil || body != "over tls" {
		t.Fatalf("GET over https: body %q, error %v", body, err)
	}
	class, err := classOf(t, c, srv.URL+"/stall")
	if class != "timeout:client" {
		t.Errorf("a stalled https body: class %q (error %v), want timeout:client", class, err)
	}
}

func TestAnUnreadBodyClosedEarlyKeepsASmallConnectionAndDropsALargeOne(t *testing.T) {
	srv, conns := countingServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := 100
		if r.URL.Path == "/large" {
			n = 1 << 20
		}
		io.WriteString(w, strings.Repeat("x", n))
	})
	c := client(New(Options{Timeout: 5 * time.Second}))
	for _, path := range []string{"/small", "/small", "/large", "/small"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := conns.Load(); n != 2 {
		t.Errorf("small, small, large, small closed unread used %d connections, want 2", n)
	}
}
