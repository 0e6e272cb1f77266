package experiment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/dependency"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/service"
)

// DefaultResultsRoot is where run folders go unless told otherwise.
const DefaultResultsRoot = "results"

// ErrInterrupted is returned (wrapped) when the run was stopped before its time line ended. The
// run folder is still complete and marked partial.
var ErrInterrupted = errors.New("run interrupted")

// Options tunes a run. The zero value runs with the embedded Toxiproxy into DefaultResultsRoot
// and prints nothing.
type Options struct {
	// ResultsRoot is the folder the run folder is created in. "" means DefaultResultsRoot.
	ResultsRoot string
	// Toxiproxy is the API URL of an external toxiproxy-server. "" means embedded in-process.
	Toxiproxy string
	// Progress receives progress lines; nil means none.
	Progress io.Writer
	// Live rewrites one progress line in place (for a terminal) instead of printing lines.
	Live bool
	// ProgressEvery is the period of progress lines. 0 means 1s.
	ProgressEvery time.Duration
	// Command is how the run was started, recorded so it can be reproduced.
	Command string
	// Version is this tool's version, recorded in every manifest.
	Version string
	// LagLimit is the send-lag p99 above which a configuration's run is invalid. 0 means the
	// scenario's load.lag_limit, else loadgen.DefaultLagLimit (1 ms). It is recorded in every
	// manifest.
	LagLimit time.Duration
	// Loadgen adds load generator options (tests use small timeouts).
	Loadgen []loadgen.Opt
}

// Result says where a run went and how it ended.
type Result struct {
	Dir     string
	RunID   string
	Partial bool
	Valid   bool     // every configuration's load generator passed its self-check
	Invalid []string // why not, per configuration
}

// Run executes every configuration of sc, repetitions times each, one after the other, and
// writes a new run folder under opts.ResultsRoot. It blocks until the last configuration's files
// are closed. When ctx is cancelled it stops the load, removes the faults, closes every file and
// server, marks the run partial and returns the result with an error wrapping ErrInterrupted.
// Errors before any configuration started (an unreachable external Toxiproxy, a folder that
// cannot be created) leave no run folder behind.
func Run(ctx context.Context, sc *scenarios.Scenario, opts Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	root := opts.ResultsRoot
	if root == "" {
		root = DefaultResultsRoot
	}
	// Check the external Toxiproxy before creating anything on disk.
	if opts.Toxiproxy != "" {
		inj, err := proxy.NewExternal(ctx, opts.Toxiproxy)
		if err != nil {
			return nil, err
		}
		inj.Close(context.Background())
	}
	dir, id, err := rundir.Create(root, sc.Name, time.Now())
	if err != nil {
		return nil, err
	}
	if err := copyScenario(sc, filepath.Join(dir, rundir.ScenarioFile)); err != nil {
		return nil, err
	}
	if len(sc.Claims) > 0 {
		if err := rundir.WriteJSON(filepath.Join(dir, rundir.ClaimsFile), sc.Claims); err != nil {
			return nil, err
		}
	}
	run := rundir.Run{
		Scenario:    sc.Name,
		RunID:       id,
		Description: sc.Description,
		Started:     time.Now(),
		Command:     opts.Command,
	}
	res := &Result{Dir: dir, RunID: id, Valid: true}
	reps := max(sc.Repetitions, 1)
	var runErr error
loop:
	for rep := 1; rep <= reps; rep++ {
		for _, conf := range sc.Configurations {
			name := conf.Name
			if reps > 1 {
				name = fmt.Sprintf("%s-r%d", conf.Name, rep)
			}
			if ctx.Err() != nil {
				break loop
			}
			m, err := runConfiguration(ctx, sc, conf, rep, filepath.Join(dir, name), opts)
			if m != nil {
				run.Configurations = append(run.Configurations, name)
				if !m.Valid {
					res.Valid = false
					for _, r := range m.Invalid {
						res.Invalid = append(res.Invalid, name+": "+r)
					}
				}
				if m.Partial {
					res.Partial = true
				}
			}
			if err != nil {
				runErr = fmt.Errorf("configuration %s: %w", name, err)
				break loop
			}
		}
	}
	if ctx.Err() != nil {
		res.Partial = true
		if runErr == nil {
			runErr = fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
		}
	}
	run.Partial = res.Partial
	run.Ended = time.Now()
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
		return res, errors.Join(runErr, err)
	}
	return res, runErr
}

