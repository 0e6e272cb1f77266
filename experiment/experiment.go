package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// DefaultResultsRoot is where run folders go unless told otherwise.
const DefaultResultsRoot = "results"

// StartErrorFile is written into a configuration's folder when its dependencies, proxies,
// target or load could not be started, or the run was interrupted meanwhile (rundir's).
const StartErrorFile = rundir.StartErrorFile

// ErrInterrupted is returned (wrapped) when the run was stopped before its time line ended. The
// run folder is still complete and marked partial.
var ErrInterrupted = errors.New("run interrupted")

// Options tunes a run. The zero value runs with the embedded Toxiproxy and the built-in service
// into DefaultResultsRoot, as many configurations at once as DefaultParallel allows, and prints
// nothing.
type Options struct {
	// ResultsRoot is the folder the run folder is created in. "" means DefaultResultsRoot.
	ResultsRoot string
	// Toxiproxy is the API URL of an external toxiproxy-server. "" means embedded in-process.
	Toxiproxy string
	// Target starts the system under test for each configuration run. nil means target.BuiltIn.
	Target target.Starter
	// Parallel is how many configuration runs (configurations x repetitions) run at once, each
	// with its own service, Toxiproxy and load. 0 means DefaultParallel; 1 runs them one after
	// another. It is recorded in run.json and every manifest.
	Parallel int
	// Progress receives progress lines; nil means none.
	Progress io.Writer
	// Live rewrites the progress lines in place (for a terminal) instead of printing lines.
	Live bool
	// ProgressEvery is the period of progress lines. 0 means 1s live, 10s as plain lines.
	ProgressEvery time.Duration
	// Command is how the run was started, recorded so it can be reproduced.
	Command string
	// Overrides are the command line's changes already applied to the scenario (see
	// scenarios.Overrides), recorded in run.json; nil when there were none.
	Overrides any
	// Version is this tool's version, recorded in every manifest.
	Version string
	// LagLimit is the send-lag p99 above which a configuration's run is invalid. 0 means the
	// scenario's load.lag_limit, else loadgen.DefaultLagLimit (1 ms). It is recorded in every
	// manifest.
	LagLimit time.Duration
	// Loadgen adds load generator options (tests use small timeouts). In the LoadProcess layout
	// they are passed on as values (loadgen.Resolve); a classifier among them is not.
	Loadgen []loadgen.Opt
	// Load is where each configuration's load generator runs: LoadInProcess, or LoadProcess (a
	// child process `<Executable> attack <spec>`, so the program must have that command, as
	// bulkhead does). "" means LoadInProcess, so that any program can embed a run; the bulkhead
	// CLI chooses LoadProcess by default. It is recorded in run.json and every manifest.
	Load string
	// Executable is the program started as `<Executable> attack <spec>` in the LoadProcess
	// layout. "" means this process's own executable (os.Executable).
	Executable string
	// Shards, above 1, sends each configuration's load from that many child processes in the
	// LoadProcess layout (`attack --segment k/N`), from a common start; their raw files are
	// merged into the endpoint's and each is listed in the manifest (rundir.Endpoint.Shards).
	// 0 or 1 means one load generator.
	Shards int
	// Engine is where each configuration run's parts run (nil: Local, this machine). Its name is
	// recorded in every manifest.
	Engine Engine

	runID string // set by Run: names the run's proxies
}

// Result says where a run went and how it ended.
type Result struct {
	Dir      string
	RunID    string
	Partial  bool
	Valid    bool     // every configuration's load generator passed its self-check
	Invalid  []string // why not, per configuration
	Parallel int      // how many configuration runs ran at once
	Load     string   // where the load generators ran: LoadInProcess or LoadProcess
	// Behind lists the configuration runs whose load generator fell behind its schedule (an
	// endpoint's send lag p99 over the limit, or sends dropped), from their manifests: the runs
	// whose invalidity the machine's CPU explains, unlike an interruption's.
	Behind []string
	// Steal is the largest share of one CPU the hypervisor took while a load ran (the manifests'
	// load.machine_steal), -1 where none was measured.
	Steal float64
}

