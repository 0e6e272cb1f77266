// Command storefront is a small service written for the newcomer test (examples/newcomer): a
// user's own service, not the built-in one, tested with nothing but what the docs describe.
// /a calls dependency A and /b calls B, each through a limiter of its layout:
//
//	--layout shared   one limiter "shared" of --size slots for both, whose callers wait in a
//	                  waiting room of 2 x size for at most --timeout (as a server's request
//	                  worker pool); a full room or a wait that runs out answers 503
//	--layout split    one limiter per dependency ("A", "B") of size/2 slots, no waiting room: a
//	                  call that finds it full is answered 503 at once
//
// A dependency that does not answer within --timeout gives 504, one that fails 502 (the status
// codes the harness classes by default: docs/own-service.md). /metrics exports each limiter
// under the Resilience4j names the harness reads without a mapping, and /healthz answers 200.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

const version = "storefront 1.0.0"

// limiter is a counting semaphore with a bounded waiting room and a bounded wait.
type limiter struct {
	name    string
	slots   chan struct{}
	mu      sync.Mutex
	waiting int
	room    int
	maxWait time.Duration
}

func newLimiter(name string, size, room int, maxWait time.Duration) *limiter {
	return &limiter{name: name, slots: make(chan struct{}, size), room: room, maxWait: maxWait}
}

// acquire takes a slot, waiting at most maxWait when the waiting room has a place; it reports
// whether it got one.
func (l *limiter) acquire(ctx context.Context) bool {
	select {
	case l.slots <- struct{}{}:
		return true
	default:
	}
	l.mu.Lock()
	if l.waiting >= l.room {
		l.mu.Unlock()
		return false
	}
	l.waiting++
	l.mu.Unlock()
	t := time.NewTimer(l.maxWait)
	defer t.Stop()
	got := false
	select {
	case l.slots <- struct{}{}:
		got = true
	case <-t.C:
	case <-ctx.Done():
	}
	l.mu.Lock()
	l.waiting--
	l.mu.Unlock()
	return got
}

func (l *limiter) release() { <-l.slots }

// metrics writes the limiter under Resilience4j's names: pool:<name> and, with a waiting room,
// queue:<name>.
func (l *limiter) metrics(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(w, "resilience4j_bulkhead_available_concurrent_calls{name=%q} %d\n", l.name, cap(l.slots)-len(l.slots))
	fmt.Fprintf(w, "resilience4j_bulkhead_max_allowed_concurrent_calls{name=%q} %d\n", l.name, cap(l.slots))
	if l.room > 0 {
		fmt.Fprintf(w, "resilience4j_bulkhead_queue_depth{name=%q} %d\n", l.name, l.waiting)
		fmt.Fprintf(w, "resilience4j_bulkhead_queue_capacity{name=%q} %d\n", l.name, l.room)
	}
}

func main() {
	layout := flag.String("layout", "shared", "shared or split")
	size := flag.Int("size", 10, "slots in all")
	port := flag.String("port", "8080", "port to listen on (127.0.0.1)")
	a := flag.String("a", "", "base URL of dependency A")
	b := flag.String("b", "", "base URL of dependency B")
	timeout := flag.Duration("timeout", 500*time.Millisecond, "timeout of a dependency call")
	showVersion := flag.Bool("version", false, "print the version and exit")
	flag.Parse()
	if *showVersion {
		fmt.Println(version)
		return
	}
	limiters := map[string]*limiter{}
	switch *layout {
	case "shared":
		l := newLimiter("shared", *size, 2**size, *timeout)
		limiters["A"], limiters["B"] = l, l
	case "split":
		limiters["A"] = newLimiter("A", *size/2, 0, 0)
		limiters["B"] = newLimiter("B", *size/2, 0, 0)
	default:
		log.Fatalf("--layout %q: want shared or split", *layout)
	}
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	mux := http.NewServeMux()
	for path, dep := range map[string]struct{ name, url string }{"/a": {"A", *a}, "/b": {"B", *b}} {
		l := limiters[dep.name]
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			if !l.acquire(r.Context()) {
				http.Error(w, "limiter "+l.name+" full", http.StatusServiceUnavailable)
				return
			}
			defer l.release()
			resp, err := client.Get(dep.url + "/")
			var ne net.Error
			switch {
			case errors.As(err, &ne) && ne.Timeout():
				http.Error(w, dep.name+" timed out", http.StatusGatewayTimeout)
				return
			case err != nil:
				http.Error(w, dep.name+": "+err.Error(), http.StatusBadGateway)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			fmt.Fprintln(w, "ok")
		})
	}
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		seen := map[*limiter]bool{}
		names := make([]string, 0, len(limiters))
		for n := range limiters {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			if l := limiters[n]; !seen[l] {
				seen[l] = true
				l.metrics(w)
			}
		}
	})
	log.Printf("%s: layout %s, %d slots, listening on 127.0.0.1:%s (A %s, B %s)", version, *layout, *size, *port, *a, *b)
	srv := &http.Server{Addr: net.JoinHostPort("127.0.0.1", *port), Handler: mux}
	if err := srv.ListenAndServe(); err != nil {
		fmt.Fprintln(os.Stderr, strings.TrimSpace(err.Error()))
		os.Exit(1)
	}
}