func copyScenario(sc *scenarios.Scenario, dst string) error {
	var data []byte
	var err error
	if strings.HasPrefix(sc.Path, "builtin:") {
		data, err = scenarios.Source(strings.TrimPrefix(sc.Path, "builtin:"))
	} else {
		data, err = os.ReadFile(sc.Path)
	}
	if err != nil {
		return fmt.Errorf("copy scenario %s: %w", sc.Path, err)
	}
	return rundir.WriteFile(dst, data)
}

// bench is everything one configuration run starts, so it can be stopped in one place.
type bench struct {
	deps     map[string]*dependency.Server
	injector proxy.Injector
	proxies  map[string]string // dependency -> proxy name
	svc      *service.Service
	svcURL   string
}

func (b *bench) close() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.svc != nil {
		errs = append(errs, b.svc.Shutdown(ctx))
	}
	if b.injector != nil {
		errs = append(errs, b.injector.Close(ctx))
	}
	for _, d := range b.deps {
		d.Close()
	}
	return errors.Join(errs...)
}

func startBench(ctx context.Context, sc *scenarios.Scenario, conf scenarios.Configuration, rep int, opts Options) (_ *bench, cfg service.Config, err error) {
	b := &bench{deps: map[string]*dependency.Server{}, proxies: map[string]string{}}
	// On failure stop whatever was started; the returns below nil the result, not b.
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	if opts.Toxiproxy != "" {
		x, err := proxy.NewExternal(ctx, opts.Toxiproxy)
		if err != nil {
			return nil, cfg, err
		}
		b.injector = x // only a real one: a typed nil would make b.injector != nil
	} else {
		b.injector = proxy.NewEmbedded()
	}
	urls := map[string]string{}
	for i, d := range sc.Dependencies {
		srv := dependency.New(dependency.Config{
			Name: d.Name, Latency: d.Latency, Jitter: d.Jitter,
			Seed: sc.Seed + int64(rep)*1000 + int64(i),
		})
		u, err := srv.Start("")
		if err != nil {
			return nil, cfg, fmt.Errorf("start dependency %s: %w", d.Name, err)
		}
		b.deps[d.Name] = srv
		host, err := hostPort(u)
		if err != nil {
			return nil, cfg, err
		}
		// Proxy names are unique per run so an external Toxiproxy shared by several runs does not mix them.
		pname := fmt.Sprintf("bulkhead-%s-%s-%d", conf.Name, d.Name, os.Getpid())
		listen, err := b.injector.AddProxy(ctx, pname, host)
		if err != nil {
			return nil, cfg, fmt.Errorf("proxy for dependency %s: %w", d.Name, err)
		}
		b.proxies[d.Name] = pname
		urls[d.Name] = "http://" + listen
	}
	cfg, err = sc.ServiceConfig(conf, urls)
	if err != nil {
		return nil, cfg, err
	}
	b.svc, err = service.New(cfg)
	if err != nil {
		return nil, cfg, err
	}
	b.svcURL, err = b.svc.Start("")
	if err != nil {
		return nil, cfg, fmt.Errorf("start service: %w", err)
	}
	return b, cfg, nil
}

func hostPort(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	if _, _, err := net.SplitHostPort(pu.Host); err != nil {
		return "", fmt.Errorf("dependency url %s: %w", u, err)
	}
	return pu.Host, nil
}

