package nodebulkhead

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scrape"
)

// nodeService is one running server.js.
type nodeService struct {
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	stopFn func()
}

// startNode starts server.js with args on a free loopback port and returns once it prints where
// it listens. Cleanup stops it (SIGTERM to its own PID, a kill if it lingers) and waits for it.
func startNode(t *testing.T, args ...string) *nodeService {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.SkipOrFail(t, "node (Node.js) is not installed: the example service that is not ours cannot run here")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, append([]string{"server.js", "--host", "127.0.0.1", "--port", "0"}, args...)...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second // then Wait kills it: never leave a child behind
	ns := &nodeService{cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stderr = ns.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd, err)
	}
	var once sync.Once
	ns.stopFn = func() {
		once.Do(func() {
			cancel() // SIGTERM to this child's PID, then a kill after WaitDelay
			cmd.Wait()
		})
	}
	stop := ns.stopFn
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		t.Fatalf("%s never said where it listens: %v; stderr: %s", cmd, err, ns.stderr)
	}
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("%s printed %q, want \"listening http://...\"", cmd, line)
	}
	ns.url = url
	go io.Copy(io.Discard, out) //nolint:errcheck // keep the pipe drained
	return ns
}

// stop ends the service and waits for it; it is safe to call more than once.
func (ns *nodeService) stop() { ns.stopFn() }

// held is a dependency whose answers wait until release is closed.
type held struct {
	srv     *httptest.Server
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHeld(t *testing.T) *held {
	h := &held{arrived: make(chan struct{}, 64), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "A\n")
	}))
	t.Cleanup(func() { h.Release(); h.srv.Close() })
	return h
}

func (h *held) Release() { h.once.Do(func() { close(h.release) }) }

// classes counts the classes of n sequential GETs of url, classified by the default mapping (the
// service sends no X-Bulkhead-* headers).
func classes(t *testing.T, c *http.Client, url string, n int) map[string]int {
	t.Helper()
	var m *outcome.Mapping
	out := map[string]int{}
	for range n {
		resp, err := c.Get(url)
		if err != nil {
			out[m.Classify(0, nil, err.Error())]++
			continue
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		out[m.Classify(resp.StatusCode, resp.Header, "")]++
	}
	return out
}

// TestNodeBulkhead is seed 004 in miniature against a service that is not ours. Dependency A
// holds every call; P = 4. In shared mode A's calls take all four slots of the one limit and /b,
// which never calls A, is turned away (503); in split mode A's calls fill only A's two slots and
// /b keeps answering 200. Scraping the service's Resilience4j-named /metrics gives its limits as
// resources with the right capacity and in use, and a scrape of the stopped service fails naming
// its address.
func TestNodeBulkhead(t *testing.T) {
	const p, n = 4, 10
	tests := []struct {
		mode  string
		hold  int // calls to /a that reach A and stay there: A's share of the limit
		wantA map[string]int
		wantB map[string]int
		pools []outcome.Resource // while A holds its calls
	}{
		{mode: "shared", hold: p,
			wantA: map[string]int{"rejected:status-503": n},
			wantB: map[string]int{"rejected:status-503": n},
			pools: []outcome.Resource{{Name: "pool:shared", Capacity: p, InUse: p, RejectedUnknown: true}}},
		{mode: "split", hold: p / 2,
			wantA: map[string]int{"rejected:status-503": n},
			wantB: map[string]int{"ok": n},
			pools: []outcome.Resource{{Name: "pool:A", Capacity: p / 2, InUse: p / 2, RejectedUnknown: true}, {Name: "pool:B", Capacity: p / 2, InUse: 0, RejectedUnknown: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			a := newHeld(t)
			b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "B\n") }))
			t.Cleanup(b.Close)
			// A client timeout far above the test, so only the limit decides.
			svc := startNode(t, "--mode", tt.mode, "--size", fmt.Sprint(p), "--timeout", "600000", "--a", a.srv.URL, "--b", b.URL)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2 * p}}
			defer client.CloseIdleConnections()

			heldDone := make(chan int, tt.hold)
			for range tt.hold {
				go func() {
					resp, err := client.Get(svc.url + "/a")
					if err != nil {
						heldDone <- 0
						return
					}
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					heldDone <- resp.StatusCode
				}()
			}
			for range tt.hold {
				<-a.arrived
			}

			gotA := classes(t, client, svc.url+"/a", n)
			gotB := classes(t, client, svc.url+"/b", n)
			t.Logf("%s, A held with %d calls: /a %v, /b %v", tt.mode, tt.hold, gotA, gotB)
			if !reflect.DeepEqual(gotA, tt.wantA) {
				t.Errorf("/a classes = %v; want %v", gotA, tt.wantA)
			}
			if !reflect.DeepEqual(gotB, tt.wantB) {
				t.Errorf("/b classes = %v; want %v", gotB, tt.wantB)
			}

			sc, err := scrape.New(svc.url+"/metrics", scrape.Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := sc.Resources(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s, scraped: %+v", tt.mode, rs)
			if !reflect.DeepEqual(rs, tt.pools) {
				t.Errorf("scraped resources = %+v; want %+v", rs, tt.pools)
			}

			// Released, the held calls succeed and the limit empties.
			a.Release()
			for range tt.hold {
				if code := <-heldDone; code != http.StatusOK {
					t.Errorf("a held /a answered %d after A was released; want 200", code)
				}
			}
			rs, err = sc.Resources(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.InUse != 0 {
					t.Errorf("after release %s has %v in use; want 0", r.Name, r.InUse)
				}
			}

			// The metrics endpoint disappears: the scrape says where.
			svc.stop()
			_, err = sc.Resources(context.Background())
			if err == nil || !strings.Contains(err.Error(), svc.url+"/metrics") || !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("scrape of the stopped service: %v; want connection refused naming %s/metrics", err, svc.url)
			}
		})
	}
}

