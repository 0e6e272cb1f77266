package h1

import (
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// twinConns dials ln twice and returns both client ends, each with its server end.
func twinConns(t *testing.T, ln net.Listener) (clients, servers [2]*net.TCPConn) {
	t.Helper()
	for i := range 2 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		clients[i], servers[i] = c.(*net.TCPConn), s.(*net.TCPConn)
		t.Cleanup(func() { c.Close(); s.Close() })
	}
	return clients, servers
}

// shape is err's text with c's addresses replaced, then the type of each error in its chain, so
// that the errors of two connections compare.
func shape(c net.Conn, err error) string {
	if err == nil {
		return "<nil>"
	}
	s := strings.NewReplacer(c.LocalAddr().String(), "LOCAL", c.RemoteAddr().String(), "REMOTE").Replace(err.Error())
	for e := err; e != nil; e = errors.Unwrap(e) {
		s += fmt.Sprintf(" | %T", e)
	}
	return s
}

// reset makes s's peer see a connection reset: s closes with SO_LINGER 0, which sends RST.
func reset(t *testing.T, s *net.TCPConn) {
	t.Helper()
	if err := s.SetLinger(0); err != nil {
		t.Fatal(err)
	}
	s.Close()
}

// untilError reads from r until an error and returns it.
func untilError(r io.Reader) error {
	buf := make([]byte, 64)
	for {
		if _, err := r.Read(buf); err != nil {
			return err
		}
	}
}

// TestRawIOErrorsAreNetConns holds rawIO to net.Conn's errors: for every failure a connection
// meets, the same failure on a twin connection read through net.Conn gives the same text and
// the same chain of types, so that h1's errors classify as net/http's.
func TestRawIOErrorsAreNetConns(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cases := []struct {
		name string
		// fail brings about the failure on client c (server end s) and returns the error that
		// rw, c's bytes, then gives.
		fail func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error
		want string // a part of the error's text
	}{
		{"read past the deadline", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			c.SetDeadline(time.Now().Add(20 * time.Millisecond))
			_, err := rw.Read(make([]byte, 8))
			return err
		}, "i/o timeout"},
		{"write past the deadline", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			c.SetDeadline(time.Now().Add(-time.Second))
			_, err := rw.Write([]byte("x"))
			return err
		}, "i/o timeout"},
		{"read after the peer closed", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			s.Write([]byte("last"))
			s.Close()
			return untilError(rw)
		}, "EOF"},
		{"read after the peer reset", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			reset(t, s)
			return untilError(rw)
		}, "connection reset by peer"},
		{"write after the peer reset", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			reset(t, s)
			untilError(rw) // takes the reset, so that the write's error is the broken pipe
			_, err := rw.Write([]byte("x"))
			return err
		}, "broken pipe"},
		{"read after closing", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			c.Close()
			_, err := rw.Read(make([]byte, 8))
			return err
		}, "use of closed network connection"},
		{"write after closing", func(t *testing.T, c, s *net.TCPConn, rw io.ReadWriter) error {
			c.Close()
			_, err := rw.Write([]byte("x"))
			return err
		}, "use of closed network connection"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clients, servers := twinConns(t, ln)
			raw := newIO(clients[1])
			if _, ok := raw.(*rawIO); !ok {
				t.Fatalf("newIO gave %T for a TCP connection, want *rawIO", raw)
			}
			want := shape(clients[0], tc.fail(t, clients[0], servers[0], clients[0]))
			got := shape(clients[1], tc.fail(t, clients[1], servers[1], raw))
			if got != want {
				t.Errorf("rawIO: %s\nnet.Conn: %s", got, want)
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("error %s, want one with %q", got, tc.want)
			}
		})
	}
}

// TestRawIOMovesBytesBothWays checks that what is written through rawIO arrives whole, and that
// a read returns what the peer wrote, including a write larger than the socket's buffers (which
// rawIO finishes after waiting for the socket to drain).
func TestRawIOMovesBytesBothWays(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	clients, servers := twinConns(t, ln)
	raw := newIO(clients[0])
	big := []byte(strings.Repeat("0123456789abcdef", 1<<18)) // 4 MiB
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(servers[0])
		got <- b
	}()
	clients[0].SetDeadline(time.Now().Add(10 * time.Second)) // a Write that never ends fails
	if n, err := raw.Write(big); n != len(big) || err != nil {
		t.Fatalf("Write = %d, %v; want %d, nil", n, err, len(big))
	}
	clients[0].CloseWrite()
	if b := <-got; string(b) != string(big) {
		t.Fatalf("the peer read %d bytes, not the %d written", len(b), len(big))
	}
	servers[0].Write([]byte("pong"))
	buf := make([]byte, 16)
	n, err := raw.Read(buf)
	if err != nil || string(buf[:n]) != "pong" {
		t.Fatalf("Read = %q, %v; want \"pong\"", buf[:n], err)
	}
	if n, err := raw.Read(nil); n != 0 || err != nil {
		t.Fatalf("Read(nil) = %d, %v; want 0, nil", n, err)
	}
}
