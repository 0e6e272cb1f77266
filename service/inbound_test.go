package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// fakeTimers stands in for time.AfterFunc: it records the retries the service schedules and
// runs them when the test says so, so a deferred item is re-dispatched at a point the test
// chooses rather than after a real delay.
type fakeTimers struct {
	mu  sync.Mutex
	fns []func()
}

func (f *fakeTimers) after(_ time.Duration, fn func()) func() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fns = append(f.fns, fn)
	return func() bool { return true }
}

// fire runs every retry scheduled so far and returns how many there were.
func (f *fakeTimers) fire() int {
	f.mu.Lock()
	fns := f.fns
	f.fns = nil
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
	return len(fns)
}

// deliver sends one webhook with the given item id and returns its result and the echoed id.
func deliver(t *testing.T, c *http.Client, url, id string) (result, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"booking":"confirmed"}`))
	if err != nil {
		t.Fatal(err)
	}
	if id != "" {
		req.Header.Set(outcome.HeaderItem, id)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	h := resp.Header
	return result{resp.StatusCode, h.Get(outcome.HeaderOutcome), h.Get(outcome.HeaderPool), h.Get(outcome.HeaderReason), h.Get(outcome.HeaderDependency)}, h.Get(outcome.HeaderItem)
}

// webhookConfig is one inbound endpoint /webhooks/c whose processing calls dependency W under a
// semaphore of one slot named "webhooks" (so the test decides when the slot is free by holding
// W's answer).
func webhookConfig(w *fakeDep, in InboundConfig) Config {
	in.Pool = "webhooks"
	return Config{
		Mode:          ModeSplit,
		Pools:         []PoolConfig{{Name: "webhooks", Size: 1, Dependencies: []string{"W"}}},
		Dependencies:  []DependencyConfig{{Name: "W", URL: w.srv.URL}},
		Endpoints:     []EndpointConfig{{Path: "/webhooks/c", Calls: []string{"W"}, Inbound: &in}},
		ClientTimeout: time.Minute, // the test releases W; nothing here may time out
	}
}

// inboundStats returns the snapshot's account of /webhooks/c.
func inboundStats(s *Service) InboundStats {
	for _, in := range s.Snapshot().Inbound {
		if in.Endpoint == "/webhooks/c" {
			return in
		}
	}
	return InboundStats{}
}

var accepted = result{status: http.StatusAccepted, outcome: outcome.Accepted}

// TestInboundDefersWithAttemptCounter is "what to do when there is no slot": the
// second webhook finds the inbound bulkhead's only slot taken, is acknowledged anyway (202, at
// once: the first one's processing is still held), deferred and re-dispatched with its attempt
// counter one higher. With a dedupe set keyed on the fingerprint, the counter is what keeps the
// re-dispatch from being dropped as a duplicate; leaving it out loses the item.
func TestInboundDefersWithAttemptCounter(t *testing.T) {
	tests := []struct {
		name        string
		omitAttempt bool
		// after the retry
		wantProcessed, wantDuplicates uint64
	}{
		{name: "attempt counter in the fingerprint: the deferred item is processed", wantProcessed: 2},
		{name: "no attempt counter: the deferred item is dropped as a duplicate", omitAttempt: true, wantProcessed: 1, wantDuplicates: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newFakeDep(t, true, http.StatusOK)
			s, url, c := testService(t, webhookConfig(w, InboundConfig{Attempts: 5, Dedupe: true, OmitAttempt: tt.omitAttempt}), w)
			timers := &fakeTimers{}
			s.afterFunc = timers.after

			if got, id := deliver(t, c, url+"/webhooks/c", "c-1"); got != accepted || id != "c-1" {
				t.Fatalf("first webhook: %+v id %q, want %+v id c-1", got, id, accepted)
			}
			w.waitArrived(1) // c-1 holds the only slot
			// Answered while c-1's processing is held: accepting does not wait for a slot.
			if got, _ := deliver(t, c, url+"/webhooks/c", "c-2"); got != accepted {
				t.Fatalf("second webhook: %+v, want %+v", got, accepted)
			}
			eventually(t, "c-2 deferred", func() bool {
				st := inboundStats(s)
				return st.Deferred == 1 && st.Waiting == 1 && st.Backlog == 2
			})
			w.Release()
			eventually(t, "c-1 processed", func() bool { return inboundStats(s).Processed == 1 })
			if n := timers.fire(); n != 1 {
				t.Fatalf("%d retries scheduled, want 1", n)
			}
			eventually(t, "c-2 done", func() bool { st := inboundStats(s); return st.Backlog == 0 })
			st := inboundStats(s)
			if st.Processed != tt.wantProcessed || st.Duplicates != tt.wantDuplicates || st.GivenUp != 0 || st.Accepted != 2 {
				t.Errorf("accepted %d, processed %d, duplicates %d, given up %d; want 2, %d, %d, 0",
					st.Accepted, st.Processed, st.Duplicates, st.GivenUp, tt.wantProcessed, tt.wantDuplicates)
			}
		})
	}
}

// TestInboundDedupeDropsRedeliveries: the dedupe set does its own job too: a webhook delivered
// twice with the same id is processed once.
func TestInboundDedupeDropsRedeliveries(t *testing.T) {
	w := newFakeDep(t, false, http.StatusOK)
	s, url, c := testService(t, webhookConfig(w, InboundConfig{Dedupe: true}), w)
	for _, id := range []string{"c-1", "c-1", "c-2"} {
		if got, _ := deliver(t, c, url+"/webhooks/c", id); got != accepted {
			t.Fatalf("webhook %s: %+v, want %+v", id, got, accepted)
		}
	}
	eventually(t, "backlog empty", func() bool { return inboundStats(s).Backlog == 0 })
	if st := inboundStats(s); st.Processed != 2 || st.Duplicates != 1 {
		t.Errorf("processed %d, duplicates %d; want 2, 1", st.Processed, st.Duplicates)
	}
}

// TestInboundGivesUpLoudly: an item that never finds a slot is tried Attempts times in all and
// then given up: counted, listed by id, logged once, and visible as the rejections of its
// inbound:<path> resource, while each turned-away try shows on retry:<path>.
func TestInboundGivesUpLoudly(t *testing.T) {
	tests := []struct {
		attempts    int
		wantRetries int // retries scheduled before the item is given up
	}{
		{attempts: 1, wantRetries: 0},
		{attempts: 3, wantRetries: 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("attempts %d", tt.attempts), func(t *testing.T) {
			w := newFakeDep(t, true, http.StatusOK)
			s, url, c := testService(t, webhookConfig(w, InboundConfig{Attempts: tt.attempts}), w)
			timers := &fakeTimers{}
			s.afterFunc = timers.after
			var logged []string
			var mu sync.Mutex
			s.logf = func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				logged = append(logged, fmt.Sprintf(format, args...))
			}

			deliver(t, c, url+"/webhooks/c", "c-1")
			w.waitArrived(1) // c-1 holds the only slot for the whole test
			deliver(t, c, url+"/webhooks/c", "c-2")
			retries := 0
			for try := 1; try <= tt.attempts; try++ {
				eventually(t, fmt.Sprintf("try %d turned away", try), func() bool { return inboundStats(s).Deferred == uint64(try) })
				if try < tt.attempts {
					eventually(t, "retry scheduled", func() bool { return inboundStats(s).Waiting == 1 })
					retries += timers.fire()
				}
			}
			eventually(t, "c-2 given up", func() bool { return inboundStats(s).GivenUp == 1 })
			st := inboundStats(s)
			if retries != tt.wantRetries || timers.fire() != 0 {
				t.Errorf("%d retries, want %d and none after giving up", retries, tt.wantRetries)
			}
			if !slices.Equal(st.GivenUpIDs, []string{"c-2"}) || st.Backlog != 1 || st.Processed != 0 {
				t.Errorf("given up %v, backlog %d, processed %d; want [c-2], 1 (c-1 still held), 0", st.GivenUpIDs, st.Backlog, st.Processed)
			}
			mu.Lock()
			if len(logged) != 1 || !strings.Contains(logged[0], "c-2") || !strings.Contains(logged[0], fmt.Sprintf("after %d attempts", tt.attempts)) {
				t.Errorf("logged %q, want one line naming c-2 after %d attempts", logged, tt.attempts)
			}
			mu.Unlock()
			rs := s.Snapshot().Resources()
			if got, _ := find(rs, "inbound:/webhooks/c"); got != (outcome.Resource{Name: "inbound:/webhooks/c", Capacity: DefaultInboundMaxBacklog, InUse: 1, Rejected: 1}) {
				t.Errorf("inbound resource %+v", got)
			}
			if got, _ := find(rs, "retry:/webhooks/c"); got != (outcome.Resource{Name: "retry:/webhooks/c", Rejected: uint64(tt.attempts)}) {
				t.Errorf("retry resource %+v", got)
			}
		})
	}
}

// TestInboundBacklogFull: past MaxBacklog the endpoint answers 503 backlog-full and keeps
// nothing, so the sender still holds the webhook.
func TestInboundBacklogFull(t *testing.T) {
	w := newFakeDep(t, true, http.StatusOK)
	s, url, c := testService(t, webhookConfig(w, InboundConfig{MaxBacklog: 1}), w)
	deliver(t, c, url+"/webhooks/c", "c-1")
	want := result{status: http.StatusServiceUnavailable, outcome: outcome.Rejected, pool: "inbound:/webhooks/c", reason: outcome.ReasonBacklogFull}
	if got, _ := deliver(t, c, url+"/webhooks/c", "c-2"); got != want {
		t.Errorf("over the backlog: %+v, want %+v", got, want)
	}
	if st := inboundStats(s); st.Accepted != 1 || st.Refused != 1 || st.Backlog != 1 {
		t.Errorf("accepted %d, refused %d, backlog %d; want 1, 1, 1", st.Accepted, st.Refused, st.Backlog)
	}
}

// TestInboundShutdownCountsPending: at shutdown a deferred item is not retried and an item in
// progress is cancelled; both are counted as pending at stop rather than silently lost, and no
// goroutine is left (testService checks).
func TestInboundShutdownCountsPending(t *testing.T) {
	w := newFakeDep(t, true, http.StatusOK)
	s, url, c := testService(t, webhookConfig(w, InboundConfig{}), w)
	timers := &fakeTimers{}
	s.afterFunc = timers.after
	deliver(t, c, url+"/webhooks/c", "c-1")
	w.waitArrived(1)
	deliver(t, c, url+"/webhooks/c", "c-2")
	eventually(t, "c-2 deferred", func() bool { return inboundStats(s).Waiting == 1 })
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	timers.fire() // a retry that fires after the stop does nothing
	st := inboundStats(s)
	if st.PendingAtStop != 2 || st.Backlog != 0 || st.Waiting != 0 || st.InProgress != 0 || st.Processed != 0 {
		t.Errorf("pending at stop %d, backlog %d, waiting %d, in progress %d, processed %d; want 2, 0, 0, 0, 0",
			st.PendingAtStop, st.Backlog, st.Waiting, st.InProgress, st.Processed)
	}
}

// TestInboundSharesLookupPool: webhooks processed in the pool the lookups use take its slots, so
// a burst of them turns lookups away ("that work goes into the same five slots
// everything else uses").
func TestInboundSharesLookupPool(t *testing.T) {
	a := newFakeDep(t, false, http.StatusOK)
	w := newFakeDep(t, true, http.StatusOK)
	cfg := Config{
		Mode:  ModeShared,
		Pools: []PoolConfig{{Name: "shared", Size: 2, Dependencies: []string{"A", "W"}}},
		Dependencies: []DependencyConfig{
			{Name: "A", URL: a.srv.URL},
			{Name: "W", URL: w.srv.URL},
		},
		Endpoints: []EndpointConfig{
			{Path: "/a", Calls: []string{"A"}},
			{Path: "/webhooks/c", Calls: []string{"W"}, Inbound: &InboundConfig{Pool: "shared"}},
		},
		ClientTimeout: time.Minute,
	}
	s, url, c := testService(t, cfg, a, w)
	s.afterFunc = (&fakeTimers{}).after
	if got := get(t, c, url+"/a"); got != ok {
		t.Fatalf("/a before the burst: %+v", got)
	}
	deliver(t, c, url+"/webhooks/c", "")
	deliver(t, c, url+"/webhooks/c", "")
	w.waitArrived(2) // both slots held by webhook processing
	want := result{status: http.StatusServiceUnavailable, outcome: outcome.Rejected, pool: "shared", reason: outcome.ReasonFull, depen: "A"}
	if got := get(t, c, url+"/a"); got != want {
		t.Errorf("/a during the burst: %+v, want %+v", got, want)
	}
	if ids := inboundStats(s); ids.Accepted != 2 {
		t.Errorf("accepted %d, want 2", ids.Accepted)
	}
}

// TestInboundConfigValidate: an inbound endpoint names a pool that exists; in split mode a pool
// that covers no dependency is accepted when an inbound endpoint processes under it.
func TestInboundConfigValidate(t *testing.T) {
	base := func() Config {
		return Config{
			Mode:          ModeSplit,
			Pools:         []PoolConfig{{Name: "A", Size: 1, Dependencies: []string{"A"}}, {Name: "webhooks", Size: 2}},
			Dependencies:  []DependencyConfig{{Name: "A", URL: "http://127.0.0.1:1"}},
			Endpoints:     []EndpointConfig{{Path: "/a", Calls: []string{"A"}}, {Path: "/w", Calls: []string{"A"}, Inbound: &InboundConfig{Pool: "webhooks"}}},
			ClientTimeout: time.Second,
		}
	}
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{name: "inbound-only pool", change: func(*Config) {}},
		{name: "unknown pool", change: func(c *Config) { c.Endpoints[1].Inbound.Pool = "nope" }, wantErr: `endpoints[1].inbound.pool: unknown pool "nope"`},
		{name: "pool covering nothing and used by nobody", change: func(c *Config) { c.Endpoints[1].Inbound.Pool = "A" }, wantErr: "pools[1].dependencies: a pool must cover at least one dependency"},
		{name: "negative attempts", change: func(c *Config) { c.Endpoints[1].Inbound.Attempts = -1 }, wantErr: "endpoints[1].inbound.attempts: must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := base()
			tt.change(&c)
			err := c.Validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Validate = %v, want an ErrInvalidConfig naming %q", err, tt.wantErr)
			}
		})
	}
}

// TestInboundRetryDelaySpread: retries are spread over [0.5, 1.5) x RetryDelay, differ between
// items deferred together, and are the same for the same item and attempt (no random source).
func TestInboundRetryDelaySpread(t *testing.T) {
	in := newInbound("/w", InboundConfig{RetryDelay: 200 * time.Millisecond}, nil, nil, time.Second, nil, nil)
	seen := map[time.Duration]bool{}
	for i := range 100 {
		it := item{id: fmt.Sprintf("c-%d", i), attempt: 3}
		d := in.retryDelay(it)
		if d < 100*time.Millisecond || d >= 300*time.Millisecond {
			t.Fatalf("delay of %s = %v, want in [100ms, 300ms)", it.id, d)
		}
		if in.retryDelay(it) != d {
			t.Fatalf("delay of %s not deterministic", it.id)
		}
		seen[d.Truncate(20*time.Millisecond)] = true
	}
	if len(seen) < 8 {
		t.Errorf("100 items' delays fall in %d of the 10 20ms-bins, want them spread", len(seen))
	}
}
