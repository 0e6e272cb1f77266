package meter

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// upstream is an HTTP server standing for the dependency's proxy: /sleep?ms=N answers after N
// ms, /status?code=N answers N. It counts the connections it accepted.
func upstream(t *testing.T) (addr string, conns *atomic.Int64) {
	t.Helper()
	conns = &atomic.Int64{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ms, err := strconv.Atoi(r.URL.Query().Get("ms")); err == nil {
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
		}
		if code, err := strconv.Atoi(r.URL.Query().Get("code")); err == nil {
			w.WriteHeader(code)
		}
		fmt.Fprint(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), conns
}

func start(t *testing.T, up string) *Meter {
	t.Helper()
	m, err := Listen("A", "", up)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func client(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 4, Proxy: nil}}
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// takeWhen polls Take until cond holds for the sum of what it returned (the meter records an
// end just after the client has seen it), failing after a few seconds.
func takeWhen(t *testing.T, m *Meter, cond func(sum *sumAnswers) bool) *sumAnswers {
	t.Helper()
	sum := &sumAnswers{}
	for range 300 {
		sum.add(m.Take(time.Now()))
		if cond(sum) {
			return sum
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("meter never showed the expected answers: %+v", *sum)
	return nil
}

type sumAnswers struct {
	arrived, answered, errors, abandoned, cut, refused, opaque int
	max                                                        time.Duration
	times, unanswered                                          []time.Duration // medians of each take
	inFlight                                                   int
	oldest                                                     time.Duration
}

func (s *sumAnswers) add(a outcome.Answers) {
	s.arrived += a.Arrived
	s.answered += a.Answered
	s.errors += a.Errors
	s.abandoned += a.Abandoned
	s.cut += a.Cut
	s.refused += a.Refused
	s.opaque += a.Opaque
	s.max = max(s.max, a.Max)
	if q, ok := a.Times.Quantile(0.5); ok {
		s.times = append(s.times, q)
	}
	if q, ok := a.Unanswered.Quantile(0.5); ok {
		s.unanswered = append(s.unanswered, q)
	}
	s.inFlight, s.oldest = a.InFlight, a.Oldest
}

// Requests on one keep-alive connection through the meter reach the dependency on one
// connection too, and each is timed from the dependency's side: the answer time covers the
// dependency's own delay, and statuses of 500 and above are counted as errors.
func TestMeterTimesAnswers(t *testing.T) {
	up, conns := upstream(t)
	m := start(t, up)
	c := client(5 * time.Second)
	for i := range 5 {
		url := "http://" + m.Addr() + "/sleep?ms=30"
		if i == 4 {
			url = "http://" + m.Addr() + "/status?code=503"
		}
		if err := get(c, url); err != nil {
			t.Fatal(err)
		}
	}
	s := takeWhen(t, m, func(s *sumAnswers) bool { return s.answered == 5 })
	if s.arrived != 5 || s.errors != 1 || s.abandoned != 0 || s.cut != 0 {
		t.Errorf("arrived %d, errors %d, abandoned %d, cut %d; want 5, 1, 0, 0", s.arrived, s.errors, s.abandoned, s.cut)
	}
	if s.max < 30*time.Millisecond {
		t.Errorf("longest answer %v, want at least the dependency's 30 ms", s.max)
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the dependency saw %d connections for 5 requests on one keep-alive connection, want 1", n)
	}
}

// A request the caller gives up on (its timeout closes the connection) is abandoned, with how
// long it waited; one in flight at a Take is counted with its age.
func TestMeterAbandonedAndInFlight(t *testing.T) {
	up, _ := upstream(t)
	m := start(t, up)
	done := make(chan error, 1)
	go func() { done <- get(client(5*time.Second), "http://"+m.Addr()+"/sleep?ms=400") }()
	s := takeWhen(t, m, func(s *sumAnswers) bool { return s.inFlight == 1 && s.oldest > 0 })
	if s.arrived != 1 {
		t.Errorf("arrived %d, want 1", s.arrived)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The meter's clock starts when it reads the request, after the client's has started
	// (dial, write, and the scheduler on a loaded machine: CI saw 5.6 ms of a 50 ms timeout
	// go that way). So the wait it records is the caller's, less that lag: half the
	// caller's timeout at least, and well short of the dependency's 2 s answer.
	const timeout = 100 * time.Millisecond
	err := get(client(timeout), "http://"+m.Addr()+"/sleep?ms=2000")
	if err == nil {
		t.Fatal("a 2 s answer within a 100 ms client timeout")
	}
	s = takeWhen(t, m, func(s *sumAnswers) bool { return s.abandoned == 1 })
	if s.cut != 0 || len(s.unanswered) != 1 || s.unanswered[0] < timeout/2 || s.unanswered[0] >= time.Second {
		t.Errorf("cut %d, unanswered medians %v; want 0, one between half the client's %v timeout and 1 s (the dependency answers at 2 s)", s.cut, s.unanswered, timeout)
	}
}

// rawUpstream accepts connections, reads a request's first bytes and then does what end does
// with the connection.
func rawUpstream(t *testing.T, end func(*net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 1024)
				_, _ = c.Read(buf)
				end(c.(*net.TCPConn))
			}()
		}
	}()
	return ln.Addr().String()
}

// A reset from the dependency side reaches the caller as a reset, and a close as a close: the
// outcome classes of the reset and timeout faults are the same with the meter as without.
func TestMeterPassesResetsAndCloses(t *testing.T) {
	for _, c := range []struct {
		name, want string
		end        func(*net.TCPConn)
	}{
		{"reset", "connection reset by peer", func(c *net.TCPConn) { _ = c.SetLinger(0); c.Close() }},
		{"close", "EOF", func(c *net.TCPConn) { c.Close() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := start(t, rawUpstream(t, c.end))
			err := get(client(5*time.Second), "http://"+m.Addr()+"/")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			s := takeWhen(t, m, func(s *sumAnswers) bool { return s.cut >= 1 })
			if s.answered != 0 || s.abandoned != 0 {
				t.Errorf("answered %d, abandoned %d; want 0 and 0", s.answered, s.abandoned)
			}
		})
	}
}

// A paused meter refuses connections as a disabled proxy does, and cuts the requests in flight
// on the connections it closes; resumed, it passes calls on again, on the same address.
func TestMeterPauseResume(t *testing.T) {
	up, _ := upstream(t)
	m := start(t, up)
	addr := m.Addr()
	done := make(chan error, 1)
	go func() { done <- get(client(5*time.Second), "http://"+addr+"/sleep?ms=3000") }()
	takeWhen(t, m, func(s *sumAnswers) bool { return s.inFlight == 1 })
	m.Pause()
	if err := <-done; err == nil {
		t.Error("a call in flight survived Pause")
	}
	s := takeWhen(t, m, func(s *sumAnswers) bool { return s.cut == 1 })
	if s.abandoned != 0 {
		t.Errorf("abandoned %d, want 0: the meter's own close cuts the call", s.abandoned)
	}
	err := get(client(time.Second), "http://"+addr+"/")
	if err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("paused: error %v, want connection refused", err)
	}
	time.Sleep(20 * time.Millisecond)
	if a := m.Take(time.Now()); a.Closed <= 0 || a.Closed > a.Interval {
		t.Errorf("paused for the whole interval: closed %v of %v", a.Closed, a.Interval)
	}
	if err := m.Resume(); err != nil {
		t.Fatal(err)
	}
	if a := m.Take(time.Now()); a.Closed <= 0 || a.Closed > a.Interval {
		t.Errorf("resumed in the interval: closed %v of %v, want part of it", a.Closed, a.Interval)
	}
	if a := m.Take(time.Now()); a.Closed != 0 {
		t.Errorf("after Resume: closed %v, want 0", a.Closed)
	}
	if m.Addr() != addr {
		t.Errorf("resumed on %s, want %s", m.Addr(), addr)
	}
	if err := get(client(time.Second), "http://"+addr+"/"); err != nil {
		t.Fatalf("resumed: %v", err)
	}
}

