package faults

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestEmbedded(t *testing.T) {
	runInjectorSuite(t, func(t *testing.T) Injector { return NewEmbedded() })
}

func TestEmbeddedVersion(t *testing.T) {
	if got, want := NewEmbedded().Version(), ModuleVersion(); got != want {
		t.Errorf("Version() = %q, want %q", got, want)
	}
}

// TestEmbeddedCloseLeavesNoGoroutines runs traffic through faulted proxies, closes everything and
// checks that no Toxiproxy goroutine is left. Goroutines end asynchronously after their
// connections close, so the check polls; the bound only decides when to give up and report.
func TestEmbeddedCloseLeavesNoGoroutines(t *testing.T) {
	inj := NewEmbedded()
	up := newUpstream(t, 0)
	c := newClient(t, 5*time.Second)
	for _, flt := range []Fault{
		{Type: TypeLatency, Latency: time.Millisecond},
		{Type: TypeBandwidth, RateKBps: 1000},
		{Type: TypeTimeout},
		{Type: TypeReset},
		{Type: TypeDown},
	} {
		f := newFixture(t, inj, "leak-"+string(flt.Type), 0)
		mustGet(t, c, f.url)
		f.apply(t, flt)
	}
	if err := inj.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Transport.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	up.srv.Close()

	const pkg = "github.com/Shopify/toxiproxy"
	var stacks string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		buf := make([]byte, 1<<20)
		stacks = string(buf[:runtime.Stack(buf, true)])
		if !strings.Contains(stacks, pkg) {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling for asynchronous exits, not synchronisation
	}
	t.Fatalf("toxiproxy goroutines left after Close:\n%s", stacks)
}
