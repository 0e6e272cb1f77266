package faults_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
)

func TestSlowCloseCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"1s", &faults.SlowClose{Delay: time.Second}, nil},
		{"zero", &faults.SlowClose{}, []string{"delay"}},
		{"below 1ms", &faults.SlowClose{Delay: 400 * time.Microsecond}, []string{"delay"}},
	})
}

func TestSlowCloseEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.SlowClose{Delay: time.Second}))
	want := faults.Toxic{Type: "slow_close", Stream: faults.Downstream, Toxicity: 1, Attributes: map[string]int64{"delay": 1000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
}

// The fake dependency answers with a Content-Length on a kept-alive connection, so its answers
// never wait for a close: the outcome mix is unchanged. An answer that ends with the connection
// (read to EOF) is held by the delay: past a 200ms client timeout.
func TestSlowCloseOutcomes(t *testing.T) {
	const delay = 5 * time.Second // far past every timeout here; Clear releases it at cleanup
	t.Run("keep-alive answers with a length: unchanged", func(t *testing.T) {
		b := newBench(t, 200*time.Millisecond)
		b.apply(faults.New("A", &faults.SlowClose{Delay: delay}))
		if m := b.mix(5); !m.only("ok") {
			t.Fatalf("slow_close %v: mix %v, want only ok", delay, m)
		} else {
			t.Logf("slow_close %v, keep-alive answers: %v", delay, m)
		}
	})
	t.Run("answers read to the close: timed out", func(t *testing.T) {
		addr := closeDelimitedServer(t)
		inj := proxy.NewEmbedded()
		t.Cleanup(func() { _ = inj.Close(context.Background()) })
		listen, err := inj.AddProxy(context.Background(), "raw", addr)
		if err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr, Timeout: 200 * time.Millisecond}
		outcome := func() string {
			resp, err := c.Get("http://" + listen + "/")
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			var ne net.Error
			switch {
			case err == nil:
				return "ok"
			case errors.As(err, &ne) && ne.Timeout():
				return "timeout"
			}
			return err.Error()
		}
		if got := outcome(); got != "ok" {
			t.Fatalf("before the fault: %s, want ok", got)
		}
		f := faults.New("raw", &faults.SlowClose{Delay: delay})
		if err := inj.Apply(context.Background(), "raw", f.Effect()); err != nil {
			t.Fatal(err)
		}
		m := Mix{}
		for range 2 {
			m[outcome()]++
		}
		if !m.only("timeout") {
			t.Fatalf("slow_close %v, answers read to the close: %v, want only timeout", delay, m)
		}
		t.Logf("slow_close %v, answers read to the close, client timeout 200ms: %v", delay, m)
	})
}

// closeDelimitedServer answers every request in the HTTP/1.0 way, with no Content-Length: the
// body ends when the server closes the connection. It returns its address.
func closeDelimitedServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for { // the request's head, up to its blank line
					line, err := r.ReadString('\n')
					if err != nil || strings.TrimSpace(line) == "" {
						break
					}
				}
				_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	return ln.Addr().String()
}