// Run plans every repetition of every configuration of sc, then executes the plans, up to
// opts.Parallel at once, into a new run folder under opts.ResultsRoot. It blocks until the last
// configuration's files are closed. When ctx is cancelled every running configuration stops its
// load, removes its faults and closes its files and servers; configurations not yet started are
// not started; the run is marked partial and Run returns the result with an error wrapping
// ErrInterrupted. When a configuration fails to start, no further one is started and Run returns
// that error with the result. Errors before any configuration started (a plan that does not
// work, an unreachable external Toxiproxy, a folder that cannot be created) leave no run folder.
func Run(ctx context.Context, sc *scenarios.Scenario, opts Options) (*Result, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	plans, err := Plans(sc, opts.LagLimit)
	if err != nil {
		return nil, err
	}
	if opts.Load, err = ParseLoad(opts.Load); err != nil {
		return nil, err
	}
	if err := checkToxiproxy(ctx, opts.Toxiproxy, opts.Progress); err != nil {
		return nil, err
	}
	n, err := Parallel(sc, plans, opts.Parallel, runtime.NumCPU(), opts.Load)
	if err != nil {
		return nil, err
	}
	dir, id, ran, err := createRunFolder(sc, opts)
	if err != nil {
		return nil, err
	}
	if ran != sc {
		runFrom(plans, ran) // targets start from the run folder's copies of their files
		sc = ran
	}
	// Held until Run returns, and by the kernel until this process ends however it ends: a
	// reader tells a run in progress from one cut off by it (rundir.InProgress).
	lock, err := rundir.LockRun(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	inputs, err := rundir.RecordInputs(dir)
	if err != nil {
		return nil, err
	}
	opts.runID = id
	gcPercent := gcPercentFor(plans, os.Getenv)
	defer setGCPercent(gcPercent)()
	if opts.Load == "" {
		opts.Load = LoadInProcess
	}
	if e := engineOf(opts); e.Name() != LocalEngine {
		opts.Load = e.Name() // where the load ran, in run.json
	}
	run := rundir.Run{
		Scenario: sc.Name, RunID: id, Description: sc.Description, Started: time.Now(),
		Command: opts.Command, Overrides: opts.Overrides, Parallel: n, GCPercent: gcPercent,
		Load: opts.Load, State: rundir.StateRunning, PID: os.Getpid(), Host: hostname(), Files: inputs,
	}
	for _, p := range plans {
		run.Configurations = append(run.Configurations, p.Folder)
	}
	for _, c := range sc.Claims {
		run.ClaimIDs = append(run.ClaimIDs, c.ID)
	}
	// Written before anything starts, so that a folder cut off at any moment names every
	// configuration planned and says it never ended.
	runFile := filepath.Join(dir, rundir.RunFile)
	if err := rundir.WriteJSON(runFile, run); err != nil {
		return nil, err
	}
	var runMu sync.Mutex // run.json is rewritten by Abort or at the end, never both at once
	unregister := onAbort(func(context.Context) error {
		runMu.Lock()
		defer runMu.Unlock()
		r := run
		r.State, r.Partial, r.Ended = rundir.StateInterrupted, true, time.Now()
		r.Error = "interrupted twice: the process exited without waiting for the running configurations"
		return rundir.WriteJSON(runFile, r)
	})
	res := &Result{Dir: dir, RunID: id, Valid: true, Parallel: n, Load: opts.Load, Steal: -1}
	manifests, runErr := executeAll(ctx, plans, dir, n, opts)
	runMu.Lock()
	defer runMu.Unlock()
	unregister()
	for i, m := range manifests {
		if m != nil {
			res.add(plans[i].Folder, m)
		}
	}
	run.State = rundir.StateComplete
	if ctx.Err() != nil {
		res.Partial = true
		run.State = rundir.StateInterrupted
		if runErr == nil {
			runErr = fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
		}
	}
	if runErr != nil && !errors.Is(runErr, ErrInterrupted) {
		run.State, run.Error = rundir.StateFailed, runErr.Error()
		res.Valid = false
		res.Invalid = append(res.Invalid, runErr.Error())
	}
	run.Partial = res.Partial
	run.Ended = time.Now()
	if err := rundir.WriteJSON(runFile, run); err != nil {
		return res, errors.Join(runErr, err)
	}
	return res, runErr
}

// fixedListen reports whether a dependency's proxy listens on an address the scenario fixes.
func fixedListen(sc *scenarios.Scenario) bool {
	for _, d := range sc.Dependencies {
		if d.Listen != "" {
			return true
		}
	}
	return false
}

func (r *Result) add(folder string, m *rundir.Manifest) {
	limit := m.LagLimit
	if limit <= 0 {
		limit = loadgen.DefaultLagLimit
	}
	for _, e := range m.Endpoints {
		if e.Dropped > 0 || e.LagP99 > limit {
			r.Behind = append(r.Behind, folder)
			break
		}
	}
	if m.Load != nil && m.Load.Steal != nil {
		r.Steal = max(r.Steal, *m.Load.Steal)
	}
	if !m.Valid {
		r.Valid = false
		for _, why := range m.Invalid {
			r.Invalid = append(r.Invalid, folder+": "+why)
		}
	}
	if m.Partial {
		r.Partial = true
	}
}

// checkToxiproxy checks an external Toxiproxy (api "" means embedded: nothing to check) and
// removes the proxies that runs killed earlier left on it (their owner's pid no longer alive on
// this host), saying so on progress.
func checkToxiproxy(ctx context.Context, api string, progress io.Writer) error {
	if api == "" {
		return nil
	}
	inj, err := proxy.NewExternal(ctx, api)
	if err != nil {
		return err
	}
	defer inj.Close(context.Background())
	removed, err := inj.CleanStale(ctx, nil)
	if len(removed) > 0 && progress != nil {
		fmt.Fprintf(progress, "toxiproxy at %s: removed %d stale proxies left by runs no longer alive:\n", inj.URL(), len(removed))
		for _, r := range removed {
			fmt.Fprintf(progress, "  %s (pid %d)\n", r.Name, r.PID)
		}
	}
	if err != nil {
		return fmt.Errorf("remove stale proxies: %w", err)
	}
	return nil
}

// createRunFolder creates the run folder, copies the targets' files into it (asRun) and writes
// the scenario as run (scenario.yaml, which starts the targets from those copies), the file as
// given (scenario.source.yaml) and the claims as run (claims.json). It returns the scenario as
// run: sc itself unless a target's folder moved.
func createRunFolder(sc *scenarios.Scenario, opts Options) (dir, id string, ran *scenarios.Scenario, err error) {
	root := opts.ResultsRoot
	if root == "" {
		root = DefaultResultsRoot
	}
	dir, id, err = rundir.Create(root, sc.Name, time.Now())
	if err != nil {
		return "", "", nil, err
	}
	if ran, err = asRun(sc, dir); err != nil {
		return dir, id, nil, err
	}
	asRun, err := ran.Marshal()
	if err != nil {
		return dir, id, nil, err
	}
	if err := rundir.WriteFile(filepath.Join(dir, rundir.ScenarioFile), asRun); err != nil {
		return dir, id, nil, err
	}
	if len(sc.Raw) > 0 {
		if err := rundir.WriteFile(filepath.Join(dir, rundir.ScenarioSourceFile), sc.Raw); err != nil {
			return dir, id, nil, err
		}
	}
	if len(sc.Claims) > 0 {
		if err := rundir.WriteJSON(filepath.Join(dir, rundir.ClaimsFile), sc.AllClaims()); err != nil {
			return dir, id, nil, err
		}
	}
	if !reflect.DeepEqual(sc.Roles, claim.Roles{}) {
		if err := rundir.WriteJSON(filepath.Join(dir, rundir.RolesFile), sc.Roles); err != nil {
			return dir, id, nil, err
		}
	}
	return dir, id, ran, nil
}

// executeAll executes plans in batches of n, in order, into dir, and returns each plan's
// manifest (nil for a plan that did not start) and the first error. A batch starts when every
// configuration run of the one before it has ended, so runs that share a moment on the machine
// are exactly the runs of one batch (DefaultParallel makes a batch hold whole repetitions). After
// an error or a cancelled ctx it starts no further batch; the running ones end on their own (or,
// cancelled, stop their load).
func executeAll(ctx context.Context, plans []*Plan, dir string, n int, opts Options) ([]*rundir.Manifest, error) {
	manifests := make([]*rundir.Manifest, len(plans))
	b := newBoard(plans, n, opts)
	defer b.close()
	var (
		mu       sync.Mutex
		firstErr error
	)
	n = max(n, 1)
	for start := 0; start < len(plans); start += n {
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		var wg sync.WaitGroup
		for i := start; i < min(start+n, len(plans)); i++ {
			p := plans[i]
			wg.Add(1)
			go func() {
				defer wg.Done()
				m, err := execute(ctx, p, filepath.Join(dir, p.Folder), n, opts, b.slot(i))
				manifests[i] = m
				// An error while the run is being interrupted (a start cut short by the cancelled
				// context, say) is the interruption, not a failure of this configuration.
				if err != nil && !errors.Is(err, ErrInterrupted) && ctx.Err() == nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("configuration %s: %w", p.Folder, err)
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		releaseMemory() // nothing runs between batches: the next starts from a lean process
	}
	return manifests, firstErr
}

// releaseMemory returns to the operating system the memory of configuration runs that have
// ended: it forces a garbage collection and scavenges the freed heap and goroutine stacks
// (debug.FreeOSMemory), blocking for one full collection (tens of milliseconds after a
// 500-dependency run). Without it, the Go runtime keeps the pages of an ended run's proxies,
// connections and goroutines resident and returns them only gradually, so the next
// configuration's run and the report built after the last one stack on top of memory that
// nothing uses any more: the partners scenario's peak RSS was the report's ~100 MB on top of the
// ended workers run's ~340 MB. It is called only when no configuration run is running, so it
// never pauses a measurement; the memory figures a run samples (resources.csv) are unchanged.
func releaseMemory() { debug.FreeOSMemory() }

// bench is everything one configuration run starts, so it can be stopped in one place.
type bench struct {
	fakes    *target.Fakes
	injector proxy.Injector
	// metered is injector when the dependencies' answers are timed (proxy.Metered), else nil;
	// meters are the manifest's account of each dependency's meter.
	metered *proxy.Metered
	meters  []rundir.Meter
	proxies map[string]string // dependency -> proxy name
	listen  map[string]string // component -> address it listens on
	target  target.Target
	// version is the target's version command's output (target.RunVersion), "" without one.
	version string
	// health is the external Toxiproxy whose life the time line watches (nil: embedded, it lives
	// and dies with this process).
	health pinger
	// unregister removes the engine's Abort hook; stopDeps stops the engine's dependencies.
	unregister func()
	stopDeps   func(context.Context) error
}

func (b *bench) close() error {
	var errs []error
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if b.target != nil {
		errs = append(errs, b.target.Close(ctx))
	}
	if b.injector != nil {
		errs = append(errs, b.injector.Close(ctx))
	}
	if b.unregister != nil {
		b.unregister()
	}
	if b.stopDeps != nil {
		errs = append(errs, b.stopDeps(ctx))
	}
	return errors.Join(errs...)
}

// startBench starts p's fake dependencies (those without a real upstream), a Toxiproxy proxy in
// front of each dependency (on its listen: address when the scenario fixes one) and the target,
// told to call the dependencies through the proxies; a command target's output goes to dir. On
// error it stops whatever it started; the error names the configuration's part and its address.
func startBench(ctx context.Context, p *Plan, dir string, opts Options) (_ *bench, err error) {
	b := &bench{proxies: map[string]string{}, listen: map[string]string{}}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	eng := engineOf(opts)
	deps, err := eng.StartDependencies(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	if h, ok := deps.Injector.(pinger); ok {
		b.health = h // an external Toxiproxy: the time line watches it
	}
	b.injector, b.fakes, b.stopDeps = deps.Injector, deps.Fakes, deps.Close
	if deps.Abort != nil {
		// On a second interrupt the process exits without b.close: Abort removes what would
		// outlive it (an external Toxiproxy's proxies, a namespace's objects).
		b.unregister = onAbort(deps.Abort)
	}
	unmetered := deps.Unmetered
	if unmetered == "" {
		b.metered = proxy.NewMetered(b.injector)
		b.injector = b.metered
	}
	sc := p.Scenario
	proxied := map[string]string{}
	for _, d := range sc.Dependencies {
		up := deps.Upstreams[d.Name]
		// Proxy names are unique per run, configuration run and process, so that an external
		// Toxiproxy shared by concurrent runs does not mix them, and carry the pid first, so that
		// the proxies of a killed run can be recognised and removed (proxy.CleanStale).
		pname := proxy.OwnedName(os.Getpid(), opts.runID, p.Folder, d.Name)
		listen, err := b.injector.AddProxyAt(ctx, pname, d.Listen, up)
		if err != nil {
			return nil, fmt.Errorf("proxy for dependency %s (listen %s): %w", d.Name, orEphemeral(d.Listen), err)
		}
		b.proxies[d.Name] = pname
		b.listen["proxy:"+d.Name] = listen
		proxied[d.Name] = "http://" + listen
		rec := rundir.Meter{Dependency: d.Name, Listen: listen, Unmetered: unmetered}
		if b.metered != nil {
			rec.Proxy = b.metered.Meter(pname).Upstream()
		}
		b.meters = append(b.meters, rec)
	}
	svc, err := p.Service.WithURLs(proxied)
	if err != nil {
		return nil, fmt.Errorf("start target: %w", err)
	}
	spec := target.Spec{Name: p.Configuration.Name, Config: p.Configuration.TargetConfig(), Service: svc,
		Dependencies: proxied, Dir: sc.Dir(), Folder: dir}
	if b.version, err = target.RunVersion(ctx, spec); err != nil {
		return nil, fmt.Errorf("start target: %w", err)
	}
	b.target, err = eng.StartTarget(ctx, p, spec, opts)
	if err != nil {
		return nil, fmt.Errorf("start target: %w", err)
	}
	b.listen["service"] = b.target.URL()
	if m := b.target.Record().Metrics; m != "" {
		b.listen["metrics"] = m
	}
	return b, nil
}

// unmeteredWhy says why the dependencies' answers cannot be timed with the Toxiproxy at api ("":
// embedded): "" when they can. A meter runs in the runner's process in front of each proxy, so
// the proxies must listen on the runner's host: an external Toxiproxy on another host would put a
// hop between hosts in every call.
func unmeteredWhy(api string) string {
	if api == "" {
		return ""
	}
	host := api
	if _, rest, ok := strings.Cut(api, "://"); ok {
		host = rest
	}
	host, _, _ = strings.Cut(host, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(strings.Trim(host, "[]")); host == "localhost" || ip != nil && ip.IsLoopback() {
		return ""
	}
	return "Toxiproxy runs at " + api + ", not on this host: timing its answers here would add a hop between hosts to every call"
}

func orEphemeral(listen string) string {
	if listen == "" {
		return "127.0.0.1:0"
	}
	return listen
}

// reachable checks a real upstream accepts a TCP connection from this host, within 3 s. With an
// external Toxiproxy on another host the upstream is dialled from there too: the error says
// where it was checked from.
func reachable(ctx context.Context, hostport string) error {
	var dl net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	c, err := dl.DialContext(dctx, "tcp", hostport)
	if err != nil {
		return fmt.Errorf("unreachable from the runner's host: %w", err)
	}
	return c.Close()
}

// listenLines say where each component of a configuration run listens: the service, its
// metrics, each dependency's proxy.
func listenLines(folder string, listen map[string]string) []string {
	keys := make([]string, 0, len(listen))
	for k := range listen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+" "+listen[k])
	}
	return []string{"  " + folder + " listens: " + strings.Join(parts, ", ")}
}

// targetRecord is the manifest's account of b's target: what the target says it is.
func targetRecord(b *bench) *rundir.Target {
	r := b.target.Record()
	desc := r.Description
	if b.version != "" {
		first, _, _ := strings.Cut(b.version, "\n")
		desc += ", version " + first
	}
	return &rundir.Target{Kind: r.Kind, Description: desc, Image: r.Image, Command: r.Command, URL: r.URL, Metrics: r.Metrics,
		Outcomes: r.Outcomes, Listen: b.listen, Version: b.version}
}

// classifier is how the load generator classes p's results: the built-in contract for the
// built-in service, the configuration's outcome mapping for any other target.
// loadOptions are the load generator's options for p: its timeout, the lag limit, the target's
// classifier, no connection opened ahead when the built-in service caps its inbound connections
// (they would hold places the load would not have taken), then extra.
func loadOptions(p *Plan, lagLimit time.Duration, extra []loadgen.Opt) []loadgen.Opt {
	opts := []loadgen.Opt{loadgen.WithTimeout(p.LoadTimeout), loadgen.WithLagLimit(lagLimit), loadgen.WithClassifier(classifier(p))}
	if p.Configuration.Target == nil && p.Scenario.Limits.MaxInboundConns > 0 {
		opts = append(opts, loadgen.WithoutWarm())
	}
	return append(opts, extra...)
}

func classifier(p *Plan) outcome.Classifier {
	if p.Configuration.Target == nil {
		return nil
	}
	m := p.Configuration.Target.Outcomes
	return m.Classify
}

// hostOf returns the host:port of a fake dependency's URL ("http://127.0.0.1:PORT").
func hostOf(u string) string {
	_, hp, _ := strings.Cut(u, "://")
	return hp
}

// execute runs plan p into the configuration folder dir and returns the manifest it wrote (nil
// if nothing was started). parallel is recorded in the manifest; live receives the run's
// progress and its closing lines.
func execute(ctx context.Context, p *Plan, dir string, parallel int, opts Options, live *slot) (*rundir.Manifest, error) {
	if err := makeFolders(dir); err != nil {
		return nil, err
	}
	b, err := startBench(ctx, p, dir, opts)
	if err != nil {
		// The configuration's folder says why nothing was measured in it.
		_ = os.WriteFile(filepath.Join(dir, StartErrorFile), []byte(err.Error()+"\n"), 0o644)
		return nil, err
	}
	defer b.close()
	m, err := manifestFor(p, b, parallel, opts)
	if err != nil {
		return nil, err
	}
	// A load generator in its own process writes the raw files itself.
	eng := engineOf(opts)
	out, err := openOutputs(dir, p, eng.LoadInRunner(opts))
	if err != nil {
		return nil, err
	}
	defer out.close()
	var raw []io.Writer
	for _, f := range out.raw {
		raw = append(raw, f)
	}
	lr, lrec, err := eng.StartLoad(ctx, p, dir, b.target.URL(), raw, loadOptions(p, m.LagLimit, opts.Loadgen), opts)
	if err != nil {
		if ctx.Err() != nil { // interrupted while starting: not a failure of this configuration
			// The folder exists but nothing was measured in it; it says so, as after a failed start.
			_ = os.WriteFile(filepath.Join(dir, StartErrorFile), []byte("interrupted before the load started\n"), 0o644)
			return nil, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
		}
		_ = os.WriteFile(filepath.Join(dir, StartErrorFile), []byte(err.Error()+"\n"), 0o644)
		return nil, err
	}
	m.Started = lr.T0()
	m.Load = lrec
	// The manifest is written as soon as the load starts, marked running and partial, so that a
	// process killed from here on leaves a folder that says this configuration was cut off.
	manifestFile := filepath.Join(dir, rundir.ManifestFile)
	started := *m
	started.State, started.Partial, started.Valid = rundir.StateRunning, true, false
	started.Invalid = []string{"cut off: the process ended while this configuration was running (its manifest was never completed)"}
	startErr := rundir.WriteJSON(manifestFile, started)
	if startErr != nil {
		lr.Stop() // without a manifest the raw files cannot be judged: do not go on
	}
	notes := listenLines(p.Folder, b.listen)
	if m.Load.PID != 0 {
		notes = append(notes, fmt.Sprintf("  %s load generator: child process %d (%s, %s in its folder)", p.Folder, m.Load.PID, "bulkhead attack", strings.Join(m.Load.Logs, ", ")))
	}
	live.note(notes)
	live.start(lr)
	checks, runErr, faultErr, halted := runTimeLine(ctx, lr, b, m, p.SampleEvery, out, func(err error) {
		live.note([]string{fmt.Sprintf("  %s FAILED: %v; stopping its load", p.Folder, err)})
	})
	if checks == nil && runErr != nil && m.Load.Layout == LoadProcess {
		m.Load.Error = runErr.Error() // the child ended without its checks
	}
	if pr, ok := lr.(interface{ PeakRSS() int64 }); ok {
		m.Load.PeakRSS = pr.PeakRSS()
	}
	if sh, ok := lr.(interface{ ShardRecords() [][]rundir.Shard }); ok {
		for i, recs := range sh.ShardRecords() {
			if i < len(m.Endpoints) {
				m.Endpoints[i].Shards = recs
			}
		}
	}
	live.end(checkLines(p.Folder, checks))
	m.Ended = time.Now()
	recordChecks(m, checks, lr.Pooled(), ctx.Err() != nil)
	if c, ok := b.target.(target.Checker); ok {
		m.Target.Problems = c.Problems()
	}
	if faultErr != nil {
		m.Valid = false
		m.Invalid = append(m.Invalid, "error while switching faults: "+faultErr.Error())
	}
	m.State = rundir.StateComplete
	if ctx.Err() != nil {
		m.State = rundir.StateInterrupted
	}
	// A part of the bench that died mid-run (a watchdog's verdict) fails the configuration: what
	// was measured after it died measured the dead part.
	if halted != nil {
		m.State, m.Valid, m.Partial = rundir.StateFailed, false, true
		m.Invalid = append(m.Invalid, halted.Error())
	}
	// A result, sample or file that could not be written (disk full, file too large) is data
	// lost: the configuration's run fails, loudly, and its manifest says why.
	lost := errors.Join(startErr, runErr, out.close())
	// Every writer of the folder is done (the load generator has exited, the outputs are
	// closed): what is on disk now is what the report will be held to.
	files, recErr := rundir.RecordData(dir)
	m.Files = files
	lost = errors.Join(lost, recErr)
	if lost != nil {
		m.State, m.Valid = rundir.StateFailed, false
		m.Invalid = append(m.Invalid, "results lost or cut off: "+lost.Error())
	}
	if err := rundir.WriteJSON(manifestFile, m); err != nil {
		return m, errors.Join(halted, lost, err)
	}
	if halted != nil || lost != nil {
		if lost != nil {
			lost = fmt.Errorf("results lost or cut off: %w", lost)
		}
		return m, errors.Join(halted, lost)
	}
	if ctx.Err() != nil {
		return m, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
	}
	return m, nil
}

func makeFolders(dir string) error {
	for _, d := range []string{dir, filepath.Join(dir, rundir.RawDir)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// manifestFor copies p's manifest-to-be (its phases too, which the fault schedule fills in) and
// adds what the started bench tells: versions, host, Toxiproxy and the target's own config.
func manifestFor(p *Plan, b *bench, parallel int, opts Options) (*rundir.Manifest, error) {
	m := p.Manifest
	m.Phases = clonePhases(p.Manifest.Phases)
	m.Endpoints = append([]rundir.Endpoint(nil), p.Manifest.Endpoints...)
	m.Versions = versions(opts.Version, b.injector.Version())
	m.Host = hostname()
	m.Parallel = parallel
	m.Toxiproxy = "embedded"
	if opts.Toxiproxy != "" {
		m.Toxiproxy = opts.Toxiproxy
	}
	m.Target = targetRecord(b)
	m.Engine = engineOf(opts).Name()
	m.Meters = b.meters
	if d, ok := b.target.(target.Describer); ok {
		svc, err := d.Describe()
		if err != nil {
			return nil, fmt.Errorf("record the target's config: %w", err)
		}
		m.Service = svc
	}
	return &m, nil
}

func clonePhases(phases []rundir.Phase) []rundir.Phase {
	out := append([]rundir.Phase(nil), phases...)
	for i := range out {
		out[i].Faults = append([]faults.Fault(nil), out[i].Faults...)
	}
	return out
}

// outputs are a configuration run's files: one raw file per endpoint, resources.csv and
// dependencies.csv.
type outputs struct {
	raw       []*os.File
	resFile   *os.File
	resources *rundir.ResourceWriter
	depFile   *os.File
	deps      *rundir.DependencyWriter
	closed    bool
}

// openOutputs creates the raw files (when raw is true), resources.csv and dependencies.csv; none
// may exist yet.
func openOutputs(dir string, p *Plan, raw bool) (_ *outputs, err error) {
	o := &outputs{}
	defer func() {
		if err != nil {
			o.close()
		}
	}()
	create := func(rel string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, rel), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	}
	for _, e := range p.Manifest.Endpoints {
		if !raw {
			break
		}
		f, err := create(e.RawFile)
		if err != nil {
			return nil, err
		}
		o.raw = append(o.raw, f)
	}
	if o.resFile, err = create(rundir.ResourcesFile); err != nil {
		return nil, err
	}
	if o.resources, err = rundir.NewResourceWriter(o.resFile); err != nil {
		return nil, err
	}
	if o.depFile, err = create(rundir.DependenciesFile); err != nil {
		return nil, err
	}
	if o.deps, err = rundir.NewDependencyWriter(o.depFile); err != nil {
		return nil, err
	}
	return o, nil
}

// attacks pairs p's planned attacks with their raw files, aimed at the target's base URL.
func (o *outputs) attacks(p *Plan, base string) []loadgen.Attack {
	out := make([]loadgen.Attack, len(p.Attacks))
	for i, a := range p.Attacks {
		out[i] = loadgen.Attack{Name: a.Path, URL: base + a.Path, Pacer: a.Pacer, Out: o.raw[i]}
	}
	return out
}

// close flushes resources.csv and dependencies.csv and syncs and closes every file, once.
func (o *outputs) close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	var errs []error
	if o.resources != nil {
		errs = append(errs, o.resources.Flush())
	}
	if o.deps != nil {
		errs = append(errs, o.deps.Flush())
	}
	for _, f := range append(o.raw, o.resFile, o.depFile) {
		if f != nil {
			errs = append(errs, f.Sync(), f.Close())
		}
	}
	return errors.Join(errs...)
}

// runTimeLine runs the time line of a started load: faults switch at the phase offsets (recorded
// in m.Phases) and resources are sampled every period, until the load ends; a cancelled ctx
// stops the load first. An external Toxiproxy is checked meanwhile (watchHealth): when it stops
// answering, the load is stopped and onHalt called with why, at once. It blocks until the load
// has drained and every helper has returned, and returns the load generator's self-checks, the
// errors that lost data (results or samples not written), the errors switching faults and why
// the time line was halted (nil when it was not).
func runTimeLine(ctx context.Context, lr Load, b *bench, m *rundir.Manifest, period time.Duration, out *outputs, onHalt func(error)) (checks []loadgen.Check, lost, faultErrs, halted error) {
	t0 := lr.T0()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var faultErr, sampleErr, healthErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		faultErr = schedule(ctx, stop, t0, b, m.Phases)
	}()
	go func() {
		defer wg.Done()
		sampleErr = sample(stop, t0, period, b.target.Resources, b.answers, out)
	}()
	if b.health != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			healthErr = watchHealth(stop, t0, b.health, func(err error) { onHalt(err); lr.Stop() })
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
	return checks, errors.Join(lerr, sampleErr), faultErr, healthErr
}

// recordChecks copies the load generator's self-checks into m and marks m invalid (with reasons)
// when an attack or the pooled check failed, and partial when the run was interrupted. An
// interruption alone does not make the run invalid: the checks cover the sends up to the stop,
// and the report judges the phases that ran to their end (the manifest's end says when it
// stopped) and no others.
func recordChecks(m *rundir.Manifest, checks []loadgen.Check, pooled loadgen.Check, interrupted bool) {
	m.Partial = interrupted
	if m.Load != nil && pooled.Steal >= 0 && len(checks) > 0 {
		steal := pooled.Steal
		m.Load.Steal = &steal
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
	if !pooled.Valid {
		m.Valid = false
		m.Invalid = append(m.Invalid, pooled.Reasons...)
	}
}

// checkLines are the closing lines of a configuration run: each attack's self-check, then the
// machine's steal time when it was notable (loadgen.NotableSteal).
func checkLines(folder string, checks []loadgen.Check) []string {
	var out []string
	for _, c := range checks {
		out = append(out, fmt.Sprintf("  %s %s: sent %d of %d scheduled, dropped %d, send lag p99 %s",
			folder, c.Name, c.Sent, c.Scheduled, c.Dropped, c.LagP99.Round(time.Microsecond)))
	}
	if len(checks) > 0 && checks[0].Steal >= loadgen.NotableSteal {
		out = append(out, fmt.Sprintf("  %s: the hypervisor took %.1f%% of a CPU's time during the load (steal time)",
			folder, 100*checks[0].Steal))
	}
	return out
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
			if f := b.fakes.Server(dep); f != nil {
				f.SetFailing(0)
			}
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
		srv := b.fakes.Server(f.Dependency)
		if srv == nil {
			return fmt.Errorf("a %s fault makes the dependency answer %d, which only a built-in fake can do; %s is a real upstream", f.Type, e.Status, f.Dependency)
		}
		srv.SetFailing(e.Status)
	}
	return b.injector.Apply(ctx, b.proxies[f.Dependency], e)
}

// sample writes the target's resources (read by resources) and the dependencies' answers (read
// by answers) every period until stop is closed, and once more then. Both files get their rows at
// the same instants.
func sample(stop <-chan struct{}, t0 time.Time, period time.Duration, resources func() []outcome.Resource,
	answers func(time.Time) []outcome.Answers, out *outputs) error {
	tick := time.NewTicker(period)
	defer tick.Stop()
	write := func() error {
		now := time.Now()
		rs := resources()
		if err := out.resources.Write(now.Sub(t0), rs); err != nil {
			return fmt.Errorf("write %s: %w", rundir.ResourcesFile, err)
		}
		if err := out.deps.Write(now.Sub(t0), answers(now)); err != nil {
			return fmt.Errorf("write %s: %w", rundir.DependenciesFile, err)
		}
		return nil
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

// answers takes each metered dependency's answers of the interval ending at now, in the
// scenario's order of dependencies; none when nothing is metered.
func (b *bench) answers(now time.Time) []outcome.Answers {
	if b.metered == nil {
		return nil
	}
	out := make([]outcome.Answers, 0, len(b.meters))
	for _, m := range b.meters {
		if mt := b.metered.Meter(b.proxies[m.Dependency]); mt != nil {
			a := mt.Take(now)
			a.Dependency = m.Dependency // the meter knows its proxy's name
			out = append(out, a)
		}
	}
	return out
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
