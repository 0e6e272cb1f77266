package report

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
	"github.com/bulkheadlab/bulkhead/rundir"
)

// ErrNoRun is returned when a folder is not a run folder (no run.json and no configuration
// folder with a manifest).
var ErrNoRun = errors.New("not a run folder")

// readRun reads run.json, or, when it is missing, makes one up from the configuration folders
// found (so a partial run can still be reported).
func readRun(dir string) (*rundir.Run, error) {
	var run rundir.Run
	err := rundir.ReadJSON(filepath.Join(dir, rundir.RunFile), &run)
	if err == nil {
		for _, name := range run.Configurations {
			if err := rundir.CheckName(name); err != nil {
				return nil, fmt.Errorf("%s: %w", rundir.RunFile, err)
			}
		}
		if run.State == rundir.StateRunning {
			run.Partial = true // the runner never said how it ended: it was cut off
		}
		return &run, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read run: %w", err)
	}
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		return nil, fmt.Errorf("read run folder: %w", rerr)
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
		return nil, fmt.Errorf("%s: %w", dir, ErrNoRun)
	}
	run.RunID = filepath.Base(dir)
	run.Partial = true
	return &run, nil
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
	return t, nil
}

// targetText describes the system under test and the outcome mapping its results were classed
// by, for the report.
func targetText(t *rundir.Target) (target, outcomes string) {
	if t == nil || t.Kind == "" || t.Kind == rundir.TargetBuiltIn {
		return "the built-in service", "the built-in X-Bulkhead-Outcome contract"
	}
	switch t.Kind {
	case rundir.TargetCommand:
		target = "command `" + strings.Join(t.Command, " ") + "`"
	default:
		target = t.Kind + " " + t.URL
	}
	if t.Metrics != "" {
		target += ", resources scraped from " + t.Metrics
	}
	return target, t.Outcomes.String()
}

// outcomeTable interns outcomes so that each record carries a 4-byte key.
type outcomeTable struct {
	idx  map[kind]uint32
	outs []kind
}

