package report

import (
	"bufio"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

// t0 is the attack start of every synthetic configuration.
var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// req is one synthetic request.
type req struct {
	t, lat      time.Duration
	class       string
	pool, dep   string
	reason      string
	withHeaders bool
	// lag is the send lag: the result's scheduled offset is t - lag (0: sent on time); noSched
	// leaves the scheduled offset out, as raw files of another tool would.
	lag     time.Duration
	noSched bool
}

// prof describes an endpoint's requests in one phase: a constant rate, successes at lat, and a
// share fail of failures of class failClass answered after failLat, spread evenly.
type prof struct {
	lat       time.Duration
	fail      float64
	failClass string
	failLat   time.Duration
}

// cfgDef is one synthetic configuration folder.
type cfgDef struct {
	name, config string
	rep          int
	mode         string
	pools        []outcome.TopologyPool
	valid        bool
	invalid      []string
	profiles     map[string]map[string]prof // phase -> endpoint -> profile
	extra        map[string][]req           // endpoint -> extra requests
	resources    []rundir.ResourceSample
	// answers, when set, are written as the configuration's dependencies.csv.
	answers []rundir.DependencySample
}

// world is one synthetic run folder.
type world struct {
	phases  []rundir.Phase
	rate    float64 // per endpoint
	timeout time.Duration
	cfgs    []cfgDef
}

var twoEndpoints = []outcome.TopologyCall{{Path: "/a", Calls: []string{"A"}}, {Path: "/b", Calls: []string{"B"}}}

func sharedPools(size int) []outcome.TopologyPool {
	return []outcome.TopologyPool{{Name: "shared", Kind: "semaphore", Size: size, Dependencies: []string{"A", "B"}}}
}

func splitPools(size int) []outcome.TopologyPool {
	return []outcome.TopologyPool{
		{Name: "A", Kind: "semaphore", Size: size, Dependencies: []string{"A"}},
		{Name: "B", Kind: "semaphore", Size: size, Dependencies: []string{"B"}},
	}
}

// requestsOf expands a profile over [from, to) at rate per second.
func requestsOf(p prof, dep string, from, to time.Duration, rate float64) []req {
	var out []req
	step := time.Duration(float64(time.Second) / rate)
	i := 0
	for t := from; t < to; t += step {
		r := req{t: t, lat: p.lat, class: "ok", dep: dep}
		// Failure i when the running count of failures crosses an integer: spread evenly.
		if int(float64(i+1)*p.fail) > int(float64(i)*p.fail) {
			r.class, r.lat = p.failClass, p.failLat
		}
		out = append(out, r)
		i++
	}
	return out
}

// write builds the run folder in dir and returns dir.
func (w world) write(t testing.TB, dir string) string {
	t.Helper()
	run := rundir.Run{Scenario: "hypothesis", RunID: "20250102T030405Z-hypothesis", Command: "bulkhead run hypothesis",
		Started: t0, Ended: t0.Add(time.Minute)}
	for _, c := range w.cfgs {
		run.Configurations = append(run.Configurations, c.name)
		w.writeConfig(t, dir, c)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.RunFile), run); err != nil {
		t.Fatal(err)
	}
	rundirtest.Seal(t, dir) // as a runner records its files
	return dir
}

