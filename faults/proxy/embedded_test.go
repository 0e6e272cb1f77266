package proxy

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestEmbedded(t *testing.T) {
	runInjectorSuite(t, func(t *testing.T) Injector { return NewEmbedded() })
}

// Close on a nil *Embedded, as a deferred cleanup may call it, returns nil (issue 10).
func TestEmbeddedNilClose(t *testing.T) {
	var e *Embedded
	var inj Injector = e
	if err := inj.Close(context.Background()); err != nil {
		t.Fatalf("Close on a nil *Embedded = %v, want nil", err)
	}
}

func TestEmbeddedVersion(t *testing.T) {
	if got, want := NewEmbedded().Version(), ModuleVersion(); got != want {
		t.Errorf("Version() = %q, want %q", got, want)
	}
}

// TestEmbeddedCloseLeavesNoGoroutines runs traffic through faulted proxies, closes everything and
// checks that no Toxiproxy goroutine started by this test is left. Goroutines end asynchronously
// after their connections close, so the check polls; the bound only decides when to give up.
func TestEmbeddedCloseLeavesNoGoroutines(t *testing.T) {
	baseline := maxGoroutineID()
	inj := NewEmbedded()
	c := newClient(t, 0)
	held := make(chan error, 1)
	var ups []*upstream
	for i, flt := range []faults.Params{
		&faults.Latency{Latency: time.Millisecond},
		&faults.Latency{Latency: time.Hour},
		&faults.Bandwidth{RateKBps: 1000},
		&faults.Slicer{AverageSize: 8, Delay: time.Millisecond},
		&faults.SlowClose{Delay: time.Hour},
		&faults.LimitData{Bytes: 1 << 20},
		&faults.Timeout{},
		&faults.Reset{},
		&faults.Down{},
	} {
		f := newFixture(t, inj, fmt.Sprintf("leak-%d-%s", i, flt.Name()), 0)
		ups = append(ups, f.up)
		mustGet(t, c, f.url)
		f.apply(t, flt)
		if l, ok := flt.(*faults.Latency); ok && l.Latency == time.Hour {
			// A response held by the toxic when Close comes.
			go func() { _, _, err := get(c, f.url); held <- err }()
			for f.up.served.Load() < 2 {
				runtime.Gosched()
			}
		}
	}
	if err := inj.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-held
	c.Transport.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	for _, up := range ups {
		up.srv.Close()
	}

	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		if left = toxiproxyGoroutinesAfter(baseline); len(left) == 0 {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling for asynchronous exits, not synchronisation
	}
	t.Fatalf("%d toxiproxy goroutines left after Close:\n%s", len(left), strings.Join(left, "\n\n"))
}

// goroutineStacks returns every goroutine's stack by goroutine id.
func goroutineStacks() map[int]string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	out := make(map[int]string)
	for _, g := range strings.Split(string(buf), "\n\n") {
		var id int
		if _, err := fmt.Sscanf(g, "goroutine %d ", &id); err == nil {
			out[id] = g
		}
	}
	return out
}

func maxGoroutineID() int {
	m := 0
	for id := range goroutineStacks() {
		m = max(m, id)
	}
	return m
}

// toxiproxyGoroutinesAfter returns the stacks of Toxiproxy goroutines with an id above baseline
// (goroutine ids only grow, so these were started after the baseline was taken).
func toxiproxyGoroutinesAfter(baseline int) []string {
	var left []string
	for id, g := range goroutineStacks() {
		if id > baseline && strings.Contains(g, "github.com/Shopify/toxiproxy") {
			left = append(left, g)
		}
	}
	return left
}
