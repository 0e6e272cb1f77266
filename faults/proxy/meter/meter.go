package meter

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// bufSize is each direction's copy buffer: answers of the dependencies here are small, and a
// larger one would multiply the memory of a run with hundreds of dependencies.
const bufSize = 8 << 10

// dialTimeout bounds the dial of the proxy behind the meter (on this host: it answers or
// refuses within microseconds).
const dialTimeout = 5 * time.Second

// Meter is a TCP pass-through in front of one dependency's proxy that times the dependency's
// answers as the target sees them. Create it with Listen; the zero value is not usable. Its
// methods are safe for concurrent use.
//
// Each connection the target opens is answered by one connection to the proxy, dialled when
// it is accepted, and bytes are copied unchanged both ways; keep-alive, pipelining and the
// close of either side pass through as they are: a FIN as a close, a reset (ECONNRESET) as a
// reset (SO_LINGER 0), so a reset_peer toxic still reads "connection reset by peer" to the
// target. Pause closes the listener and every connection, as a disabled Toxiproxy proxy
// does, so a down fault still reads "connection refused".
type Meter struct {
	name     string
	upstream string
	dial     func(network, addr string) (net.Conn, error)

	mu     sync.Mutex
	ln     net.Listener
	addr   string
	conns  map[*conn]struct{}
	paused bool
	closed bool
	// pausedAt is when Pause took effect (zero while not paused); closedFor the time paused in
	// the current interval before that.
	pausedAt  time.Time
	closedFor time.Duration
	last      time.Time       // end of the previous interval
	cur       outcome.Answers // the interval in progress
	wg        sync.WaitGroup
}

// Listen starts a meter for dependency name on listen (host:port; "" means 127.0.0.1:0) in
// front of upstream (host:port, the proxy) and returns it accepting. It fails when listen cannot
// be bound; upstream is dialled per accepted connection, so it need not be up yet.
func Listen(name, listen, upstream string) (*Meter, error) {
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	m := &Meter{name: name, upstream: upstream, conns: map[*conn]struct{}{}, last: time.Now(),
		dial: (&net.Dialer{Timeout: dialTimeout}).Dial}
	m.cur.Dependency = name
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("meter for %s: listen on %s: %w", name, listen, err)
	}
	m.ln, m.addr = ln, ln.Addr().String()
	m.wg.Add(1)
	go m.accept(ln)
	return m, nil
}

// Addr returns the address the meter listens on (the target calls the dependency there).
func (m *Meter) Addr() string { return m.addr }

// Upstream returns the address of the proxy behind the meter.
func (m *Meter) Upstream() string { return m.upstream }

func (m *Meter) accept(ln net.Listener) {
	defer m.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				continue
			}
			return // closed by Pause or Close
		}
		m.mu.Lock()
		if m.paused || m.closed {
			m.mu.Unlock()
			c.Close()
			continue
		}
		m.wg.Add(1)
		m.mu.Unlock()
		go m.serve(c)
	}
}

// serve passes one accepted connection on to the proxy until either side ends it.
func (m *Meter) serve(down net.Conn) {
	defer m.wg.Done()
	upc, err := m.dial("tcp", m.upstream)
	if err != nil {
		m.mu.Lock()
		m.cur.Refused++
		m.mu.Unlock()
		reset(down)
		return
	}
	c := &conn{m: m, down: down, up: upc}
	m.mu.Lock()
	if m.paused || m.closed {
		m.mu.Unlock()
		upc.Close()
		down.Close()
		return
	}
	m.conns[c] = struct{}{}
	m.mu.Unlock()
	c.req = scanner{onStart: c.started, onMethod: c.method}
	c.resp = scanner{resp: true, frontMethod: c.frontMethod}
	done := make(chan struct{})
	go func() {
		c.pipe(down, upc, &c.req, false)
		close(done)
	}()
	c.pipe(upc, down, &c.resp, true)
	<-done
	m.mu.Lock()
	delete(m.conns, c)
	m.mu.Unlock()
}

// Take returns the answers of the interval since the previous Take (or Listen) ending now, with
// the requests in flight now, and starts the next interval.
func (m *Meter) Take(now time.Time) outcome.Answers {
	m.mu.Lock()
	a := m.cur
	m.cur = outcome.Answers{Dependency: m.name}
	a.Interval = now.Sub(m.last)
	a.Closed = m.closedFor
	m.closedFor = 0
	if !m.pausedAt.IsZero() {
		a.Closed += now.Sub(later(m.pausedAt, m.last))
	}
	a.Closed = min(a.Closed, a.Interval)
	m.last = now
	conns := make([]*conn, 0, len(m.conns))
	for c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	for _, c := range conns {
		c.mu.Lock()
		for _, x := range c.pending {
			a.InFlight++
			a.Oldest = max(a.Oldest, now.Sub(x.start))
		}
		c.mu.Unlock()
	}
	return a
}

// Pause stops accepting (new connections are refused by the system) and closes every live
// connection, as a disabled Toxiproxy proxy does; their unanswered requests count as cut. It
// returns once the listener is closed; a paused meter stays so until Resume.
func (m *Meter) Pause() {
	m.mu.Lock()
	if m.paused || m.closed {
		m.mu.Unlock()
		return
	}
	m.paused = true
	m.pausedAt = time.Now()
	ln := m.ln
	conns := make([]*conn, 0, len(m.conns))
	for c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	ln.Close()
	for _, c := range conns {
		c.shut(true)
	}
}

