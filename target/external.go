package target

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scenarios"
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

// For returns the Starter of a configuration: BuiltIn without a target, Command or URL with one.
func For(c scenarios.Configuration) Starter {
	switch c.Target.Kind() {
	case scenarios.TargetCommand:
		return Command{}
	case scenarios.TargetURL:
		return URL{}
	}
	return BuiltIn{}
}

// Record is what the manifest records of an external target: its kind, the command or URL as
// run (placeholders filled), the metrics address and the outcome mapping.
type Record struct {
	Kind     string            `json:"kind"`
	Command  []string          `json:"command,omitempty"`
	Dir      string            `json:"dir,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	URL      string            `json:"url"`
	Ready    string            `json:"ready,omitempty"`
	Metrics  string            `json:"metrics,omitempty"`
	Outcomes outcome.Mapping   `json:"outcomes"`
	Pid      int               `json:"pid,omitempty"`
}

// Command starts the configuration's target.command under the process supervisor.
type Command struct{}

// URL checks the configuration's target.url answers and uses it as it is.
type URL struct{}

var (
	_ Starter = Command{}
	_ Starter = URL{}
)

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

// Checker is implemented by targets that can fail on their own while the load runs (a child
// that exits, a metrics endpoint that stops answering); the runner records Problems in the
// manifest at the end of the run.
type Checker interface {
	Problems() []string
}

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

func who(spec Spec) string { return "configuration " + spec.Configuration.Name + ": target" }

// Start fills the placeholders of the configuration's target.command, env, url, ready and
// metrics ({port}: a port free on this host's loopback, or spec.Addr's), starts the command in
// target.dir (relative to the scenario file) with its output in spec.Folder, and blocks until
// ready answers 2xx (or, with no ready, until the target's address accepts connections: url's
// host and port, http://127.0.0.1:{port} without url), the command exits, DefaultReadyTimeout
// passes or ctx ends. On error the process is stopped and the error names the configuration, the
// command and the address.
func (Command) Start(ctx context.Context, spec Spec) (Target, error) {
	t := spec.Configuration.Target
	if t == nil || len(t.Command) == 0 {
		return nil, fmt.Errorf("%s: no command", who(spec))
	}
	port, err := pickPort(spec.Addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", who(spec), err)
	}
	deps := depAddrs(spec)
	exp := func(field, s string) (string, error) {
		v, err := scenarios.Expand(s, port, deps)
		if err != nil {
			return "", fmt.Errorf("%s.%s: %w", who(spec), field, err)
		}
		return v, nil
	}
	rec := Record{Kind: scenarios.TargetCommand, Outcomes: t.Outcomes, Env: map[string]string{}}
	for i, a := range t.Command {
		v, err := exp(fmt.Sprintf("command[%d]", i), a)
		if err != nil {
			return nil, err
		}
		rec.Command = append(rec.Command, v)
	}
	var env []string
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, err := exp("env."+k, t.Env[k])
		if err != nil {
			return nil, err
		}
		rec.Env[k] = v
		env = append(env, k+"="+v)
	}
	if rec.Ready, err = exp("ready", t.Ready); err != nil {
		return nil, err
	}
	if rec.Metrics, err = exp("metrics", t.Metrics); err != nil {
		return nil, err
	}
	rec.URL = "http://127.0.0.1:" + port
	if t.URL != "" {
		if rec.URL, err = exp("url", t.URL); err != nil {
			return nil, err
		}
		rec.URL = strings.TrimSuffix(rec.URL, "/")
	}
	rec.Dir = commandDir(spec.Scenario, t.Dir)
	s := supervise.Spec{Name: who(spec), Argv: rec.Command, Env: env, Dir: rec.Dir, Ready: rec.Ready, ReadyTimeout: DefaultReadyTimeout}
	if spec.Folder != "" {
		s.Stdout, s.Stderr = filepath.Join(spec.Folder, StdoutFile), filepath.Join(spec.Folder, StderrFile)
	}
	proc, err := supervise.Start(ctx, s)
	if err != nil {
		return nil, err
	}
	e := &External{rec: rec, proc: proc}
	e.rec.Pid = proc.Pid()
	if t.Ready == "" {
		if err := waitListening(ctx, proc, rec.URL); err != nil {
			proc.Stop()
			return nil, fmt.Errorf("%s %q: %w", who(spec), strings.Join(rec.Command, " "), err)
		}
	}
	if rec.Metrics != "" {
		if e.scraper, err = scrape.New(rec.Metrics, t.Scrape, nil); err != nil {
			proc.Stop()
			return nil, fmt.Errorf("%s: %w", who(spec), err)
		}
	}
	return e, nil
}

// Start fills the placeholders ({dep.NAME}) of the configuration's target.url, ready and
// metrics and checks the service answers: ready with 2xx, or (no ready) the URL with any HTTP
// answer, within DefaultReadyTimeout or ctx. The error names the configuration and the address.
func (URL) Start(ctx context.Context, spec Spec) (Target, error) {
	t := spec.Configuration.Target
	if t == nil || t.URL == "" {
		return nil, fmt.Errorf("%s: no url", who(spec))
	}
	deps := depAddrs(spec)
	rec := Record{Kind: scenarios.TargetURL, Outcomes: t.Outcomes}
	var err error
	for _, f := range []struct {
		name     string
		src      string
		dst      *string
		optional bool
	}{{"url", t.URL, &rec.URL, false}, {"ready", t.Ready, &rec.Ready, true}, {"metrics", t.Metrics, &rec.Metrics, true}} {
		if *f.dst, err = scenarios.Expand(f.src, "", deps); err != nil {
			return nil, fmt.Errorf("%s.%s: %w", who(spec), f.name, err)
		}
	}
	rec.URL = strings.TrimSuffix(rec.URL, "/")
	check, need2xx := rec.Ready, true
	if check == "" {
		check, need2xx = rec.URL+"/", false
	}
	if err := answers(ctx, check, need2xx, DefaultReadyTimeout); err != nil {
		return nil, fmt.Errorf("%s: %s does not answer: %w", who(spec), check, err)
	}
	e := &External{rec: rec}
	if rec.Metrics != "" {
		if e.scraper, err = scrape.New(rec.Metrics, t.Scrape, nil); err != nil {
			return nil, fmt.Errorf("%s: %w", who(spec), err)
		}
	}
	return e, nil
}

// commandDir is dir relative to the scenario file's folder ("" means that folder; a built-in
// scenario's is the current directory).
func commandDir(sc *scenarios.Scenario, dir string) string {
	if filepath.IsAbs(dir) {
		return dir
	}
	base := "."
	if sc != nil && sc.Path != "" && !strings.HasPrefix(sc.Path, "builtin:") {
		base = filepath.Dir(sc.Path)
	}
	return filepath.Join(base, dir)
}

// pickPort returns addr's port, or a free loopback port (listened on and released) when addr is
// "" or has port 0.
func pickPort(addr string) (string, error) {
	if addr != "" {
		if _, p, err := net.SplitHostPort(addr); err == nil && p != "0" {
			return p, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("pick a free port: %w", err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), nil
}

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
