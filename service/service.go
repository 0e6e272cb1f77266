package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Service is the sample service: each endpoint calls its dependencies over HTTP, every call
// taking a slot from its dependency's pool. Build it with New; serve Handler on any server, or
// call Serve or Start; stop it with Shutdown. It is safe for concurrent use.
type Service struct {
	cfg       Config
	pools     []Pool
	deps      []*dependency
	byName    map[string]*dependency
	handler   http.Handler
	registry  *prometheus.Registry
	afterFunc func(d time.Duration, f func()) (stop func() bool) // clock seam for request budgets and inbound retries
	logf      func(format string, args ...any)                   // reports given-up inbound items
	inbounds  []*inbound                                         // accept-fast endpoints, in Config order

	inFlight     atomic.Int64
	inbound      gauge // open inbound connections, capacity MaxInboundConns
	outbound     gauge // open outbound connections, capacity MaxOutboundConns
	outRejected  atomic.Uint64
	outboundPool *Semaphore // nil when MaxOutboundConns is 0

	mu        sync.Mutex
	server    *http.Server
	serving   sync.WaitGroup
	closeOnce sync.Once
}

// New validates cfg (Validate), builds the pools (starting the worker goroutines of workers
// pools), one HTTP transport per dependency and the routes. It returns a *ValidationError
// (errors.Is ErrInvalidConfig) when cfg cannot run, leaving nothing started. Call Shutdown to
// release what it started.
func New(cfg Config) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode == "" {
		cfg.Mode = ModeShared
	}
	if cfg.MaxIdleConnsPerDependency == 0 {
		cfg.MaxIdleConnsPerDependency = DefaultMaxIdleConnsPerDependency
	}
	s := &Service{
		cfg:    cfg,
		byName: map[string]*dependency{},
		afterFunc: func(d time.Duration, f func()) func() bool {
			return time.AfterFunc(d, f).Stop
		},
		logf:     log.Printf,
		inbound:  gauge{capacity: int64(cfg.MaxInboundConns)},
		outbound: gauge{capacity: int64(cfg.MaxOutboundConns)},
	}
	if cfg.MaxOutboundConns > 0 {
		s.outboundPool = NewSemaphore(PoolConfig{Name: "outbound-conns", Size: cfg.MaxOutboundConns})
	}
	for _, dc := range cfg.Dependencies {
		d := newDependency(dc, cfg.MaxIdleConnsPerDependency, s.outboundPool, &s.outbound, &s.outRejected)
		s.deps = append(s.deps, d)
		s.byName[d.name] = d
	}
	for _, pc := range cfg.Pools {
		p, err := NewPool(pc)
		if err != nil { // unreachable after Validate, kept for safety
			s.closePools()
			return nil, fmt.Errorf("pool %s: %w", pc.Name, err)
		}
		s.pools = append(s.pools, p)
		names := pc.Dependencies
		if len(names) == 0 { // a shared pool listing no dependency covers all
			for _, d := range s.deps {
				d.pool, d.poolName = p, pc.Name
			}
		}
		for _, n := range names {
			s.byName[n].pool, s.byName[n].poolName = p, pc.Name
		}
	}
	// A dependency alone in a pool of fixed size is capped at that size: its calls in flight are
	// at capacity exactly when the pool is (see Snapshot.Resources, calls:<dep>). A pool whose
	// limit moves (Limit set) caps them at the limit of each moment, which pool:<name> accounts.
	members := map[Pool]int{}
	for _, d := range s.deps {
		if d.pool != nil {
			members[d.pool]++
		}
	}
	for _, d := range s.deps {
		if d.pool != nil && members[d.pool] == 1 {
			if st := d.pool.Account(Now(), false); st.Limit == nil {
				d.inFlight.capacity = int64(st.Capacity)
			}
		}
	}

	s.registry = prometheus.NewRegistry()
	s.registry.MustRegister(collector{s})
	reqs := newRequestMetrics()
	reqs.register(s.registry)
	r := newRouter(http.HandlerFunc(s.serveResources), promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}))
	for _, e := range cfg.Endpoints {
		h := s.endpoint
		if e.Inbound != nil {
			h = s.inboundEndpoint
		}
		if err := r.handle(e.Path, reqs.instrument(e.Path, h(e))); err != nil { // unreachable after Validate, which registers the same way
			s.Shutdown(context.Background()) //nolint:errcheck // nothing serves yet: it only closes
			return nil, fmt.Errorf("endpoint %s: %w", e.Path, err)
		}
	}
	s.handler = r.mux
	return s, nil
}