// runConfiguration runs one configuration's time line into dir. It returns the manifest it wrote
// (nil if nothing was started).
func runConfiguration(ctx context.Context, sc *scenarios.Scenario, conf scenarios.Configuration, rep int, dir string, opts Options) (*rundir.Manifest, error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.Mkdir(filepath.Join(dir, rundir.RawDir), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	b, cfg, err := startBench(ctx, sc, conf, rep, opts)
	if err != nil {
		return nil, err
	}
	defer b.close()

	topo := cfg.Topology()
	m := &rundir.Manifest{
		Scenario:      sc.Name,
		Configuration: conf.Name,
		Repetition:    rep,
		Seed:          sc.Seed,
		Versions:      versions(opts.Version, b.injector.Version()),
		Host:          hostname(),
		ClientTimeout: sc.Timeout,
		Topology:      &topo,
		Toxiproxy:     "embedded",
		Valid:         true,
	}
	if m.Service, err = json.Marshal(cfg); err != nil {
		return nil, fmt.Errorf("configuration %s: record the service config: %w", conf.Name, err)
	}
	if opts.Toxiproxy != "" {
		m.Toxiproxy = opts.Toxiproxy
	}
	if len(sc.Resolved) > 0 {
		m.Resolved = map[string]any{}
		for k, v := range sc.Resolved {
			m.Resolved[k] = v
		}
	}

	// One raw file per endpoint, streamed.
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	var attacks []loadgen.Attack
	for i, ep := range sc.Endpoints {
		name := rundir.RawFileName(ep.Path)
		f, err := os.OpenFile(filepath.Join(dir, rundir.RawDir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		rate := ep.Rate
		if rate == 0 {
			rate = sc.Load.Rate
		}
		arr, err := loadgen.ParseArrivals(sc.Load.Arrivals)
		if err != nil {
			return nil, err
		}
		var pacer loadgen.Pacer
		arrivals := string(arr)
		if segs, ok := sc.RateSegments(ep); ok {
			// Some phase overrides this endpoint's rate (a burst, a silence): one constant-rate
			// attack across the time line still, its rate changing at the phase offsets.
			pacer, err = loadgen.NewPiecewisePacer(segs)
			arrivals = piecewiseArrivals(segs)
		} else {
			pacer, err = loadgen.NewPacer(rate, arr, sc.Seed+int64(rep)*1000+int64(100+i))
		}
		if err != nil {
			return nil, fmt.Errorf("endpoint %s: %w", ep.Path, err)
		}
		if off := staggerOffset(i, len(sc.Endpoints), rate); off > 0 && arr == loadgen.ArrivalsConstant {
			pacer = staggered{Pacer: pacer, lead: off}
		}
		attacks = append(attacks, loadgen.Attack{Name: ep.Path, URL: b.svcURL + ep.Path, Pacer: pacer, Out: f})
		m.Endpoints = append(m.Endpoints, rundir.Endpoint{
			Path: ep.Path, RawFile: filepath.Join(rundir.RawDir, name), Rate: rate,
			Arrivals: arrivals, Timeout: sc.Load.Timeout,
		})
	}
	resF, err := os.OpenFile(filepath.Join(dir, rundir.ResourcesFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	files = append(files, resF)
	resW, err := rundir.NewResourceWriter(resF)
	if err != nil {
		return nil, err
	}

	// The time line.
	var off time.Duration
	for _, p := range sc.Phases {
		ph := rundir.Phase{Name: p.Name, Start: off, End: off + p.Duration}
		for _, f := range p.Faults {
			f.AppliedAt, f.RemovedAt = -1, -1
			ph.Faults = append(ph.Faults, f)
		}
		m.Phases = append(m.Phases, ph)
		off += p.Duration
	}
	total := off

	m.LagLimit = opts.LagLimit
	if m.LagLimit <= 0 {
		m.LagLimit = sc.Load.LagLimit
	}
	if m.LagLimit <= 0 {
		m.LagLimit = loadgen.DefaultLagLimit
	}
	lopts := append([]loadgen.Opt{loadgen.WithTimeout(sc.Load.Timeout), loadgen.WithLagLimit(m.LagLimit)}, opts.Loadgen...)
	m.Started = time.Now()
	lr, err := loadgen.Start(ctx, attacks, total, lopts...)
	if err != nil {
		return nil, err
	}
	t0 := lr.T0()
	m.Started = t0

	var wg sync.WaitGroup
	stop := make(chan struct{})
	// Faults switch at phase offsets.
	var faultErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		faultErr = schedule(ctx, stop, t0, b, m.Phases)
	}()
	// Resources are sampled every SampleEvery.
	var sampleErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		sampleErr = sample(stop, t0, sc.SampleEvery, b.svc, resW)
	}()
	// Progress lines.
	if opts.Progress != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			progress(stop, opts, t0, total, conf.Name, m.Phases, sc.Endpoints, lr)
		}()
	}
	// First Ctrl-C: stop the load; the loadgen then drains and closes.
	go func() {
		select {
		case <-ctx.Done():
			lr.Stop()
		case <-stop:
		}
	}()
	checks, lerr := lr.Wait()
	close(stop)
	wg.Wait()
	m.Ended = time.Now()
	if ctx.Err() != nil || m.Ended.Sub(t0) < total {
		m.Partial = ctx.Err() != nil
	}
	for i, c := range checks {
		if i < len(m.Endpoints) {
			e := &m.Endpoints[i]
			e.Scheduled, e.Sent, e.Dropped = c.Scheduled, c.Sent, c.Dropped
			e.LagP50, e.LagP99, e.LagMax, e.StartSkew = c.LagP50, c.LagP99, c.LagMax, c.StartSkew
		}
		if !c.Valid {
			m.Valid = false
			for _, r := range c.Reasons {
				m.Invalid = append(m.Invalid, c.Name+": "+r)
			}
		}
	}
	if pooled := lr.Pooled(); !pooled.Valid {
		m.Valid = false
		m.Invalid = append(m.Invalid, pooled.Reasons...)
	}
	if m.Partial {
		m.Valid = false
		m.Invalid = append(m.Invalid, "interrupted before the end of the time line")
	}
	var errs []error
	errs = append(errs, lerr, faultErr, sampleErr, resW.Flush())
	for _, f := range files {
		errs = append(errs, f.Sync(), f.Close())
	}
	files = nil
	if err := errors.Join(errs...); err != nil && !errors.Is(err, os.ErrClosed) {
		m.Valid = false
		m.Invalid = append(m.Invalid, "error while running: "+err.Error())
	}
	if opts.Progress != nil {
		if opts.Live {
			fmt.Fprintln(opts.Progress)
		}
		for _, c := range checks {
			fmt.Fprintf(opts.Progress, "  %s %s: sent %d of %d scheduled, dropped %d, send lag p99 %s\n",
				conf.Name, c.Name, c.Sent, c.Scheduled, c.Dropped, c.LagP99.Round(time.Microsecond))
		}
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.ManifestFile), m); err != nil {
		return m, err
	}
	if ctx.Err() != nil {
		return m, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
	}
	return m, nil
}

