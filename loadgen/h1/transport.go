// Package h1 is a lean HTTP/1.1 client transport for the load generator: an http.RoundTripper
// that writes the request and reads the response in the calling goroutine, on a pooled
// keep-alive connection.
//
// net/http's Transport gives every connection a reader and a writer goroutine and hands each
// request and response between them and the caller over channels; it also starts a timer and a
// goroutine per request when http.Client.Timeout is set on an unknown transport. At thousands of
// requests per second on one core those hand-offs are a quarter of the load generator's CPU
// (measured in issue 12). Transport does the same exchange with none of them: the caller writes
// the request into the connection's buffer, flushes it, and parks in the netpoller until the
// response's first bytes arrive, and the one deadline set on the connection bounds the whole
// exchange. On Linux the reads and writes are raw system calls (rawIO), which keep the runtime's
// monitor thread asleep.
//
// It handles only what a load generator sends: plain http://, no credentials in the URL, no
// request body, no upgrade. Every
// other request goes to Fallback (a net/http Transport), so https, bodies and proxies keep
// net/http's behaviour. Errors are net/http's and the net package's own (connection refused,
// connection reset, EOF, i/o timeout), wrapped by http.Client as usual, so that classifying them
// by their text gives the same classes as with net/http.
package h1

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// Transport is an http.RoundTripper for plain HTTP/1.1 requests without a body. The zero value
// is not ready: use New. Its methods are safe for concurrent use.
type Transport struct {
	// Fallback serves every request Transport does not handle itself.
	fallback *http.Transport
	timeout  time.Duration
	maxIdle  int
	noKeep   bool
	dialer   net.Dialer

	mu   sync.Mutex
	idle map[string][]*conn // per host:port, the most recently used last

	dials atomic.Uint64
}

// Options configure New.
type Options struct {
	// Timeout bounds each exchange, from the start of RoundTrip until the response body is
	// read or closed: dialing, writing, waiting for the headers and reading the body. Zero means
	// none. It plays http.Client.Timeout's part: leave the client's Timeout zero.
	Timeout time.Duration
	// MaxIdlePerHost is how many idle connections are kept per host:port (0: 2, as net/http).
	MaxIdlePerHost int
	// DisableKeepAlives sends "Connection: close" and uses each connection once.
	DisableKeepAlives bool
	// KeepAlive is the TCP keep-alive period of new connections (0: 15 s, as net.Dialer).
	KeepAlive time.Duration
}

// New returns a Transport with the options; requests it does not handle go to a net/http
// Transport configured alike, under the same timeout.
func New(o Options) *Transport {
	if o.MaxIdlePerHost <= 0 {
		o.MaxIdlePerHost = http.DefaultMaxIdleConnsPerHost
	}
	d := net.Dialer{KeepAlive: o.KeepAlive}
	return &Transport{
		fallback: &http.Transport{
			DialContext:         d.DialContext,
			MaxIdleConnsPerHost: o.MaxIdlePerHost,
			DisableKeepAlives:   o.DisableKeepAlives,
		},
		timeout: o.Timeout,
		maxIdle: o.MaxIdlePerHost,
		noKeep:  o.DisableKeepAlives,
		dialer:  d,
		idle:    map[string][]*conn{},
	}
}

// conn is one connection with its buffers.
type conn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// handles reports whether RoundTrip does the exchange itself.
func handles(req *http.Request) bool {
	return req.URL != nil && req.URL.Scheme == "http" && req.URL.Host != "" && req.URL.User == nil &&
		(req.Body == nil || req.Body == http.NoBody) && req.ContentLength <= 0 &&
		len(req.TransferEncoding) == 0 && req.Method != http.MethodConnect &&
		req.Header.Get("Upgrade") == "" && len(req.Trailer) == 0
}

