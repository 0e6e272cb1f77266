package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// ErrNoRun is returned when a folder is not a run folder (no run.json and no configuration
// folder with a manifest).
var ErrNoRun = errors.New("not a run folder")

// ErrInProgress is returned for a run folder whose runner is still running (it holds the
// folder's lock, rundir.InProgress): its files are not complete yet, and nothing is read.
var ErrInProgress = errors.New("run in progress")

// readRun reads run.json, or, when it is missing, makes one up from the configuration folders
// found (so a partial run can still be reported; made up is then true). A run whose runner still
// holds the folder is ErrInProgress.
func readRun(dir string) (run *rundir.Run, madeUp bool, err error) {
	run = &rundir.Run{}
	err = rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), run)
	if err == nil {
		for _, name := range run.Configurations {
			if err := rundir.CheckName(name); err != nil {
				return nil, false, fmt.Errorf("%s: %w", rundir.RunFile, err)
			}
		}
		if run.State == rundir.StateRunning {
			if rundir.InProgress(dir) {
				who := ""
				if run.PID > 0 {
					who = fmt.Sprintf(" (pid %d on %s)", run.PID, run.Host)
				}
				return nil, false, fmt.Errorf("%s: %w: its runner%s still holds the folder; report it once the run has ended", dir, ErrInProgress, who)
			}
			run.Partial = true // the runner never said how it ended: it was cut off
		}
		return run, false, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, false, fmt.Errorf("read run: %w", err)
	}
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return nil, false, fmt.Errorf("read run folder: %w", rerr)
	}
	for _, e := range entries {
		if !e.IsDir() || rundir.CheckName(e.Name()) != nil {
			continue
		}
		// A configuration folder has a manifest, or (killed before writing it) at least raw results.
		for _, f := range []string{rundir.ManifestFile, rundir.RawDir} {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), f)); err == nil {
				run.Configurations = append(run.Configurations, e.Name())
				break
			}
		}
	}
	if len(run.Configurations) == 0 {
		return nil, false, fmt.Errorf("%s: %w", dir, ErrNoRun)
	}
	run.RunID = filepath.Base(dir)
	run.Partial = true
	return run, true, nil
}

// topologyOf returns the manifest's topology of the system under test, decoding the recorded
// service configuration of a folder written before manifests carried one.
func topologyOf(m *rundir.Manifest) (outcome.Topology, error) {
	var t outcome.Topology
	switch {
	case m.Topology != nil:
		t = *m.Topology
	case len(m.Service) > 0:
		if err := json.Unmarshal(m.Service, &t); err != nil {
			return t, fmt.Errorf("decode service config: %w", err)
		}
	}
	if t.Mode == "" {
		t.Mode = outcome.ModeShared
	}
	for i := range t.Pools {
		legacyPool(&t.Pools[i])
	}
	return t, nil
}

// legacyPool fills what a pool recorded by an earlier version leaves out, as that version meant
// it: no kind was the semaphore (the service's default then), and a workers pool, recorded
// before pools declared their goroutines, owned one per slot. Nothing else in the report knows a
// pool kind: it reads Kind as a name and Goroutines as the kind declared them.
func legacyPool(p *outcome.TopologyPool) {
	if p.Kind == "" {
		p.Kind = "semaphore"
	}
	if p.Kind == "workers" && p.Goroutines == 0 {
		p.Goroutines = p.Size
	}
}

// targetText describes the system under test and the outcome mapping its results were classed
// by, for the report: the description the target recorded of itself (a folder from before
// targets described themselves: its kind and what it ran).
func targetText(t *rundir.Target) (target, outcomes string) {
	const builtin = "the built-in X-Bulkhead-Outcome contract"
	switch {
	case t == nil || (t.Description == "" && (t.Kind == "" || t.Kind == "builtin")):
		return "the built-in service", builtin
	case t.Description != "":
		target = t.Description
	default:
		target = t.Kind + " " + t.URL
		if len(t.Command) > 0 {
			target = t.Kind + " `" + strings.Join(t.Command, " ") + "`"
		}
		if t.Metrics != "" {
			target += ", resources scraped from " + t.Metrics
		}
	}
	if t.Outcomes == nil {
		return target, builtin
	}
	return target, t.Outcomes.String()
}

// outcomeTable interns outcomes so that each record carries a 4-byte key.
type outcomeTable struct {
	idx  map[model.Kind]uint32
	outs []model.Kind
}

