package dependency

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultAddr is the address Start binds when given "": loopback, ephemeral port.
const DefaultAddr = "127.0.0.1:0"

// HeaderName names the dependency on every response; HeaderDelay carries the delay the server
// chose for the request (latency plus jitter), as a Go duration string, on healthy responses.
const (
	HeaderName  = "X-Dependency"
	HeaderDelay = "X-Dependency-Delay"
)

// ErrStarted is returned by Start when the server is already listening or was closed.
var ErrStarted = errors.New("dependency: server already started")

// Config describes one fake dependency.
type Config struct {
	// Name identifies the dependency in the body and HeaderName ("A"). Empty is allowed.
	Name string
	// Latency is the base delay before every healthy answer. 0 answers at once; negative is 0.
	Latency time.Duration
	// Jitter adds a uniform delay in [0, Jitter) to each healthy answer. 0 (or negative) means none.
	Jitter time.Duration
	// Seed seeds the server's own random source for the jitter.
	Seed int64
}

// Stats is the server's account. Counters are cumulative since New.
type Stats struct {
	// Served counts healthy 200 answers written.
	Served uint64
	// Failed counts answers with the SetFailing status.
	Failed uint64
	// Canceled counts requests whose context ended while the server was waiting out the delay.
	Canceled uint64
	// Rejected counts requests with a method other than GET or HEAD (405).
	Rejected uint64
	// InFlight is the number of requests being handled now.
	InFlight int64
}

// Server is a fake dependency. Create it with New; the zero value is not usable.
type Server struct {
	name   string
	jitter time.Duration

	latency atomic.Int64 // time.Duration
	failing atomic.Int32 // HTTP status, 0 = healthy

	rngMu sync.Mutex
	rng   *rand.Rand

	served, failed, canceled, rejected atomic.Uint64
	inFlight                           atomic.Int64

	// wait blocks for d or until ctx is done; a seam for tests.
	wait func(ctx context.Context, d time.Duration) error

	mu         sync.Mutex
	srv        *http.Server
	url        string
	started    bool
	closed     bool
	cancelBase context.CancelFunc // ends every request context of the started server
	done       chan struct{}      // closed when Serve returns
}

// New returns a server for cfg. It does not listen: use Handler or Start.
func New(cfg Config) *Server {
	s := &Server{
		name:   cfg.Name,
		jitter: max(cfg.Jitter, 0),
		// PCG takes two 64-bit words; the second is fixed so Seed alone decides the sequence.
		rng:  rand.New(rand.NewPCG(uint64(cfg.Seed), 0x62756c6b68656164)),
		wait: sleepCtx,
	}
	s.latency.Store(int64(max(cfg.Latency, 0)))
	return s
}

// SetLatency changes the base latency for requests that arrive from now on. Negative means 0.
func (s *Server) SetLatency(d time.Duration) { s.latency.Store(int64(max(d, 0))) }

// SetFailing makes every request that arrives from now on get HTTP status at once, without the
// latency; 0 makes the server healthy again. Requests already waiting out their delay still answer
// 200. It panics on a status outside 100..599 other than 0 (misuse).
func (s *Server) SetFailing(status int) {
	if status != 0 && (status < 100 || status > 599) {
		panic(fmt.Sprintf("dependency: SetFailing(%d): not an HTTP status", status))
	}
	s.failing.Store(int32(status))
}

// Stats returns the counters. The fields are read one by one, not as one atomic snapshot.
func (s *Server) Stats() Stats {
	return Stats{
		Served:   s.served.Load(),
		Failed:   s.failed.Load(),
		Canceled: s.canceled.Load(),
		Rejected: s.rejected.Load(),
		InFlight: s.inFlight.Load(),
	}
}

// nextDelay draws the delay for one request: the current latency plus a uniform jitter.
func (s *Server) nextDelay() time.Duration {
	d := time.Duration(s.latency.Load())
	if s.jitter > 0 {
		s.rngMu.Lock()
		d += time.Duration(s.rng.Int64N(int64(s.jitter)))
		s.rngMu.Unlock()
	}
	return d
}

