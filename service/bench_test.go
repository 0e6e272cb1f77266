package service

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
	"golang.org/x/sync/semaphore"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// sem is the subset of a one-permit-at-a-time semaphore the benchmarks compare (the shape of
// x/sync's semaphore_bench_test.go).
type sem interface {
	Acquire(context.Context) error
	TryAcquire() bool
	Release()
}

// semChan is the buffered-channel semaphore, the usual Go idiom.
type semChan chan struct{}

func (s semChan) Acquire(ctx context.Context) error {
	select {
	case s <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s semChan) TryAcquire() bool {
	select {
	case s <- struct{}{}:
		return true
	default:
		return false
	}
}

func (s semChan) Release() { <-s }

// weighted adapts x/sync's semaphore.Weighted to one permit per call.
type weighted struct{ w *semaphore.Weighted }

func (s weighted) Acquire(ctx context.Context) error { return s.w.Acquire(ctx, 1) }
func (s weighted) TryAcquire() bool                  { return s.w.TryAcquire(1) }
func (s weighted) Release()                          { s.w.Release(1) }

var _ sem = (*Semaphore)(nil)

func semaphores(size int) []struct {
	name string
	s    sem
} {
	return []struct {
		name string
		s    sem
	}{
		{"ours", NewSemaphore(PoolConfig{Name: "bench", Size: size})},
		{"main", newSemMain(PoolConfig{Name: "bench", Size: size})},
		{"chan", make(semChan, size)},
		{"xsync", weighted{semaphore.NewWeighted(int64(size))}},
	}
}

// BenchmarkSemaphore measures one acquire+release. Run with -cpu=1,2 -benchmem. The parallel
// variant has more permits than goroutines, so it measures contention on the counter, not
// waiting. "main" is the semaphore before exact accounting (semmain_bench_test.go); do-serial
// and do-parallel compare the accounted Do, which reads the clock twice per call, with main's.
func BenchmarkSemaphore(b *testing.B) {
	ctx := context.Background()
	for _, v := range semaphores(64) {
		b.Run("try-serial/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !v.s.TryAcquire() {
					b.Fatal("TryAcquire = false")
				}
				v.s.Release()
			}
		})
	}
	for _, v := range semaphores(64) {
		b.Run("acquire-serial/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.s.Acquire(ctx); err != nil {
					b.Fatal(err)
				}
				v.s.Release()
			}
		})
	}
	for _, v := range semaphores(64) {
		b.Run("acquire-parallel/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := v.s.Acquire(ctx); err != nil {
						b.Error(err)
						return
					}
					v.s.Release()
				}
			})
		})
	}
}