// Bad arguments end the service at once with a message naming the flag, exit status 2.
func TestNodeBadArgs(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.SkipOrFail(t, "node (Node.js) is not installed: the example service that is not ours cannot run here")
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no mode", []string{"--a", "http://127.0.0.1:1", "--b", "http://127.0.0.1:1"}, `--mode "": want shared or split`},
		{"bad dependency", []string{"--mode", "split", "--a", "127.0.0.1:1", "--b", "http://127.0.0.1:1"}, `--a "127.0.0.1:1": want an http:// URL`},
		{"odd flag", []string{"--mode", "split", "--pool", "3"}, `unknown flag --pool`},
		{"size too small", []string{"--mode", "split", "--size", "1", "--a", "http://x", "--b", "http://x"}, `--size 1: want at least 2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(node, append([]string{"server.js"}, tt.args...)...)
			cmd.Env = []string{} // no DEP_*_URL from the environment
			out, err := cmd.CombinedOutput()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), tt.want) {
				t.Errorf("server.js %s: %v, %q; want exit 2 and %q", strings.Join(tt.args, " "), err, out, tt.want)
			}
		})
	}
}

// The service's other answers, classified by the default mapping: a dependency that outlives the
// client timeout gives 504 (timeout:dependency), one that answers 500 gives 502
// (upstream:status-502), one that refuses gives 502 too; a stopped service is a transport error
// (connection:refused).
func TestNodeFailuresClassified(t *testing.T) {
	a := newHeld(t) // never released during the test: every call to A times out
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(b.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()

	svc := startNode(t, "--mode", "split", "--size", "4", "--timeout", "50", "--a", a.srv.URL, "--b", b.URL)
	refusing := startNode(t, "--mode", "split", "--size", "4", "--a", goneURL, "--b", goneURL)
	client := &http.Client{}
	defer client.CloseIdleConnections()
	for _, tt := range []struct {
		name, url, want string
	}{
		{"dependency slower than the timeout", svc.url + "/a", "timeout:dependency"},
		{"dependency answers 500", svc.url + "/b", "upstream:status-502"},
		{"dependency refuses", refusing.url + "/a", "upstream:status-502"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classes(t, client, tt.url, 2)
			if want := map[string]int{tt.want: 2}; !reflect.DeepEqual(got, want) {
				t.Errorf("classes = %v; want %v", got, want)
			}
		})
	}
	t.Run("service stopped", func(t *testing.T) {
		refusing.stop()
		got := classes(t, client, refusing.url+"/a", 1)
		if want := map[string]int{"connection:refused": 1}; !reflect.DeepEqual(got, want) {
			t.Errorf("classes = %v; want %v", got, want)
		}
	})
}