func (w world) writeConfig(t testing.TB, dir string, c cfgDef) {
	t.Helper()
	cdir := filepath.Join(dir, c.name)
	if err := os.MkdirAll(filepath.Join(cdir, rundir.RawDir), 0o755); err != nil {
		t.Fatal(err)
	}
	svc := outcome.Topology{Mode: c.mode, Pools: c.pools, Endpoints: twoEndpoints, ClientTimeout: w.timeout}
	m := rundir.Manifest{Scenario: "hypothesis", Configuration: c.config, Repetition: c.rep, Seed: 1, Started: t0,
		Valid: c.valid, Invalid: c.invalid, ClientTimeout: w.timeout, Topology: &svc, Phases: w.phases}
	if m.Configuration == "" {
		m.Configuration = c.name
	}
	for _, ph := range w.phases {
		m.Ended = maxTime(m.Ended, t0.Add(ph.End)) // a complete run ends with its time line
	}
	for _, e := range twoEndpoints {
		var reqs []req
		for _, ph := range w.phases {
			if p, ok := c.profiles[ph.Name][e.Path]; ok {
				reqs = append(reqs, requestsOf(p, e.Calls[0], ph.Start, ph.End, w.rate)...)
			}
		}
		reqs = append(reqs, c.extra[e.Path]...)
		raw := filepath.Join(rundir.RawDir, rundir.RawFileName(e.Path))
		writeRaw(t, filepath.Join(cdir, raw), e.Path, reqs)
		m.Endpoints = append(m.Endpoints, rundir.Endpoint{Path: e.Path, RawFile: raw, Rate: w.rate, Arrivals: "constant",
			Timeout: 4 * w.timeout, Scheduled: uint64(len(reqs)), Sent: uint64(len(reqs))})
	}
	if err := rundir.WriteJSON(filepath.Join(cdir, rundir.ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(cdir, rundir.ResourcesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rw, err := rundir.NewResourceWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.resources {
		if err := rw.Write(s.T, []outcome.Resource{{Name: s.Resource, Capacity: s.Capacity, InUse: s.InUse, Rejected: s.Rejected,
			Interval: s.Interval, MeanInUse: s.MeanInUse, MaxInUse: s.MaxInUse, AtCapacity: s.AtCapacity, FirstAtCapacity: s.FirstAtCapacity}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Flush(); err != nil {
		t.Fatal(err)
	}
	if c.answers != nil {
		df, err := os.Create(filepath.Join(cdir, rundir.DependenciesFile))
		if err != nil {
			t.Fatal(err)
		}
		defer df.Close()
		dw, err := rundir.NewDependencyWriter(df)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.answers {
			if err := dw.Write(a.T, []outcome.Answers{a.Answers}); err != nil {
				t.Fatal(err)
			}
		}
		if err := dw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeRaw writes reqs as vegeta JSON-lines results with the headers the load generator stores.
func writeRaw(t testing.TB, path, endpoint string, reqs []req) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriter(f)
	enc := vegeta.NewJSONEncoder(bw)
	for i, r := range reqs {
		res := vegeta.Result{Attack: endpoint, Seq: uint64(i), Timestamp: t0.Add(r.t), Latency: r.lat, Method: "GET",
			URL: "http://127.0.0.1:1" + endpoint, Headers: resultHeaders(r)}
		res.Code = 200
		if r.class != "ok" {
			res.Code = 503
		}
		if err := enc.Encode(&res); err != nil {
			t.Fatal(err)
		}
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

func resultHeaders(r req) http.Header {
	h := http.Header{}
	h.Set(outcome.HeaderClass, r.class)
	if !r.noSched {
		h.Set(outcome.HeaderScheduled, strconv.FormatInt(int64(r.t-r.lag), 10))
	}
	if r.class == "ok" {
		h.Set(outcome.HeaderOutcome, outcome.OK)
		return h
	}
	h.Set(outcome.HeaderDependency, r.dep)
	if r.pool != "" {
		h.Set(outcome.HeaderPool, r.pool)
	}
	if r.reason != "" {
		h.Set(outcome.HeaderReason, r.reason)
	}
	return h
}

// Standard phases of the hypothesis world: severe latency on A, fast errors from A, and a mild
// latency on A under which /a needs more slots than its split pool has.
var hypPhases = []rundir.Phase{
	{Name: "baseline", Start: 0, End: 10 * time.Second},
	{Name: "slow-a", Start: 10 * time.Second, End: 20 * time.Second, Faults: []faults.Fault{
		{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 450 * time.Millisecond}, AppliedAt: 10 * time.Second, RemovedAt: 20 * time.Second}}},
	{Name: "errors-a", Start: 20 * time.Second, End: 30 * time.Second, Faults: []faults.Fault{
		{Dependency: "A", Type: "reset", Params: &faults.Reset{}, AppliedAt: 20 * time.Second, RemovedAt: 30 * time.Second}}},
	{Name: "mild-a", Start: 30 * time.Second, End: 40 * time.Second, Faults: []faults.Fault{
		{Dependency: "A", Type: "latency", Params: &faults.Latency{Latency: 300 * time.Millisecond}, AppliedAt: 30 * time.Second, RemovedAt: 40 * time.Second}}},
}

const ms_ = time.Millisecond

// hypothesis returns a world in which every prediction holds; tests change one profile at a time.
func hypothesis() world {
	ok := func(lat time.Duration) prof { return prof{lat: lat} }
	return world{phases: hypPhases, rate: 20, timeout: 500 * ms_, cfgs: []cfgDef{
		{name: "shared", mode: outcome.ModeShared, pools: sharedPools(10), valid: true, profiles: map[string]map[string]prof{
			"baseline": {"/a": ok(20 * ms_), "/b": ok(20 * ms_)},
			"slow-a": {"/a": {lat: 460 * ms_, fail: 0.5, failClass: "rejected:full", failLat: ms_},
				"/b": {lat: 300 * ms_, fail: 0.45, failClass: "rejected:full", failLat: ms_}},
			"errors-a": {"/a": {fail: 1, failClass: "upstream:reset", failLat: 2 * ms_}, "/b": ok(20 * ms_)},
			"mild-a":   {"/a": ok(320 * ms_), "/b": ok(20 * ms_)},
		}},
		{name: "split", mode: outcome.ModeSplit, pools: splitPools(5), valid: true, profiles: map[string]map[string]prof{
			"baseline": {"/a": ok(20 * ms_), "/b": ok(20 * ms_)},
			"slow-a":   {"/a": {lat: 460 * ms_, fail: 0.6, failClass: "rejected:full", failLat: ms_}, "/b": ok(21 * ms_)},
			"errors-a": {"/a": {fail: 1, failClass: "upstream:reset", failLat: 2 * ms_}, "/b": ok(20 * ms_)},
			"mild-a":   {"/a": {lat: 320 * ms_, fail: 0.22, failClass: "rejected:full", failLat: ms_}, "/b": ok(20 * ms_)},
		}},
	}}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// generate is Generate, with the plots drawn only when plots is true (drawing them is most of a
// report's time, and most tests read summary.json and report.md only).
//
// It seals the folder first (rundirtest.Seal), so that a test may add or change files after
// writing its world, as a runner would have written them.
func generate(t testing.TB, dir string, plots bool) (*model.Summary, error) {
	t.Helper()
	rundirtest.Seal(t, dir)
	outs := []output.Output{output.Markdown{}, output.JSON{}}
	if plots {
		outs = append([]output.Output{output.Plots{}}, outs...)
	}
	return GenerateWith(dir, Options{Outputs: outs})
}