// With nothing listening behind the meter, the caller's connection is reset at once and counted
// as refused.
func TestMeterUpstreamRefuses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	m := start(t, dead)
	err = get(client(time.Second), "http://"+m.Addr()+"/")
	if err == nil || !strings.Contains(err.Error(), "reset") && !strings.Contains(err.Error(), "EOF") {
		t.Fatalf("error %v, want a reset", err)
	}
	takeWhen(t, m, func(s *sumAnswers) bool { return s.refused >= 1 })
}

// Bytes that are not HTTP/1.1 pass through unchanged, uncounted, with the connection counted as
// opaque.
func TestMeterOpaque(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err == nil {
			_, _ = io.Copy(c, c) // echo
			c.Close()
		}
	}()
	m := start(t, ln.Addr().String())
	c, err := net.Dial("tcp", m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := "*1\r\n$4\r\nPING\r\n"
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(msg))
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != msg {
		t.Fatalf("echo %q, %v; want %q", buf, err, msg)
	}
	s := takeWhen(t, m, func(s *sumAnswers) bool { return s.opaque == 1 })
	if s.inFlight != 0 || s.answered != 0 {
		t.Errorf("in flight %d, answered %d; want nothing timed", s.inFlight, s.answered)
	}
}

// Close ends every connection and returns after their goroutines, and a second Close is a no-op.
func TestMeterClose(t *testing.T) {
	up, _ := upstream(t)
	m, err := Listen("A", "", up)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- get(client(5*time.Second), "http://"+m.Addr()+"/sleep?ms=3000") }()
	takeWhen(t, m, func(s *sumAnswers) bool { return s.inFlight == 1 })
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := <-done; err == nil {
		t.Error("a call survived Close")
	}
	var ne *net.OpError
	if _, err := net.DialTimeout("tcp", m.Addr(), time.Second); err == nil || !errors.As(err, &ne) {
		t.Errorf("dial after Close: %v, want refused", err)
	}
}