// Resume listens again on the same address after Pause. If another process took the port
// meanwhile, it fails and the meter stays paused.
func (m *Meter) Resume() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.paused || m.closed {
		return nil
	}
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return fmt.Errorf("meter for %s: listen again on %s: %w", m.name, m.addr, err)
	}
	now := time.Now()
	m.closedFor += now.Sub(later(m.pausedAt, m.last))
	m.ln, m.paused, m.pausedAt = ln, false, time.Time{}
	m.wg.Add(1)
	go m.accept(ln)
	return nil
}

// Close stops the meter: it closes the listener and every connection and waits for their
// goroutines to end. A second Close returns nil.
func (m *Meter) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	ln, paused := m.ln, m.paused
	conns := make([]*conn, 0, len(m.conns))
	for c := range m.conns {
		conns = append(conns, c)
	}
	m.mu.Unlock()
	var err error
	if !paused {
		err = ln.Close()
	}
	for _, c := range conns {
		c.shut(true)
	}
	m.wg.Wait()
	return err
}

// exchange is one request waiting for its answer.
type exchange struct {
	start  time.Time
	method string
}

// conn is one connection of the target passed on to the proxy.
type conn struct {
	m        *Meter
	down, up net.Conn
	req      scanner // target -> dependency
	resp     scanner // dependency -> target

	mu      sync.Mutex
	pending []exchange // FIFO: HTTP/1.1 answers requests in order
	ended   bool       // the first side to end has been recorded
	opaque  bool
}

func (c *conn) started() {
	now := time.Now()
	c.mu.Lock()
	opaque := c.opaque
	if !opaque {
		c.pending = append(c.pending, exchange{start: now})
	}
	c.mu.Unlock()
	if opaque {
		return // the other direction stopped reading as HTTP: nothing on c is timed
	}
	c.m.mu.Lock()
	c.m.cur.Arrived++
	c.m.mu.Unlock()
}

func (c *conn) method(s string) {
	c.mu.Lock()
	if n := len(c.pending); n > 0 {
		c.pending[n-1].method = s
	}
	c.mu.Unlock()
}

func (c *conn) frontMethod() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return ""
	}
	return c.pending[0].method
}

// answered records the responses completed by the last write (their statuses), at now.
func (c *conn) answered(codes []int, now time.Time) {
	c.mu.Lock()
	var times []time.Duration
	for range codes {
		if len(c.pending) == 0 {
			break // an answer to no request (a 408 on an idle connection): nothing to time
		}
		times = append(times, now.Sub(c.pending[0].start))
		c.pending = c.pending[1:]
	}
	c.mu.Unlock()
	m := c.m
	m.mu.Lock()
	for i, d := range times {
		m.cur.Answered++
		m.cur.Times.Add(d)
		m.cur.Max = max(m.cur.Max, d)
		if codes[i] >= 500 {
			m.cur.Errors++
		}
	}
	m.mu.Unlock()
}

// pipe copies src to dst through sc until src ends or dst fails, then ends the connection:
// toDown is true for the dependency -> target direction.
func (c *conn) pipe(src, dst net.Conn, sc *scanner, toDown bool) {
	buf := make([]byte, bufSize)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if sc.st != stOpaque {
				sc.feed(buf[:n])
				if sc.st == stOpaque {
					c.markOpaque()
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				// The side we write to is gone: it ended first.
				c.end(!toDown, dst, src, werr)
				return
			}
			if len(sc.ended) > 0 {
				c.answered(sc.ended, time.Now())
				sc.ended = sc.ended[:0]
			}
		}
		if err != nil {
			if toDown {
				sc.closed() // a response read until the close ends with it
				if len(sc.ended) > 0 {
					c.answered(sc.ended, time.Now())
					sc.ended = sc.ended[:0]
				}
			}
			// src ended: the dependency side when toDown, else the target.
			c.end(toDown, src, dst, err)
			return
		}
	}
}

func (c *conn) markOpaque() {
	c.mu.Lock()
	first := !c.opaque
	c.opaque = true
	c.pending = nil // nothing on this connection is timed
	c.mu.Unlock()
	if first {
		c.m.mu.Lock()
		c.m.cur.Opaque++
		c.m.mu.Unlock()
	}
}

// end handles the end of one side, from: byDependency says whether it is the dependency side
// (the proxy) that ended. The first end of a connection decides what its unanswered requests
// were (cut by the dependency side, or abandoned by the target); the other side is then closed
// the way from was: reset when from was reset, closed otherwise.
func (c *conn) end(byDependency bool, from, other net.Conn, err error) {
	now := time.Now()
	c.mu.Lock()
	first := !c.ended
	c.ended = true
	pending := c.pending
	c.pending = nil
	c.mu.Unlock()
	if first && len(pending) > 0 {
		m := c.m
		m.mu.Lock()
		for _, x := range pending {
			if byDependency {
				m.cur.Cut++
			} else {
				m.cur.Abandoned++
			}
			m.cur.Unanswered.Add(now.Sub(x.start))
		}
		m.mu.Unlock()
	}
	if first && isReset(err) {
		reset(other)
	} else {
		other.Close()
	}
	from.Close()
}

// shut closes both sides of the connection from the meter's own side (Pause, Close): its
// unanswered requests count as cut, as when a disabled proxy closes them.
func (c *conn) shut(byDependency bool) {
	c.end(byDependency, c.up, c.down, nil)
}

// isReset reports whether err is a reset by the peer.
func isReset(err error) bool {
	return err != nil && !errors.Is(err, io.EOF) && errors.Is(err, syscall.ECONNRESET)
}

// reset closes c with an RST (SO_LINGER 0) when it is TCP, else plainly.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