// key returns o's index, adding it (with its strings copied: they may point into a reader's
// buffer) when it is new.
func (t *outcomeTable) key(o model.Kind) uint32 {
	if k, ok := t.idx[o]; ok {
		return k
	}
	o.Class, o.Type, o.Cause = strings.Clone(o.Class), strings.Clone(o.Type), strings.Clone(o.Cause)
	o.Pool, o.Reason, o.Dep = strings.Clone(o.Pool), strings.Clone(o.Reason), strings.Clone(o.Dep)
	if t.idx == nil {
		t.idx = map[model.Kind]uint32{}
	}
	k := uint32(len(t.outs))
	t.idx[o] = k
	t.outs = append(t.outs, o)
	return k
}

// classify returns the class of a result: its X-Loadgen-Class header, or outcome.Classify's
// answer when the header is missing (raw files written by another tool).
func classify(r *rundir.Sent) string {
	if r.Class != "" {
		return r.Class
	}
	return outcome.Classify(r.Code, r.Header(), r.Error)
}

// readRecords streams one raw file into records (sorted by send offset), interning outcomes into
// tab. It holds only the records, never the results. A record's send lag is its send offset
// minus its scheduled offset (outcome.HeaderScheduled) on the attack's own clock, which started
// skew after started; a result without a readable schedule gets model.LagUnknown.
func readRecords(path string, started time.Time, skew time.Duration, tab *outcomeTable) ([]model.Record, error) {
	var recs []model.Record
	err := rundir.ScanRaw(path, func(r *rundir.Sent) error {
		o := model.NewKind(classify(r), r.Pool, r.Reason, r.Dependency)
		t := r.Timestamp.Sub(started)
		recs = append(recs, model.Record{T: int64(t), Lat: int64(r.Latency), Key: tab.key(o), Lag: lagOf(r.Scheduled, t-skew)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read raw results: %w", err)
	}
	model.SortByTime(recs)
	return recs, nil
}

// readAll reads the raw files of every endpoint at once, up to GOMAXPROCS files at a time (the
// decoding is most of a report's time), each into its own outcome table, then re-keys every
// record into tab. skews[i] is the start skew of path i's attack (see readRecords). It returns
// one record slice per path, in the order of paths.
func readAll(paths []string, skews []time.Duration, started time.Time, tab *outcomeTable) ([][]model.Record, error) {
	out := make([][]model.Record, len(paths))
	tabs := make([]outcomeTable, len(paths))
	errs := make([]error, len(paths))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = readRecords(p, started, skews[i], &tabs[i])
		}()
	}
	wg.Wait()
	for i := range paths {
		if errs[i] != nil {
			return nil, errs[i]
		}
		remap := make([]uint32, len(tabs[i].outs))
		for k, o := range tabs[i].outs {
			remap[k] = tab.key(o)
		}
		for j := range out[i] {
			out[i][j].Key = remap[out[i][j].Key]
		}
	}
	return out, nil
}

// lagOf returns the send lag of a result scheduled at offset sched (outcome.HeaderScheduled, ns)
// and sent at offset sent on its attack's clock, in µs (clamped to [0, 35 min]), or lagUnknown
// when sched is missing or unreadable.
func lagOf(sched string, sent time.Duration) int32 {
	if sched == "" {
		return model.LagUnknown
	}
	at, err := strconv.ParseInt(sched, 10, 64)
	if err != nil {
		return model.LagUnknown
	}
	return int32(min(max(int64(sent)-at, 0)/1e3, math.MaxInt32))
}

// loadConfiguration reads one configuration folder and computes its statistics, timeline and
// exhausted resources. The raw records are dropped before it returns.
//
// The requests of the endpoints in keep (those a claim or the headline measures) and of those
// that call no faulted dependency (the headline's when no roles are declared; grouped endpoints
// are kept as their group) are kept on the configuration for the verdict engine's figures.
func loadConfiguration(runDir, name string, bucket time.Duration, keep map[string]bool) (*model.Configuration, error) {
	dir, err := rundir.Inside(runDir, name)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", name, err)
	}
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); err != nil {
		return nil, fmt.Errorf("configuration %s: read manifest: %w", name, err)
	}
	svc, err := topologyOf(&m)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", name, err)
	}
	c := &model.Configuration{
		Name: name, Config: m.Configuration, Repetition: m.Repetition, Mode: svc.Mode,
		Valid: m.Valid, Invalid: m.Invalid, Partial: m.Partial, Seed: m.Seed,
		ClientTimeoutMS: ms(int64(m.ClientTimeout)), LagLimitMS: ms(int64(m.LagLimit)), Timeline: map[string][]model.Bucket{},
		Manifest: &m,
	}
	if c.Config == "" {
		c.Config = name
	}
	c.Target, c.Outcomes = targetText(m.Target)
	if m.Load != nil {
		c.Load, c.MachineSteal = m.Load.Layout, m.Load.Steal
	}
	if m.Target != nil {
		c.TargetProblems = m.Target.Problems
	}
	if c.ClientTimeoutMS == 0 {
		c.ClientTimeoutMS = ms(int64(svc.ClientTimeout))
	}
	for _, p := range svc.Pools {
		c.Pools = append(c.Pools, model.PoolInfo{Name: p.Name, Kind: p.Kind, Size: p.Size, Queue: p.QueueCapacity,
			MaxWaitMS: ms(int64(p.MaxWait)), Dependencies: p.Dependencies, Goroutines: p.Goroutines})
	}
	calls := map[string][]string{}
	for _, e := range svc.Endpoints {
		calls[e.Path] = e.Calls
	}
	var types []string
	faulted := map[string]bool{} // dependencies with a fault in some phase
	for _, p := range m.Phases {
		ph := model.Phase{Name: p.Name, StartS: p.Start.Seconds(), EndS: p.End.Seconds(), Endpoints: map[string]*model.Stats{},
			Start: p.Start, End: p.End, FaultStart: p.Start}
		for i, f := range p.Faults {
			ph.Faults = append(ph.Faults, f)
			if i == 0 && f.AppliedAt > p.Start && f.AppliedAt < p.End {
				ph.FaultStart = f.AppliedAt
			}
			faulted[f.Dependency] = true
			if !slices.Contains(types, f.Type) {
				types = append(types, f.Type)
			}
		}
		c.Phases = append(c.Phases, ph)
	}
	c.Fault = "none"
	if len(types) > 0 {
		c.Fault = strings.Join(types, "+")
	}

	res, err := rundir.ReadResources(filepath.Join(dir, rundir.ResourcesFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("configuration %s: read resources: %w", name, err)
	}
	c.Resources = res
	deps, err := rundir.ReadDependencies(filepath.Join(dir, rundir.DependenciesFile))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("configuration %s: read dependencies: %w", name, err)
	}
	c.Dependencies = deps
	c.Memory = memoryOf(c, res)
	limitFigures(c, res)
	grp := newGrouper(c, m.Endpoints, calls) // nil unless there are many endpoints (groups.go)
	if grp != nil {
		grp.groupResources(c)
	}

	var end time.Duration
	for _, p := range m.Phases {
		end = max(end, p.End)
	}
	// Buckets cover the declared time line, but never more of it than the run lived: the manifest's
	// end, or (a killed run has none) the last request sent. A 10,000 h scenario stopped after 4 s
	// gets 4 buckets, not 36 million.
	lived := time.Duration(0)
	if !m.Ended.IsZero() && m.Ended.After(m.Started) {
		lived = m.Ended.Sub(m.Started)
	}
	var tab outcomeTable
	var s stats.Scratch
	attr := attribution.New(c, svc)
	rawPaths := make([]string, len(m.Endpoints))
	skews := make([]time.Duration, len(m.Endpoints))
	for i, e := range m.Endpoints {
		skews[i] = e.StartSkew
		raw := e.RawFile
		if raw == "" {
			raw = filepath.Join(rundir.RawDir, rundir.RawFileName(e.Path))
		}
		if rawPaths[i], err = rundir.Inside(dir, raw); err != nil {
			return nil, fmt.Errorf("configuration %s endpoint %s: raw file: %w", name, e.Path, err)
		}
	}
	allRecs, err := readAll(rawPaths, skews, m.Started, &tab)
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", name, err)
	}
	for i, e := range m.Endpoints {
		recs := allRecs[i]
		allRecs[i] = nil // dropped once its statistics are computed
		ep := model.EndpointRun{Path: e.Path, Calls: calls[e.Path], Rate: e.Rate, Arrivals: e.Arrivals,
			TimeoutMS: ms(int64(e.Timeout)), Scheduled: e.Scheduled, Sent: e.Sent, Dropped: e.Dropped,
			LagP99MS: ms(int64(e.LagP99)), LagMaxMS: ms(int64(e.LagMax))}
		c.Endpoints = append(c.Endpoints, ep)
		inPhases := 0
		for i := range c.Phases {
			ph := &c.Phases[i]
			sl := model.Span(recs, int64(ph.Start), int64(ph.End))
			inPhases += len(sl)
			ph.Endpoints[e.Path] = stats.Compute(sl, tab.outs, ph.End-ph.Start, &s)
			stats.FirstTimes(ph.Endpoints[e.Path], sl, tab.outs, ph.Start)
			attr.Add(i, e.Path, sl, tab.outs)
		}
		c.Outside += len(recs) - inPhases
		if keep[e.Path] || grp == nil && !slices.ContainsFunc(calls[e.Path], func(d string) bool { return faulted[d] }) {
			if c.Requests == nil {
				c.Requests = map[string][]model.Record{}
			}
			c.Requests[e.Path] = recs
		}
		if len(recs) > 0 {
			lived = max(lived, time.Duration(recs[len(recs)-1].T)+1)
		}
		c.Timeline[e.Path] = stats.Timeline(recs, stats.BucketSpans(c.Phases, end, bucket, lived), tab.outs, &s)
		grp.add(e.Path, recs)
	}
	// Every endpoint's time line has the same length: the longest any of them lived.
	spans := stats.BucketSpans(c.Phases, end, bucket, lived)
	for path, buckets := range c.Timeline {
		for _, sp := range spans[len(buckets):] {
			buckets = append(buckets, stats.ComputeBucket(sp[0].Seconds(), nil, tab.outs, sp[1]-sp[0], &s))
		}
		c.Timeline[path] = buckets
	}
	grp.finish(c, tab.outs, spans, &s)
	c.Kinds = tab.outs
	attr.Finish()
	return c, nil
}