// Handler returns the service's routes: every endpoint, DebugResourcesPath and MetricsPath. It
// does not listen; serve it on any http.Server (or httptest.NewServer).
func (s *Service) Handler() http.Handler { return s.handler }

// Serve accepts connections on l until Shutdown, counting them (and capping them at
// MaxInboundConns). It blocks; it returns nil after Shutdown, or the server's error.
func (s *Service) Serve(l net.Listener) error {
	srv := s.httpServer()
	s.serving.Add(1)
	defer s.serving.Done()
	return s.serve(srv, l)
}

// Start listens on addr ("" means 127.0.0.1:0, an ephemeral loopback port), serves in a new
// goroutine and returns the base URL ("http://127.0.0.1:PORT"). Shutdown stops it and waits for
// that goroutine.
func (s *Service) Start(addr string) (string, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("service listen %s: %w", addr, err)
	}
	srv := s.httpServer()
	s.serving.Add(1) // before the goroutine, so a Shutdown right after Start waits for it
	go func() {
		defer s.serving.Done()
		s.serve(srv, l) //nolint:errcheck // after a successful listen only Shutdown ends it
	}()
	return "http://" + l.Addr().String(), nil
}

func (s *Service) httpServer() *http.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		s.server = &http.Server{Handler: s.handler, ReadHeaderTimeout: 10 * time.Second}
	}
	return s.server
}

func (s *Service) serve(srv *http.Server, l net.Listener) error {
	err := srv.Serve(newCountingListener(l, s.cfg.MaxInboundConns, &s.inbound))
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return fmt.Errorf("service serve: %w", err)
}

// Shutdown stops the server gracefully (no new connections; waits for in-flight requests until
// ctx is done), then stops the inbound endpoints (deferred items are not retried and in-flight
// processing is cancelled: both are counted as pending at stop; it waits for the processing
// goroutines), then closes the pools (waiting for worker goroutines to exit) and the idle
// connections to dependencies. It returns ctx's error if requests were still running when ctx
// ended; the pools are closed in every case. It is safe to call when only Handler was used, and
// more than once.
func (s *Service) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	srv := s.server
	s.mu.Unlock()
	var err error
	if srv != nil {
		err = srv.Shutdown(ctx)
		s.serving.Wait()
	}
	s.closeOnce.Do(func() {
		for _, in := range s.inbounds {
			in.close()
		}
		s.closePools()
	})
	for _, d := range s.deps {
		d.transport.CloseIdleConnections()
	}
	if err != nil {
		return fmt.Errorf("service shutdown: %w", err)
	}
	return nil
}

func (s *Service) closePools() {
	for _, p := range s.pools {
		p.Close()
	}
}

// endpoint serves one inbound path. It counts the request in flight, makes its calls and writes
// the classified outcome.
func (s *Service) endpoint(e EndpointConfig) http.Handler {
	deps := make([]*dependency, len(e.Calls))
	for i, n := range e.Calls {
		deps[i] = s.byName[n]
	}
	shared := e.Deadline == DeadlineShared
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inFlight.Add(1)
		defer s.inFlight.Add(-1)
		if len(deps) == 1 {
			classify(deps[0].name, deps[0].call(r.Context(), s.cfg.ClientTimeout)).write(w)
			return
		}
		dep, err := s.callAll(r.Context(), deps, shared)
		classify(dep, err).write(w)
	})
}

