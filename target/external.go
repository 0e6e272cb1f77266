package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scrape"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// Files a command target writes into its configuration's run folder.
const (
	StdoutFile = "target.stdout.log"
	StderrFile = "target.stderr.log"
)

// DefaultReadyTimeout bounds a target's readiness check.
const DefaultReadyTimeout = 30 * time.Second

// External is a command or URL target: a system under test this process did not build. Its
// resources come from scraping its metrics endpoint (none without one).
type External struct {
	rec     Record
	proc    *supervise.Process // nil for a URL target
	scraper *scrape.Scraper    // nil without metrics

	mu       sync.Mutex
	failures int
	lastErr  error
}

var (
	_ Target    = (*External)(nil)
	_ Describer = (*External)(nil)
	_ Checker   = (*External)(nil)
)

// depAddrs turns spec's dependency URLs into the host:port {dep.NAME} stands for.
func depAddrs(spec Spec) map[string]string {
	out := map[string]string{}
	for name, u := range spec.Dependencies {
		_, hp, ok := strings.Cut(u, "://")
		if !ok {
			hp = u
		}
		out[name] = hp
	}
	return out
}

func who(spec Spec) string { return "configuration " + spec.Name + ": target" }

// pickPort returns addr's port, or a free loopback port (listened on and released) when addr is
// "" or has port 0, other than the ports already taken.
func pickPort(addr string, taken map[string]string) (string, error) {
	if addr != "" {
		if _, p, err := net.SplitHostPort(addr); err == nil && p != "0" {
			return p, nil
		}
	}
	for range 10 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("pick a free port: %w", err)
		}
		p := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
		l.Close()
		if !slices.Contains(slices.Collect(maps.Values(taken)), p) {
			return p, nil
		}
	}
	return "", fmt.Errorf("pick a free port: the system gave taken ports ten times")
}

func mapsKeys[V any](m map[string]V) iter.Seq[string] { return maps.Keys(m) }

// waitListening waits until base's host and port accept a connection or proc exits.
func waitListening(ctx context.Context, proc *supervise.Process, base string) error {
	hp, err := hostPort(base)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(DefaultReadyTimeout)
	for {
		c, err := net.DialTimeout("tcp", hp, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if perr := proc.Err(); perr != nil {
			return perr
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s: %v", hp, DefaultReadyTimeout, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("nothing listens on %s: %w", hp, context.Cause(ctx))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// hostPort returns the host:port a base URL dials ("http://10.0.0.3" is 10.0.0.3:80).
func hostPort(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("target url %q: %w", base, err)
	}
	if u.Port() != "" {
		return u.Host, nil
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// answers polls u until it answers (2xx when need2xx), for up to limit.
func answers(ctx context.Context, u string, need2xx bool, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	var last error
	for {
		rctx, rcancel := context.WithTimeout(ctx, time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, u, nil)
		if err != nil {
			rcancel()
			return err
		}
		resp, err := client.Do(req)
		rcancel()
		if err == nil {
			resp.Body.Close()
			if !need2xx || resp.StatusCode/100 == 2 {
				return nil
			}
			last = fmt.Errorf("status %d", resp.StatusCode)
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			return last
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// URL returns the target's base URL.
func (e *External) URL() string { return e.rec.URL }

// Resources scrapes the metrics endpoint once (bounded by the scrape timeout) and returns its
// resources; nil without metrics or when the scrape fails (the failure is kept for Problems).
func (e *External) Resources() []outcome.Resource {
	if e.scraper == nil {
		return nil
	}
	rs, err := e.scraper.Resources(context.Background())
	if err != nil {
		e.mu.Lock()
		e.failures++
		e.lastErr = err
		e.mu.Unlock()
		return nil
	}
	return rs
}

// Problems says what went wrong while running: scrapes that failed (how many, the last error)
// and a command that exited on its own.
func (e *External) Problems() []string {
	var out []string
	e.mu.Lock()
	if e.failures > 0 {
		out = append(out, fmt.Sprintf("%d scrape(s) of %s failed; last: %v", e.failures, e.rec.Metrics, e.lastErr))
	}
	e.mu.Unlock()
	if e.proc != nil {
		if err := e.proc.Err(); err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}

// Close stops the command (SIGTERM to its group, then SIGKILL); a URL target has nothing to
// stop. A command that had exited on its own is not an error here (Problems reports it).
func (e *External) Close(context.Context) error {
	if e.proc == nil {
		return nil
	}
	err := e.proc.Stop()
	var ee *supervise.ExitError
	if errors.As(err, &ee) && strings.Contains(ee.Reason, "while running") {
		return nil
	}
	return err
}

// Describe returns the Record: kind, command or URL as run, metrics, outcome mapping.
func (e *External) Describe() (json.RawMessage, error) { return json.Marshal(e.rec) }

// Record returns what the manifest records of the target.
func (e *External) Record() Record { return e.rec }

// Exited returns a channel closed when a command target's process has exited (never closed for
// a URL target).
func (e *External) Exited() <-chan struct{} {
	if e.proc == nil {
		return make(chan struct{})
	}
	return e.proc.Exited()
}

// reach finishes the record of a target that runs already (a url: or an image: one): it adds
// where its resources are scraped to the description, waits up to DefaultReadyTimeout for its
// ready URL to answer 2xx (or its URL to answer at all, without one) and prepares the scraper of
// its metrics URL with cfg. It returns the target, or an error naming spec's target.
func reach(ctx context.Context, spec Spec, rec Record, cfg scrape.Config) (Target, error) {
	if rec.Metrics != "" {
		rec.Description += ", resources scraped from " + rec.Metrics
	}
	check, need2xx := rec.Ready, true
	if check == "" {
		check, need2xx = rec.URL+"/", false
	}
	if err := answers(ctx, check, need2xx, DefaultReadyTimeout); err != nil {
		return nil, fmt.Errorf("%s: %s does not answer: %w", who(spec), check, err)
	}
	e := &External{rec: rec}
	if rec.Metrics != "" {
		var err error
		if e.scraper, err = scrape.New(rec.Metrics, cfg, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", who(spec), err)
		}
	}
	return e, nil
}