// key returns o's index, adding it (with its strings copied: they may point into a reader's
// buffer) when it is new.
func (t *outcomeTable) key(o kind) uint32 {
	if k, ok := t.idx[o]; ok {
		return k
	}
	o.class, o.typ, o.cause = strings.Clone(o.class), strings.Clone(o.typ), strings.Clone(o.cause)
	o.pool, o.reason, o.dep = strings.Clone(o.pool), strings.Clone(o.reason), strings.Clone(o.dep)
	if t.idx == nil {
		t.idx = map[kind]uint32{}
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
// skew after started; a result without a readable schedule gets lagUnknown.
func readRecords(path string, started time.Time, skew time.Duration, tab *outcomeTable) ([]record, error) {
	var recs []record
	err := rundir.ScanRaw(path, func(r *rundir.Sent) error {
		o := newOutcome(classify(r), r.Pool, r.Reason, r.Dependency)
		t := r.Timestamp.Sub(started)
		recs = append(recs, record{t: int64(t), lat: int64(r.Latency), key: tab.key(o), lag: lagOf(r.Scheduled, t-skew)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read raw results: %w", err)
	}
	slices.SortFunc(recs, func(a, b record) int { return cmpInt(a.t, b.t) })
	return recs, nil
}

// readAll reads the raw files of every endpoint at once, up to GOMAXPROCS files at a time (the
// decoding is most of a report's time), each into its own outcome table, then re-keys every
// record into tab. skews[i] is the start skew of path i's attack (see readRecords). It returns
// one record slice per path, in the order of paths.
func readAll(paths []string, skews []time.Duration, started time.Time, tab *outcomeTable) ([][]record, error) {
	out := make([][]record, len(paths))
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
			out[i][j].key = remap[out[i][j].key]
		}
	}
	return out, nil
}

// lagOf returns the send lag of a result scheduled at offset sched (outcome.HeaderScheduled, ns)
// and sent at offset sent on its attack's clock, in µs (clamped to [0, 35 min]), or lagUnknown
// when sched is missing or unreadable.
func lagOf(sched string, sent time.Duration) int32 {
	if sched == "" {
		return lagUnknown
	}
	at, err := strconv.ParseInt(sched, 10, 64)
	if err != nil {
		return lagUnknown
	}
	return int32(min(max(int64(sent)-at, 0)/1e3, math.MaxInt32))
}

// loadConfiguration reads one configuration folder and computes its statistics, timeline and
// exhausted resources. The raw records are dropped before it returns.
//
// The requests of the endpoints in keep (those a claim measures) are kept on the configuration
// for the verdict engine's bootstrap.
func loadConfiguration(runDir, name string, bucket time.Duration, keep map[string]bool) (*Configuration, error) {
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
	c := &Configuration{
		Name: name, Config: m.Configuration, Repetition: m.Repetition, Mode: svc.Mode,
		Valid: m.Valid, Invalid: m.Invalid, Partial: m.Partial, Seed: m.Seed,
		ClientTimeoutMS: ms(int64(m.ClientTimeout)), LagLimitMS: ms(int64(m.LagLimit)), Timeline: map[string][]Bucket{},
		manifest: &m,
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
		kind := p.Kind
		if kind == "" {
			kind = "semaphore"
		}
		c.Pools = append(c.Pools, PoolInfo{Name: p.Name, Kind: kind, Size: p.Size, Queue: p.QueueCapacity,
			MaxWaitMS: ms(int64(p.MaxWait)), Dependencies: p.Dependencies})
	}
	calls := map[string][]string{}
	for _, e := range svc.Endpoints {
		calls[e.Path] = e.Calls
	}
	var types []string
	for _, p := range m.Phases {
		ph := Phase{Name: p.Name, StartS: p.Start.Seconds(), EndS: p.End.Seconds(), Endpoints: map[string]*Stats{},
			start: p.Start, end: p.End, faultStart: p.Start}
		for i, f := range p.Faults {
			ph.Faults = append(ph.Faults, f)
			if i == 0 && f.AppliedAt > p.Start && f.AppliedAt < p.End {
				ph.faultStart = f.AppliedAt
			}
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
	c.resources = res
	c.Memory = memoryOf(c, res)
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
	var s scratch
	attr := newAttribution(c, svc)
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
		ep := EndpointRun{Path: e.Path, Calls: calls[e.Path], Rate: e.Rate, Arrivals: e.Arrivals,
			TimeoutMS: ms(int64(e.Timeout)), Scheduled: e.Scheduled, Sent: e.Sent, Dropped: e.Dropped,
			LagP99MS: ms(int64(e.LagP99)), LagMaxMS: ms(int64(e.LagMax))}
		c.Endpoints = append(c.Endpoints, ep)
		inPhases := 0
		for i := range c.Phases {
			ph := &c.Phases[i]
			sl := span(recs, int64(ph.start), int64(ph.end))
			inPhases += len(sl)
			ph.Endpoints[e.Path] = computeStats(sl, tab.outs, ph.end-ph.start, &s)
			firstTimes(ph.Endpoints[e.Path], sl, tab.outs, ph.start)
			attr.add(i, e.Path, sl, tab.outs)
		}
		c.Outside += len(recs) - inPhases
		if keep[e.Path] {
			if c.recs == nil {
				c.recs = map[string][]record{}
			}
			c.recs[e.Path] = recs
		}
		if len(recs) > 0 {
			lived = max(lived, time.Duration(recs[len(recs)-1].t)+1)
		}
		c.Timeline[e.Path] = timelineOf(recs, bucketSpans(c.Phases, end, bucket, lived), tab.outs, &s)
		grp.add(e.Path, recs)
	}
	// Every endpoint's time line has the same length: the longest any of them lived.
	spans := bucketSpans(c.Phases, end, bucket, lived)
	for path, buckets := range c.Timeline {
		for _, sp := range spans[len(buckets):] {
			buckets = append(buckets, computeBucket(sp[0].Seconds(), nil, tab.outs, sp[1]-sp[0], &s))
		}
		c.Timeline[path] = buckets
	}
	grp.finish(c, tab.outs, spans, &s)
	c.outs = tab.outs
	attr.finish()
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