// callAll starts every call of one request concurrently and collects the results in order, the
// way a caller collects Futures. With shared == false (per-call) each wait gets its own
// ClientTimeout budget, started when the wait starts, and the call is cancelled when its wait
// runs out: the worst case is the sum of the budgets. With shared == true one ClientTimeout
// budget, started with the request, covers every wait. The first failure in order ends the
// request (the others are cancelled and waited for, so no call outlives the request); it
// returns that dependency's name and error, or "" and nil.
func (s *Service) callAll(ctx context.Context, deps []*dependency, shared bool) (string, error) {
	type call struct {
		cancel context.CancelCauseFunc
		done   chan error
	}
	calls := make([]call, len(deps))
	for i, d := range deps {
		cctx, cancel := context.WithCancelCause(ctx)
		c := call{cancel: cancel, done: make(chan error, 1)}
		calls[i] = c
		go func() { c.done <- d.call(cctx, 0) }()
	}
	defer func() {
		for _, c := range calls {
			c.cancel(errAbandoned)
		}
		for _, c := range calls {
			if c.done != nil {
				<-c.done
			}
		}
	}()
	if shared {
		stop := s.afterFunc(s.cfg.ClientTimeout, func() {
			// By index, reading cancel only: the loop below clears done concurrently.
			for i := range calls {
				calls[i].cancel(ErrTimeout)
			}
		})
		defer stop()
	}
	for i, d := range deps {
		c := &calls[i]
		var stop func() bool
		if !shared {
			stop = s.afterFunc(s.cfg.ClientTimeout, func() { c.cancel(ErrTimeout) })
		}
		err := <-c.done
		c.done = nil
		if stop != nil {
			stop()
		}
		if err != nil {
			return d.name, err
		}
	}
	return "", nil
}

// Snapshot returns the service's resource account at this instant. It takes no lock other than a
// breaker's (for its state), an inbound endpoint's (for its given-up ids) and the usage readers'
// (a few loads each), and allocates only the result.
func (s *Service) Snapshot() Snapshot { return s.snapshot(false) }

// Sample is Snapshot for the one sampler of a run: it also starts a new sampling interval, so
// each Usage's Peak and FirstFull cover the time since the previous Sample. Resources(prev) of two
// consecutive samples gives the exact figures of the interval between them. Only one goroutine
// may call Sample; Snapshot may run beside it.
func (s *Service) Sample() Snapshot { return s.snapshot(true) }

func (s *Service) snapshot(take bool) Snapshot {
	t := now()
	snap := Snapshot{
		Time:         epoch.Add(time.Duration(t)),
		Mono:         time.Duration(t),
		Pools:        make([]PoolStats, 0, len(s.pools)),
		Dependencies: make([]DependencyStats, 0, len(s.deps)),
		Process: ProcessStats{
			InFlight:              int(s.inFlight.Load()),
			Goroutines:            runtime.NumGoroutine(),
			InboundConns:          s.inbound.level(),
			InboundConnsCap:       s.cfg.MaxInboundConns,
			OutboundConns:         s.outbound.level(),
			OutboundConnsCap:      s.cfg.MaxOutboundConns,
			OutboundConnsRejected: s.outRejected.Load(),
		},
	}
	snap.Process.InboundConnsUsage = s.inbound.usage(t, take)
	snap.Process.OutboundConnsUsage = s.outbound.usage(t, take)
	snap.Process.HeapBytes, snap.Process.StackBytes = readMemory()
	for _, p := range s.pools {
		snap.Pools = append(snap.Pools, p.Account(time.Duration(t), take))
	}
	for _, d := range s.deps {
		snap.Dependencies = append(snap.Dependencies, d.stats(t, take))
	}
	for _, in := range s.inbounds {
		snap.Inbound = append(snap.Inbound, in.stats(t, take))
	}
	return snap
}

func (s *Service) serveResources(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(s.Snapshot()) //nolint:errcheck // the client went away
}