// RoundTrip sends req and returns its response, whose Body reads from the connection in the
// caller's goroutine. It blocks until the response headers arrive, the timeout passes or
// req's context is done (the context bounds the headers; the timeout bounds the body too).
// Closing the Body returns the connection to the pool when the body was read to its end and both
// sides allow keep-alive; otherwise the connection is closed.
//
// Like net/http, an idempotent request that fails on a reused connection before any byte of the
// response arrived (the server closed the idle connection) is sent again on another one.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !handles(req) {
		return t.roundTripFallback(req)
	}
	ctx := req.Context()
	deadline := time.Time{}
	if t.timeout > 0 {
		deadline = time.Now().Add(t.timeout)
	}
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline = d
	}
	addr := hostPort(req.URL.Host)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.conn(ctx, addr, deadline, attempt)
		if err != nil {
			return nil, err
		}
		resp, err := t.exchange(ctx, c, req, addr, deadline)
		if err == nil {
			return resp, nil
		}
		c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !reused || !retryable(req, err) {
			var nr nothingRead
			if errors.As(err, &nr) {
				err = nr.err
			}
			return nil, err
		}
	}
}

// roundTripFallback sends req through net/http's Transport, bounded by the timeout from now
// until its body is closed, as h1's own exchanges are (and as http.Client's timeout would).
func (t *Transport) roundTripFallback(req *http.Request) (*http.Response, error) {
	if t.timeout <= 0 {
		return t.fallback.RoundTrip(req)
	}
	ctx, cancel := context.WithTimeout(req.Context(), t.timeout)
	resp, err := t.fallback.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = cancelBody{resp.Body, cancel}
	return resp, nil
}

// cancelBody releases its request's timeout when closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// maxReusedAttempts is how many idle connections RoundTrip tries before it dials a new one.
const maxReusedAttempts = 2

// conn returns an idle connection to addr (reused true) or dials one.
func (t *Transport) conn(ctx context.Context, addr string, deadline time.Time, attempt int) (*conn, bool, error) {
	if attempt < maxReusedAttempts && !t.noKeep {
		t.mu.Lock()
		if list := t.idle[addr]; len(list) > 0 {
			c := list[len(list)-1]
			list[len(list)-1] = nil
			t.idle[addr] = list[:len(list)-1]
			t.mu.Unlock()
			return c, true, nil
		}
		t.mu.Unlock()
	}
	d := t.dialer
	d.Deadline = deadline
	t.dials.Add(1)
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	rw := newIO(nc)
	return &conn{nc: nc, br: bufio.NewReaderSize(rw, 4096), bw: bufio.NewWriterSize(rw, 1024)}, false, nil
}

