package scrape_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/scrape"
	"github.com/bulkheadlab/bulkhead/service"
)

// heldDep is a dependency whose answers wait until release is closed.
type heldDep struct {
	srv     *httptest.Server
	arrived chan struct{}
	release chan struct{}
	once    sync.Once
}

func newHeldDep(t testing.TB) *heldDep {
	d := &heldDep{arrived: make(chan struct{}, 64), release: make(chan struct{})}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.arrived <- struct{}{}
		select {
		case <-d.release:
		case <-r.Context().Done():
		}
		io.WriteString(w, "dep\n")
	}))
	t.Cleanup(func() { d.Release(); d.srv.Close() })
	return d
}

func (d *heldDep) Release() { d.once.Do(func() { close(d.release) }) }

// builtin starts the built-in service for pools, with /a calling A (held) and /b calling B (quick).
func builtin(t testing.TB, pools []service.PoolConfig) (*service.Service, *heldDep, string) {
	a := newHeldDep(t)
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "dep\n") }))
	t.Cleanup(b.Close)
	mode := service.ModeSplit
	if len(pools) == 1 {
		mode = service.ModeShared
	}
	svc, err := service.New(service.Config{
		Mode:          mode,
		Pools:         pools,
		Dependencies:  []service.DependencyConfig{{Name: "A", URL: a.srv.URL}, {Name: "B", URL: b.URL}},
		Endpoints:     []service.EndpointConfig{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}},
		ClientTimeout: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(svc.Handler())
	t.Cleanup(func() {
		a.Release()
		srv.Close()
		svc.Shutdown(context.Background())
	})
	return svc, a, srv.URL
}

// until polls cond between yields, failing after a bounded number of polls; it waits for a state
// other goroutines are about to reach, never for a duration.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 5_000_000 {
		if cond() {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("%s: never happened", what)
}