// Handler returns the handler that answers requests. It answers any path; GET and HEAD get
// {"dependency":"<name>"} with 200 after the delay, or the SetFailing status at once; other
// methods get 405. While waiting it honours the request's context: when the client goes away (or
// Close ends the request) the handler counts the request as Canceled and aborts it with
// panic(http.ErrAbortHandler), which net/http turns into a closed connection with no answer.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)

	h := w.Header()
	h.Set(HeaderName, s.name)
	h.Set("Content-Type", "application/json")
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.rejected.Add(1)
		h.Set("Allow", "GET, HEAD")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	if status := int(s.failing.Load()); status != 0 {
		s.failed.Add(1)
		w.WriteHeader(status)
		_, _ = w.Write(s.body(`,"error":"injected status ` + strconv.Itoa(status) + `"`))
		return
	}
	d := s.nextDelay()
	if err := s.wait(r.Context(), d); err != nil {
		s.canceled.Add(1)
		// Returning normally would make net/http send an empty 200, which a caller still
		// listening (during Close) would take for success; abort the connection instead.
		panic(http.ErrAbortHandler)
	}
	s.served.Add(1)
	h.Set(HeaderDelay, d.String())
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(s.body(""))
	}
}

func (s *Server) body(extra string) []byte {
	return []byte(`{"dependency":` + strconv.Quote(s.name) + extra + "}\n")
}

// sleepCtx blocks for d or until ctx is done, whichever is first; it returns ctx.Err() in the
// second case.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Start listens on addr ("" means DefaultAddr, 127.0.0.1 on an ephemeral port) and serves Handler
// in a background goroutine. It returns once the listener is bound, with the base URL
// ("http://127.0.0.1:40123"). A server can be started once; a second Start returns ErrStarted. On
// a listen error nothing is left running and Start may be called again.
func (s *Server) Start(addr string) (url string, err error) {
	if addr == "" {
		addr = DefaultAddr
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return "", ErrStarted
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("dependency %q: listen on %s: %w", s.name, addr, err)
	}
	s.started = true
	s.url = "http://" + ln.Addr().String()
	base, cancel := context.WithCancel(context.Background())
	s.cancelBase = cancel
	s.srv = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	s.done = make(chan struct{})
	go func(srv *http.Server, done chan struct{}) {
		defer close(done)
		_ = srv.Serve(ln) // returns http.ErrServerClosed after Close or Shutdown
	}(s.srv, s.done)
	return s.url, nil
}

// URL returns the base URL Start bound, or "" before Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Close stops the listener, closes every connection and ends every request context at once, so
// handlers waiting out a delay return without answering. It waits for the serve goroutine to exit.
// It is a no-op before Start and after an earlier Close, and a closed server cannot be started
// again.
func (s *Server) Close() error {
	s.mu.Lock()
	s.started = true
	if s.srv == nil || s.closed {
		s.closed = true
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	srv, done, cancel := s.srv, s.done, s.cancelBase
	s.mu.Unlock()

	err := srv.Close() // connections first, so an ended handler has nowhere to answer
	cancel()
	<-done
	if err != nil {
		return fmt.Errorf("dependency %q: close: %w", s.name, err)
	}
	return nil
}

// Shutdown stops accepting connections and waits for in-flight requests to finish (each after its
// delay), or until ctx is done. On success it returns nil. When ctx ends first it returns
// ctx.Err() wrapped, leaving the remaining connections open: call Close to drop them. It is a
// no-op before Start and after Close.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.started = true
	srv, done, closed := s.srv, s.done, s.closed
	s.mu.Unlock()
	if srv == nil || closed {
		return nil
	}
	if err := srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("dependency %q: shutdown: %w", s.name, err)
	}
	<-done
	s.mu.Lock()
	s.closed = true
	s.cancelBase()
	s.mu.Unlock()
	return nil
}