// exchange writes req on c and reads the response headers; the body is left to read.
func (t *Transport) exchange(ctx context.Context, c *conn, req *http.Request, addr string, deadline time.Time) (*http.Response, error) {
	if err := c.nc.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if done := ctx.Done(); done != nil {
		// Cancelling the request expires the connection's deadline, which wakes the blocked read
		// or write; RoundTrip then reports the context's error.
		stop := context.AfterFunc(ctx, func() { c.nc.SetDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	if err := t.writeRequest(c.bw, req); err != nil {
		return nil, err
	}
	if err := c.bw.Flush(); err != nil {
		return nil, err
	}
	// Nothing of the response read yet: a failure here on a reused connection is retryable.
	if _, err := c.br.Peek(1); err != nil {
		return nil, nothingRead{err}
	}
	for {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		// 1xx informational responses precede the real one (101 is not sent for, see handles).
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		keep := !t.noKeep && !resp.Close && !req.Close
		resp.Body = &body{rc: resp.Body, t: t, c: c, addr: addr, keep: keep}
		return resp, nil
	}
}

// nothingRead marks an error that came before any byte of the response.
type nothingRead struct{ err error }

func (e nothingRead) Error() string { return e.err.Error() }
func (e nothingRead) Unwrap() error { return e.err }

// retryable reports whether req, whose exchange failed on a reused connection, may be sent
// again: it is idempotent (as net/http judges: GET, HEAD, OPTIONS, TRACE, or an idempotency key)
// and the server closed the connection before it read the request (write failed, or EOF or a
// reset before any response byte). A timeout is not retried.
func retryable(req *http.Request, err error) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
	default:
		if _, ok := req.Header["Idempotency-Key"]; !ok {
			if _, ok := req.Header["X-Idempotency-Key"]; !ok {
				return false
			}
		}
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false
	}
	var nr nothingRead
	if errors.As(err, &nr) {
		return true
	}
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}

// writeRequest writes req's request line and headers, as net/http would for a bodiless request:
// Host, User-Agent (Go's default unless set), the request's headers, and "Connection: close"
// when keep-alive is off. A header that would break the framing is an error, not sent.
func (t *Transport) writeRequest(w *bufio.Writer, req *http.Request) error {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	if !httpguts.ValidHeaderFieldName(method) { // a method is a token, as a field name is
		return fmt.Errorf("net/http: invalid method %q", method)
	}
	if !httpguts.ValidHostHeader(host) {
		return fmt.Errorf("net/http: invalid Host header")
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	if _, ok := req.Header["User-Agent"]; !ok {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	if err := writeHeader(w, req.Header); err != nil {
		return err
	}
	if t.noKeep || req.Close {
		w.WriteString("Connection: close\r\n")
	}
	_, err := w.WriteString("\r\n")
	return err
}

// writeHeader writes h's fields, checked as net/http checks them (httpguts), but those the
// request line and the framing own (Host, Content-Length, Transfer-Encoding, Trailer) and a
// User-Agent set empty, which means none.
func writeHeader(w *bufio.Writer, h http.Header) error {
	for k, vs := range h {
		switch {
		case k == "Host", k == "Content-Length", k == "Transfer-Encoding", k == "Trailer":
			continue
		case k == "User-Agent" && len(vs) > 0 && vs[0] == "":
			continue
		case !httpguts.ValidHeaderFieldName(k):
			return fmt.Errorf("net/http: invalid header field name %q", k)
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("net/http: invalid header field value for %q", k)
			}
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(strings.TrimSpace(v))
			w.WriteString("\r\n")
		}
	}
	return nil
}

// body is a response body that gives its connection back when done.
type body struct {
	rc   io.ReadCloser
	t    *Transport
	c    *conn
	addr string
	keep bool
	eof  bool
	done bool
}

func (b *body) Read(p []byte) (int, error) {
	if b.done {
		return 0, errors.New("http: read on closed response body")
	}
	n, err := b.rc.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// Close releases the connection: back to the pool when the body was read to its end (or ends
// within a few more KB) and keep-alive holds, closed otherwise.
func (b *body) Close() error {
	if b.done {
		return nil
	}
	if !b.eof && b.keep {
		if _, err := io.CopyN(io.Discard, b.rc, maxDrain); err == io.EOF {
			b.eof = true
		}
	}
	b.done = true
	b.rc.Close()
	if b.eof && b.keep && b.c.br.Buffered() == 0 {
		b.t.put(b.addr, b.c)
	} else {
		b.c.nc.Close()
	}
	return nil
}

// maxDrain is how much of an unread body Close reads to keep its connection.
const maxDrain = 4 << 10

// put returns c to the idle pool, or closes it when the pool is full.
func (t *Transport) put(addr string, c *conn) {
	t.mu.Lock()
	if len(t.idle[addr]) < t.maxIdle {
		t.idle[addr] = append(t.idle[addr], c)
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	c.nc.Close()
}

// CloseIdleConnections closes every idle connection. Requests in flight finish and may pool
// their connections again; new requests dial.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[string][]*conn{}
	t.mu.Unlock()
	for _, list := range idle {
		for _, c := range list {
			c.nc.Close()
		}
	}
	t.fallback.CloseIdleConnections()
}

// Warm dials up to n connections to rawURL's host and keeps them idle (as many as the pool
// takes), so that the first requests there need no dial. It blocks until every dial has ended or
// ctx is done, and returns how many connections it added to the pool. It sends nothing: the
// server sees connections open and wait, not requests. A URL Transport would not handle itself
// (not plain http://) warms nothing, and a failed dial ends the warming: the requests will meet
// the same failure and report it.
func (t *Transport) Warm(ctx context.Context, rawURL string, n int) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil || !handles(req) || t.noKeep {
		return 0
	}
	addr := hostPort(req.URL.Host)
	warmed := 0
	for range min(n, t.maxIdle) {
		c, _, err := t.conn(ctx, addr, time.Time{}, maxReusedAttempts)
		if err != nil {
			break
		}
		t.put(addr, c)
		warmed++
	}
	return warmed
}

// Dials returns how many connections RoundTrip has dialed (or tried to), requests sent through
// net/http not counted.
func (t *Transport) Dials() uint64 { return t.dials.Load() }

// hostPort returns host with port 80 when it has none.
func hostPort(host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), "80")
}
