package faults_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

// Toxicity is drawn once per connection, not per request (DEPENDENCIES.md). A reset on half the
// connections therefore resets about half the calls of a client that opens a connection per call,
// and almost none through the service's keep-alive pool: each reset closes its connection, and the
// first connection drawn healthy carries every later call. The bounds are binomial and geometric
// tails of about 1e-6 or less.
func TestToxicityIsPerConnection(t *testing.T) {
	const n, toxicity = 100, 0.5
	reset := faults.Fault{Dependency: "A", Type: "reset", Params: &faults.Reset{}, Toxicity: toxicity}

	t.Run("a connection per call: about half reset", func(t *testing.T) {
		b := newBench(t, time.Second)
		if err := b.inj.Apply(context.Background(), "A", reset.Effect()); err != nil {
			t.Fatal(err)
		}
		tr := &http.Transport{DisableKeepAlives: true}
		t.Cleanup(tr.CloseIdleConnections)
		c := &http.Client{Transport: tr, Timeout: time.Second}
		m := Mix{}
		for range n {
			resp, err := c.Get("http://" + b.listen + "/")
			switch {
			case err == nil:
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				m["ok"]++
			case errors.Is(err, syscall.ECONNRESET):
				m["reset"]++
			default:
				t.Fatalf("GET: %v", err)
			}
		}
		if m["reset"] < 20 || m["reset"] > 80 {
			t.Errorf("toxicity %v, no keep-alive: %v, want 20 to 80 of %d reset", toxicity, m, n)
		}
		t.Logf("toxicity %v, a connection per call: %v", toxicity, m)
	})

	t.Run("through the service's keep-alive pool: few reset", func(t *testing.T) {
		b := newBench(t, time.Second)
		b.apply(reset)
		m := b.mix(n)
		if m["ok"]+m["upstream/reset"] != n || m["upstream/reset"] > 20 {
			t.Errorf("toxicity %v, keep-alive: %v, want at most 20 of %d reset and the rest ok", toxicity, m, n)
		}
		t.Logf("toxicity %v, through the service's keep-alive pool: %v", toxicity, m)
	})
}

// The toxic carries the fault's toxicity; 0 means every connection (1).
func TestToxicityOfTheToxic(t *testing.T) {
	for _, tox := range []float64{0, 0.25} {
		f := faults.Fault{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: time.Millisecond}, Toxicity: tox}
		want := tox
		if want == 0 {
			want = 1
		}
		if got := toxicOf(t, f).Toxicity; got != want {
			t.Errorf("toxicity %v: toxic has %v, want %v", tox, got, want)
		}
	}
}