// missingConfiguration returns why configuration name of the run in runDir has no data to
// analyse ("" when its manifest is there): the folder is missing, or the process was killed
// before it wrote the manifest, leaving raw results that cannot be judged without it.
func missingConfiguration(runDir, name string) (string, error) {
	dir, err := rundir.Inside(runDir, name)
	if err != nil {
		return "", fmt.Errorf("configuration %s: %w", name, err)
	}
	var m struct {
		State   string    `json:"state"`
		Started time.Time `json:"started"`
	}
	if err := rundir.ReadJSON(filepath.Join(dir, rundir.ManifestFile), &m); !errors.Is(err, fs.ErrNotExist) {
		if err != nil || m.State != rundir.StateRunning {
			return "", nil
		}
		// Written when the load started and never completed: the process died meanwhile.
		last := lastWrite(filepath.Join(dir, rundir.RawDir), filepath.Join(dir, rundir.ResourcesFile))
		if last.IsZero() || !last.After(m.Started) {
			return fmt.Sprintf("cut off: the process ended while this configuration was running (load started %s; nothing written after)", m.Started.UTC().Format(time.RFC3339)), nil
		}
		return fmt.Sprintf("cut off: the process ended while this configuration was running (load started %s, last write %.1f s into its time line); its results are incomplete and not analysed",
			m.Started.UTC().Format(time.RFC3339), last.Sub(m.Started).Seconds()), nil
	}
	if _, err := os.Stat(dir); err != nil {
		return "missing: no folder (the run stopped before this configuration started)", nil
	}
	if b, err := os.ReadFile(filepath.Join(dir, rundir.StartErrorFile)); err == nil {
		why, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		return "not started: " + why, nil
	}
	raws, _ := filepath.Glob(filepath.Join(dir, rundir.RawDir, "*"))
	if len(raws) == 0 {
		return "missing: no manifest and no raw results (the run stopped while this configuration was starting)", nil
	}
	return fmt.Sprintf("not analysed: no manifest, %d raw file(s) present (the process was killed during this configuration; its time line and validity are unknown)", len(raws)), nil
}

// lastWrite returns the latest modification time of the files in folder rawDir and of the file
// more (zero when there are none).
func lastWrite(rawDir, more string) time.Time {
	var last time.Time
	paths, _ := filepath.Glob(filepath.Join(rawDir, "*"))
	for _, p := range append(paths, more) {
		if fi, err := os.Lstat(p); err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
		}
	}
	return last
}

func ms(ns int64) float64 { return stats.MS(ns) }