// schedule applies each phase's faults at its start offset and clears them at its end, recording
// the measured switch times in phases. It returns when the time line ends or stop/ctx is closed,
// always leaving every proxy clear and every dependency healthy.
func schedule(ctx context.Context, stop <-chan struct{}, t0 time.Time, b *bench, phases []rundir.Phase) error {
	var errs []error
	clearAll := func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for dep, p := range b.proxies {
			if err := b.injector.Clear(cctx, p); err != nil {
				errs = append(errs, err)
			}
			b.deps[dep].SetFailing(0)
		}
	}
	defer clearAll()
	wait := func(at time.Duration) bool {
		d := time.Until(t0.Add(at))
		if d <= 0 {
			return true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-stop:
			return false
		case <-ctx.Done():
			return false
		}
	}
	for pi := range phases {
		ph := &phases[pi]
		if len(ph.Faults) == 0 {
			continue
		}
		if !wait(ph.Start) {
			return errors.Join(errs...)
		}
		for fi := range ph.Faults {
			f := &ph.Faults[fi]
			if err := applyFault(ctx, b, *f); err != nil {
				errs = append(errs, fmt.Errorf("phase %s: apply %s on %s: %w", ph.Name, f.Type, f.Dependency, err))
			}
			f.AppliedAt = time.Since(t0)
		}
		if !wait(ph.End) {
			for fi := range ph.Faults {
				ph.Faults[fi].RemovedAt = time.Since(t0)
			}
			return errors.Join(errs...)
		}
		// The next phase may apply its own faults at once; clearing first keeps phases independent.
		clearAll()
		for fi := range ph.Faults {
			ph.Faults[fi].RemovedAt = time.Since(t0)
		}
	}
	return errors.Join(errs...)
}

