package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/sony/gobreaker/v2"
)

// dependency is one downstream service: its own http.Transport (so its connections are accounted
// and pooled apart from the others'), the pool its calls take a slot from (nil in mode none), an
// optional circuit breaker, and its counters.
type dependency struct {
	name      string
	url       string
	pool      Pool
	poolName  string // the pool's name, "" without one
	transport *http.Transport
	client    *http.Client
	breaker   *gobreaker.CircuitBreaker[struct{}]
	slow      time.Duration // breaker: a slower successful call counts as a failure

	// inFlight and connsOpen are the calls in flight and the connections open, with their exact
	// time accounts. inFlight's capacity is the size of the dependency's pool when the pool holds
	// no other dependency (set by New), else 0.
	inFlight   gauge
	connsOpen  gauge
	connsInUse atomic.Int64
	connWait   atomic.Int64 // ns
	calls      atomic.Uint64
	timeouts   atomic.Uint64
	errors     atomic.Uint64
	// breakerRejected counts the calls the breaker turned away (open, or half-open and busy).
	breakerRejected atomic.Uint64
}

// errSlowCall marks a successful call slower than the breaker's SlowCallThreshold: the breaker
// counts it as a failure, the caller still gets the success.
var errSlowCall = errors.New("slow call")

// errAbandoned is the cancellation cause of calls whose result is no longer wanted (a sibling
// call of the same request already failed). The breaker ignores them.
var errAbandoned = errors.New("call abandoned: another call of the request failed")

// newDependency builds the transport for cfg. out counts open outbound connections of the whole
// service; outCap, when non-nil, caps them (TryAcquire per dial: a dial over the cap fails at once
// with ErrConnLimit rather than wait, so that the exhausted resource shows as its own reason).
func newDependency(cfg DependencyConfig, idle int, outCap *Semaphore, out *gauge, outRejected *atomic.Uint64) *dependency {
	d := &dependency{name: cfg.Name, url: strings.TrimSuffix(cfg.URL, "/") + "/"}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if outCap != nil && !outCap.TryAcquire() {
			outRejected.Add(1)
			return nil, fmt.Errorf("dial %s for %s: %w", addr, d.name, ErrConnLimit)
		}
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			if outCap != nil {
				outCap.Release()
			}
			return nil, err
		}
		d.connsOpen.inc()
		out.inc()
		return &countedConn{Conn: c, onClose: func() {
			d.connsOpen.dec()
			out.dec()
			if outCap != nil {
				outCap.Release()
			}
		}}, nil
	}
	d.transport = &http.Transport{
		DialContext:         dial,
		MaxIdleConns:        0, // no global cap; the per-host one below applies
		MaxIdleConnsPerHost: idle,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	d.client = &http.Client{Transport: d.transport}
	if b := cfg.Breaker; b != nil {
		d.breaker = newBreaker(cfg.Name, *b)
		d.slow = b.SlowCallThreshold
	}
	return d
}

// call makes one accounted call to the dependency: breaker, then pool, then HTTP. The breaker is
// outside the pool, so an open breaker rejects without taking a slot, and pool rejections are not
// counted by the breaker (they say nothing about the dependency). timeout > 0 bounds the HTTP
// call from the moment the pool admitted it (the client timeout, connect to last byte); 0 leaves
// the bound to ctx. It returns nil, a *RejectedError, or the call's error (see classify).
func (d *dependency) call(ctx context.Context, timeout time.Duration) error {
	if d.breaker == nil {
		return d.admit(ctx, timeout, nil)
	}
	_, err := d.breaker.Execute(func() (struct{}, error) {
		var took time.Duration
		err := d.admit(ctx, timeout, &took)
		if err == nil && d.slow > 0 && took > d.slow {
			return struct{}{}, errSlowCall
		}
		return struct{}{}, err
	})
	switch {
	case errors.Is(err, errSlowCall):
		return nil
	case errors.Is(err, gobreaker.ErrOpenState), errors.Is(err, gobreaker.ErrTooManyRequests):
		d.breakerRejected.Add(1)
		return &RejectedError{Pool: "breaker:" + d.name, Reason: outcome.ReasonBreakerOpen, Err: err}
	}
	return err
}

// admit runs the HTTP call under the dependency's pool (or directly when there is none). took,
// when non-nil, receives the duration of the HTTP call alone, without the wait for a slot.
func (d *dependency) admit(ctx context.Context, timeout time.Duration, took *time.Duration) error {
	fn := func(ctx context.Context) error {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, timeout, ErrTimeout)
			defer cancel()
		}
		start := time.Now()
		err := d.do(ctx)
		if took != nil {
			*took = time.Since(start)
		}
		return err
	}
	if d.pool == nil {
		return fn(ctx)
	}
	return d.pool.Do(ctx, fn)
}

// do issues GET url and reads the whole body, so the connection goes back to the idle pool. It
// blocks until the body is read or ctx is done. A status outside 2xx is a *StatusError; a call cut
// short because its budget ran out wraps ErrTimeout.
func (d *dependency) do(ctx context.Context) error {
	d.calls.Add(1)
	d.inFlight.inc()
	defer d.inFlight.dec()

	var asked time.Time
	var got atomic.Bool
	trace := &httptrace.ClientTrace{
		GetConn: func(string) { asked = time.Now() },
		GotConn: func(httptrace.GotConnInfo) {
			if !asked.IsZero() {
				d.connWait.Add(int64(time.Since(asked)))
			}
			if got.CompareAndSwap(false, true) {
				d.connsInUse.Add(1)
			}
		},
	}
	defer func() {
		if got.Load() {
			d.connsInUse.Add(-1)
		}
	}()
	req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, d.url, nil)
	if err != nil {
		d.errors.Add(1)
		return fmt.Errorf("call %s: %w", d.name, err)
	}
	resp, err := d.client.Do(req)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode < 200 || resp.StatusCode > 299) {
			err = &StatusError{Dependency: d.name, Code: resp.StatusCode}
		}
	}
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); errors.Is(cause, ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
		d.timeouts.Add(1)
		return fmt.Errorf("call %s: %w: %w", d.name, ErrTimeout, err)
	} else if cause != nil {
		// Cancelled for another reason (request gone, sibling failed): keep the cause visible.
		return fmt.Errorf("call %s: %w: %w", d.name, err, cause)
	}
	d.errors.Add(1)
	return fmt.Errorf("call %s: %w", d.name, err)
}

// stats returns the dependency's account at t; take starts a new sampling interval (see
// Service.Sample).
func (d *dependency) stats(t int64, take bool) DependencyStats {
	st := DependencyStats{
		Name:          d.name,
		InFlight:      d.inFlight.level(),
		ConnsOpen:     d.connsOpen.level(),
		InFlightUsage: d.inFlight.usage(t, take),
		ConnsUsage:    d.connsOpen.usage(t, take),
		ConnsInUse:    int(d.connsInUse.Load()),
		ConnWait:      time.Duration(d.connWait.Load()),
		Calls:         d.calls.Load(),
		Timeouts:      d.timeouts.Load(),
		Errors:        d.errors.Load(),
		Pool:          d.poolName,
	}
	if d.breaker != nil {
		st.BreakerState = d.breaker.State().String()
		st.BreakerRejected = d.breakerRejected.Load()
	}
	return st
}