func BenchmarkSemaphoreDo(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	dos := func() []struct {
		name string
		p    interface {
			Do(context.Context, func(context.Context) error) error
		}
	} {
		return []struct {
			name string
			p    interface {
				Do(context.Context, func(context.Context) error) error
			}
		}{
			{"ours", NewSemaphore(PoolConfig{Name: "bench", Size: 64})},
			{"main", newSemMain(PoolConfig{Name: "bench", Size: 64})},
		}
	}
	for _, v := range dos() {
		b.Run("do-serial/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.p.Do(ctx, noop); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, v := range dos() {
		b.Run("do-parallel/"+v.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := v.p.Do(ctx, noop); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkPoolMemory builds 500 pools of 20 slots, a partner hub: the bytes the
// semaphore pools allocate, and for worker pools the bytes, goroutines and stack they hold.
func BenchmarkPoolMemory(b *testing.B) {
	const pools, size = 500, 20
	names := make([]string, pools)
	for i := range names {
		names[i] = fmt.Sprintf("partner-%03d", i)
	}
	measure := func(b *testing.B, build func(name string) Pool) {
		var bytes, gor, stack float64
		for b.Loop() {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			g0 := runtime.NumGoroutine()
			ps := make([]Pool, pools)
			for i := range ps {
				ps[i] = build(names[i])
			}
			runtime.ReadMemStats(&after)
			bytes += float64(after.TotalAlloc - before.TotalAlloc)
			gor += float64(runtime.NumGoroutine() - g0)
			stack += float64(after.StackInuse) - float64(before.StackInuse)
			for _, p := range ps {
				p.Close()
			}
		}
		n := float64(b.N)
		b.ReportMetric(bytes/n, "bytes/500pools")
		b.ReportMetric(gor/n, "goroutines/500pools")
		b.ReportMetric(stack/n, "stackbytes/500pools")
	}
	b.Run("semaphore", func(b *testing.B) {
		measure(b, func(name string) Pool { return NewSemaphore(PoolConfig{Name: name, Size: size}) })
	})
	b.Run("semaphore-with-queue", func(b *testing.B) {
		measure(b, func(name string) Pool {
			return NewSemaphore(PoolConfig{Name: name, Size: size, QueueCapacity: size, MaxWait: time.Second})
		})
	})
	b.Run("workers", func(b *testing.B) {
		measure(b, func(name string) Pool {
			return NewWorkers(PoolConfig{Name: name, Kind: KindWorkers, Size: size, QueueCapacity: size})
		})
	})
}

// TestAddedLatency measures what the service adds to a dependency call: vegeta drives 1000 rps
// for 5 s at a fake dependency that answers at once, first directly, then through the service in
// each mode, and logs exact p50/p99 (sorted latencies). It is a measurement, not a check: it runs
// only with BULKHEAD_LATENCY=1, e.g.
//
//	BULKHEAD_LATENCY=1 go test -run TestAddedLatency -v ./service/
func TestAddedLatency(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_LATENCY", "the service's added latency (5 s per target)")
	const rate, dur = 1000, 5 * time.Second
	dep := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("dep\n"))
	}))
	defer dep.Close()

	attack := func(url string) (p50, p99 time.Duration, okN, n int) {
		atk := vegeta.NewAttacker(vegeta.Timeout(5*time.Second), vegeta.KeepAlive(true))
		tr := vegeta.NewStaticTargeter(vegeta.Target{Method: "GET", URL: url})
		var lat []time.Duration
		for res := range atk.Attack(tr, vegeta.Rate{Freq: rate, Per: time.Second}, dur, url) {
			n++
			if res.Code == 200 {
				okN++
				lat = append(lat, res.Latency)
			}
		}
		atk.Stop()
		slices.Sort(lat)
		if len(lat) == 0 {
			return 0, 0, okN, n
		}
		return lat[len(lat)*50/100], lat[min(len(lat)-1, len(lat)*99/100)], okN, n
	}

	p50, p99, okN, n := attack(dep.URL + "/")
	t.Logf("direct            p50 %8v  p99 %8v  (%d/%d ok)", p50, p99, okN, n)
	for _, mode := range []Mode{ModeNone, ModeSplit, ModeShared} {
		s, err := New(Config{
			Mode:          mode,
			Pools:         layout(mode, 64, []string{"A"}, time.Second),
			Dependencies:  []DependencyConfig{{Name: "A", URL: dep.URL}},
			Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}},
			ClientTimeout: time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		url, err := s.Start("")
		if err != nil {
			t.Fatal(err)
		}
		sp50, sp99, okN, n := attack(url + "/a")
		t.Logf("service %-9s p50 %8v  p99 %8v  (%d/%d ok)  added p50 %v p99 %v", mode, sp50, sp99, okN, n, sp50-p50, sp99-p99)
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	}
}

// BenchmarkRequestMetrics is the per-request cost of the endpoint instrumentation (status
// recorder, counter, histogram) on a handler that only writes its status, next to the bare
// handler: our overhead on the hot path, without the network.
func BenchmarkRequestMetrics(b *testing.B) {
	bare := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	rm := newRequestMetrics()
	req := httptest.NewRequest(http.MethodGet, "/a", nil)
	for _, v := range []struct {
		name string
		h    http.Handler
	}{{"bare", bare}, {"instrumented", rm.instrument("/a", bare)}} {
		b.Run(v.name, func(b *testing.B) {
			w := httptest.NewRecorder()
			b.ReportAllocs()
			for b.Loop() {
				v.h.ServeHTTP(w, req)
			}
		})
	}
}

// BenchmarkWorkersDo is a worker pool's overhead per call (hand-over to a worker and back, no
// queueing): one caller at a time, and callers on every P against a pool of 64 workers.
func BenchmarkWorkersDo(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	b.Run("do-serial", func(b *testing.B) {
		p := NewWorkers(PoolConfig{Name: "bench", Size: 64})
		defer p.Close()
		b.ReportAllocs()
		for b.Loop() {
			if err := p.Do(ctx, noop); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("do-parallel", func(b *testing.B) {
		p := NewWorkers(PoolConfig{Name: "bench", Size: 64})
		defer p.Close()
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := p.Do(ctx, noop); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkAdaptiveDo is an adaptive pool's overhead per call: admission and release through its
// Meter (a mutex and a clock read each) and one sample for the algorithm under the pool's mutex,
// for each kind, one caller at a time and callers on every P (the limit stays at the size 64:
// the samples are fast and keep it busy enough to grow).
func BenchmarkAdaptiveDo(b *testing.B) {
	ctx := context.Background()
	noop := func(context.Context) error { return nil }
	for _, kind := range []PoolKind{KindAIMD, KindGradient2, KindVegas} {
		cfg := func() PoolConfig {
			p, _ := NewPoolParams(kind)
			return PoolConfig{Name: "bench", Kind: kind, Size: 64, Params: p}
		}
		b.Run("do-serial/"+string(kind), func(b *testing.B) {
			p, err := NewPool(cfg())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Do(ctx, noop); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("do-parallel/"+string(kind), func(b *testing.B) {
			p, err := NewPool(cfg())
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := p.Do(ctx, noop); err != nil && !errors.Is(err, ErrFull) {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