// The built-in service's /metrics, scraped and mapped, gives the same pools and queues (names,
// capacity, in use, rejections; in any order) as its in-process snapshot, in every pool layout, while a held
// dependency keeps its pool full.
func TestRoundTrip(t *testing.T) {
	tests := []struct {
		name  string
		pools []service.PoolConfig
		held  int // calls to /a that reach A and stay there
		extra int // further calls to /a that wait in a queue (answered when A is released)
		turn  int // further calls to /a, turned away at once
		want  []outcome.Resource
	}{
		{name: "split semaphores", pools: mustDefaultPools(service.ModeSplit, 4, []string{"A", "B"}, time.Minute),
			held: 2, turn: 3, want: []outcome.Resource{
				{Name: "pool:A", Capacity: 2, InUse: 2, Rejected: 3},
				{Name: "pool:B", Capacity: 2, InUse: 0},
			}},
		{name: "shared workers with a queue", pools: mustDefaultPools(service.ModeShared, 2, []string{"A", "B"}, time.Minute),
			held: 2, extra: 3, turn: 0, want: []outcome.Resource{
				{Name: "pool:shared", Capacity: 2, InUse: 2},
				{Name: "queue:shared", Capacity: 4, InUse: 3},
			}},
		{name: "shared workers, queue full", pools: mustDefaultPools(service.ModeShared, 1, []string{"A", "B"}, time.Minute),
			held: 1, extra: 2, turn: 2, want: []outcome.Resource{
				{Name: "pool:shared", Capacity: 1, InUse: 1},
				{Name: "queue:shared", Capacity: 2, InUse: 2, Rejected: 2},
			}},
		{name: "semaphore with a waiting room", pools: []service.PoolConfig{
			{Name: "A", Kind: service.KindSemaphore, Size: 1, QueueCapacity: 2, MaxWait: time.Minute, Dependencies: []string{"A"}},
			{Name: "B", Kind: service.KindSemaphore, Size: 3, Dependencies: []string{"B"}}},
			held: 1, extra: 1, want: []outcome.Resource{
				{Name: "pool:A", Capacity: 1, InUse: 1},
				{Name: "queue:A", Capacity: 2, InUse: 1},
				{Name: "pool:B", Capacity: 3, InUse: 0},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, a, url := builtin(t, tt.pools)
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
			var wg sync.WaitGroup
			t.Cleanup(func() { a.Release(); wg.Wait() })
			call := func() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if resp, err := client.Get(url + "/a"); err == nil {
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
				}()
			}
			for range tt.held {
				call()
			}
			for range tt.held {
				<-a.arrived
			}
			waiting := func() int {
				n := 0
				for _, p := range svc.Snapshot().Pools {
					n += p.Waiting
				}
				return n
			}
			for range tt.extra {
				call()
			}
			until(t, "callers queued", func() bool { return waiting() == tt.extra })
			for range tt.turn {
				resp, err := client.Get(url + "/a")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusServiceUnavailable {
					t.Fatalf("extra /a answered %d; want 503", resp.StatusCode)
				}
			}

			s, err := scrape.New(url+service.MetricsPath, scrape.Config{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			scraped, err := s.Resources(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			inproc := svc.Snapshot().Resources()
			pick := func(rs []outcome.Resource) []outcome.Resource {
				var out []outcome.Resource
				for _, r := range rs {
					if k, _ := outcome.SplitResource(r.Name); k == outcome.ResourcePool || k == outcome.ResourceQueue {
						out = append(out, r)
					}
				}
				slices.SortFunc(out, func(a, b outcome.Resource) int { return strings.Compare(a.Name, b.Name) })
				return out
			}
			if got, want := pick(scraped), pick(tt.want); !reflect.DeepEqual(got, want) {
				t.Errorf("scraped pools =\n %+v\nwant\n %+v", got, tt.want)
			}
			if got, want := pick(scraped), pick(inproc); !reflect.DeepEqual(got, want) {
				t.Errorf("scraped pools =\n %+v\nin-process snapshot\n %+v", got, want)
			}
			// Per dependency, calls in flight and open connections agree too, capacity included:
			// calls:<dep> alone in its pool is capped at the pool's size in both, so what ran out
			// names the same resources either way.
			byName := map[string]outcome.Resource{}
			for _, r := range scraped {
				byName[r.Name] = r
			}
			for _, r := range inproc {
				k, _ := outcome.SplitResource(r.Name)
				if k != outcome.ResourceCalls && k != outcome.ResourceConns {
					continue
				}
				if got, ok := byName[r.Name]; !ok || got.InUse != r.InUse || got.Capacity != r.Capacity {
					t.Errorf("%s: scraped %+v (found %v); in-process in use %v of %v", r.Name, got, ok, r.InUse, r.Capacity)
				}
			}
		})
	}
}

// BenchmarkScrape measures one scrape of the built-in service's /metrics over loopback HTTP and
// its parse into resources (what the runner pays per sample), next to its two halves: the fetch
// alone (the service renders the page, most of it the Go and process collectors) and the parse
// alone.
func BenchmarkScrape(b *testing.B) {
	svc, _, url := builtin(b, mustDefaultPools(service.ModeSplit, 10, []string{"A", "B"}, time.Second))
	_ = svc
	s, err := scrape.New(url+service.MetricsPath, scrape.Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	resp, err := http.Get(url + service.MetricsPath)
	if err != nil {
		b.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	ms := scrape.Builtin()
	b.Run("scrape+parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := s.Resources(context.Background()); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fetch", func(b *testing.B) {
		c := &http.Client{}
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, url+service.MetricsPath, nil)
			req.Header.Set("Accept", "text/plain;version=0.0.4")
			resp, err := c.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(page)))
		for b.Loop() {
			if _, err := scrape.Parse(strings.NewReader(string(page)), ms); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// mustDefaultPools is scenarios.DefaultPools for layouts a test knows are valid.
func mustDefaultPools(mode service.Mode, p int, deps []string, timeout time.Duration) []service.PoolConfig {
	pools, err := scenarios.DefaultPools(mode, p, deps, timeout)
	if err != nil {
		panic(err)
	}
	return pools
}
