package proxy

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy/meter"
)

// A metered injector behaves as every Injector must (the whole suite, each fault's effect on
// live connections included), in front of the embedded Toxiproxy and an external one: the
// meter changes nothing a caller sees.
func TestMetered(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		runInjectorSuite(t, func(t *testing.T) Injector { return NewMetered(NewEmbedded()) })
	})
	t.Run("external", func(t *testing.T) {
		runInjectorSuite(t, func(t *testing.T) Injector {
			x, err := NewExternal(context.Background(), newAPIServer(t))
			if err != nil {
				t.Fatal(err)
			}
			return NewMetered(x)
		})
	})
}

// The meter in front of a proxy times what the caller waits for from the dependency's side: a
// latency toxic's delay is in the answer times.
func TestMeteredTimesTheFault(t *testing.T) {
	inj := NewMetered(NewEmbedded())
	t.Cleanup(func() { _ = inj.Close(context.Background()) })
	f := newFixture(t, inj, "A", 0)
	c := newClient(t, 5*time.Second)
	mustGet(t, c, f.url)
	f.apply(t, &faults.Latency{Latency: 80 * time.Millisecond})
	for range 3 {
		mustGet(t, c, f.url)
	}
	m := inj.Meter("A")
	if m == nil {
		t.Fatal("no meter for proxy A")
	}
	a := m.Take(time.Now())
	if a.Arrived != 4 || a.Answered != 4 {
		t.Fatalf("arrived %d, answered %d; want 4 and 4", a.Arrived, a.Answered)
	}
	if p50, _ := a.Times.Quantile(0.5); p50 < 76*time.Millisecond { // 80 ms less a bucket's 4.4%
		t.Errorf("median answer %v, want at least the toxic's 80 ms", p50)
	}
	if inj.Meter("nope") != nil {
		t.Error("a meter for a proxy that does not exist")
	}
}

// BenchmarkMeteredExchange measures the meter's cost: one GET of a small answer on a keep-alive
// connection straight to the server, through the meter alone, through the embedded Toxiproxy
// alone, and through the meter in front of it (what every run has). The differences are the
// meter's added latency per call.
//
//	go test -run '^$' -bench MeteredExchange -benchtime 2s -count 3 -cpu 1,2 ./faults/proxy/
func BenchmarkMeteredExchange(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	defer srv.Close()
	up := srv.Listener.Addr().String()
	for _, c := range []struct {
		name string
		inj  func() Injector
	}{
		{"direct", nil},
		{"meter", nil},
		{"toxiproxy", func() Injector { return NewEmbedded() }},
		{"meter+toxiproxy", func() Injector { return NewMetered(NewEmbedded()) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			listen := up
			switch {
			case c.name == "meter":
				m, err := meter.Listen("A", "", up)
				if err != nil {
					b.Fatal(err)
				}
				defer m.Close()
				listen = m.Addr()
			case c.inj != nil:
				inj := c.inj()
				defer inj.Close(context.Background())
				var err error
				if listen, err = inj.AddProxy(context.Background(), "A", up); err != nil {
					b.Fatal(err)
				}
			}
			tr := &http.Transport{MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			cl := &http.Client{Transport: tr}
			url := "http://" + listen + "/"
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				resp, err := cl.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