// applyFault installs f's effect: on the dependency's proxy, and an error status on the
// dependency itself (clearAll undoes both).
func applyFault(ctx context.Context, b *bench, f faults.Fault) error {
	e := f.Effect()
	if e.Status != 0 {
		b.deps[f.Dependency].SetFailing(e.Status)
	}
	return b.injector.Apply(ctx, b.proxies[f.Dependency], e)
}

// sample writes the service's resources every period until stop is closed.
func sample(stop <-chan struct{}, t0 time.Time, period time.Duration, svc *service.Service, w *rundir.ResourceWriter) error {
	if period <= 0 {
		period = 100 * time.Millisecond
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	write := func() error {
		snap := svc.Snapshot()
		return w.Write(time.Since(t0), snap.Resources())
	}
	if err := write(); err != nil {
		return err
	}
	for {
		select {
		case <-tick.C:
			if err := write(); err != nil {
				return err
			}
		case <-stop:
			return write()
		}
	}
}

func progress(stop <-chan struct{}, opts Options, t0 time.Time, total time.Duration, conf string, phases []rundir.Phase, eps []scenarios.Endpoint, lr *loadgen.Run) {
	every := opts.ProgressEvery
	if every <= 0 {
		every = time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		el := time.Since(t0)
		phase := ""
		for _, p := range phases {
			if el >= p.Start && el < p.End {
				phase = p.Name
			}
		}
		var sb strings.Builder
		fmt.Fprintf(&sb, "%-8s %-10s %5.1fs/%.0fs", conf, phase, el.Seconds(), total.Seconds())
		ps := lr.Progress()
		for i, p := range ps {
			if len(ps) > progressAll && i == progressMax {
				fmt.Fprintf(&sb, " | %d more", len(ps)-i)
				break
			}
			fmt.Fprintf(&sb, " | %s %d req, err %3.0f%%, p99 %s", p.Name, p.Sent, 100*p.ErrorRate, fmtMS(p.P99))
		}
		if opts.Live {
			fmt.Fprintf(opts.Progress, "\r\033[K%s", sb.String())
		} else {
			fmt.Fprintln(opts.Progress, sb.String())
		}
	}
}

// piecewiseArrivals records a per-phase schedule in the manifest's arrivals field, e.g.
// "constant, per phase: 0s 20/s, 5s 200/s, 8s 20/s" (the manifest's rate is the endpoint's
// normal rate).
func piecewiseArrivals(segs []loadgen.Segment) string {
	parts := make([]string, len(segs))
	for i, g := range segs {
		parts[i] = fmt.Sprintf("%v %g/s", g.Start, g.Rate)
	}
	return loadgen.ArrivalsConstant.String() + ", per phase: " + strings.Join(parts, ", ")
}

func fmtMS(d time.Duration) string {
	return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
}

func versions(tool, toxi string) rundir.Versions {
	v := rundir.Versions{Bulkhead: tool, Go: runtime.Version(), Toxiproxy: toxi, Vegeta: "v12.13.0"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/tsenart/vegeta/v12" {
				v.Vegeta = d.Version
			}
		}
		if v.Bulkhead == "" {
			v.Bulkhead = bi.Main.Version
		}
	}
	if v.Bulkhead == "" || v.Bulkhead == "(devel)" {
		v.Bulkhead = "dev"
	}
	return v
}

func hostname() string {
	h, _ := os.Hostname()
	return fmt.Sprintf("%s (%s/%s, %d cpu)", h, runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
}
