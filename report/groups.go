package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// A scenario with many endpoints (seed 003's hub of 500 partners) would give tables of thousands
// of rows and a plot per endpoint. Past groupFrom endpoints the report groups them: every
// endpoint that calls a faulted dependency stays on its own, and the rest are pooled into one
// group, "others (N)", whose statistics and timeline are computed over all their requests
// together (exact quantiles of the pooled requests, not an average of per-endpoint figures).
// Tables, plots and the roles then use the group; summary.json keeps every member's per-phase
// statistics but only the group's timeline. Resources are grouped the same way: pool:<member>,
// queue:<member>, conns:<member> and calls:<member> of the pooled members become one resource
// per prefix whose in-use is the largest member's and whose rejections are the members' sum.

// groupFrom is the number of endpoints above which the report groups them.
const groupFrom = 8

// EndpointGroup is a set of endpoints reported together.
type EndpointGroup struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

// Memory is one configuration's process memory and goroutines over its time line, from the
// resource samples (process-wide: the service, the embedded Toxiproxy, the fake dependencies and
// the load generator share the process).
type Memory struct {
	Samples         int     `json:"samples"`
	GoroutinesMean  float64 `json:"goroutines_mean"`
	GoroutinesMax   int     `json:"goroutines_max"`
	HeapBytesMean   float64 `json:"heap_bytes_mean"`
	HeapBytesMax    int     `json:"heap_bytes_max"`
	StackBytesMean  float64 `json:"stack_bytes_mean"`
	StackBytesMax   int     `json:"stack_bytes_max"`
	WorkerPools     int     `json:"worker_pools"`
	WorkerPoolSlots int     `json:"worker_goroutines"` // sum of worker pool sizes: goroutines the layout owns
	SemaphoreSlots  int     `json:"semaphore_permits"` // sum of semaphore pool sizes
}

// grouper collects the requests of the pooled endpoints of one configuration.
type grouper struct {
	name    string
	members map[string]bool
	deps    map[string]bool // dependencies the members call
	recs    []record
}

// newGrouper decides the grouping of c's endpoints (calls maps endpoint to dependencies); nil
// when there are groupFrom endpoints or fewer, or nothing to pool.
func newGrouper(c *Configuration, endpoints []rundir.Endpoint, calls map[string][]string) *grouper {
	if len(endpoints) <= groupFrom {
		return nil
	}
	faulted := faultedDeps(c)
	g := &grouper{members: map[string]bool{}, deps: map[string]bool{}}
	var members []string
	for _, e := range endpoints {
		if !slices.ContainsFunc(calls[e.Path], func(d string) bool { return faulted[d] }) {
			g.members[e.Path] = true
			members = append(members, e.Path)
			for _, d := range calls[e.Path] {
				g.deps[d] = true
			}
		}
	}
	if len(members) < 2 {
		return nil
	}
	g.name = fmt.Sprintf("others (%d)", len(members))
	c.EndpointGroups = append(c.EndpointGroups, EndpointGroup{Name: g.name, Members: members})
	return g
}

func faultedDeps(c *Configuration) map[string]bool {
	f := map[string]bool{}
	for _, ph := range c.Phases {
		for _, x := range ph.Faults {
			f[x.Dependency] = true
		}
	}
	return f
}

// add keeps a member's requests for the group; it reports whether path is a member.
func (g *grouper) add(path string, recs []record) bool {
	if g == nil || !g.members[path] {
		return false
	}
	g.recs = append(g.recs, recs...)
	return true
}

// finish computes the group's per-phase statistics and timeline into c and drops the members'
// timelines.
func (g *grouper) finish(c *Configuration, outs []outcome, nb int, bucket time.Duration, s *scratch) {
	if g == nil {
		return
	}
	slices.SortFunc(g.recs, func(a, b record) int { return cmpInt(a.t, b.t) })
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Endpoints[g.name] = computeStats(span(g.recs, int64(ph.start), int64(ph.end)), outs, ph.end-ph.start, s)
	}
	buckets := make([]Bucket, nb)
	for b := range nb {
		from := time.Duration(b) * bucket
		buckets[b] = computeBucket(from.Seconds(), span(g.recs, int64(from), int64(from+bucket)), outs, bucket, s)
	}
	c.Timeline[g.name] = buckets
	for m := range g.members {
		delete(c.Timeline, m)
	}
	g.recs = nil
}

// groupResources groups c's resource samples (before the exhausted-resource analysis reads them).
func (g *grouper) groupResources(c *Configuration) {
	c.resources = groupResources(c.resources, g.name, g.deps, c.Pools)
}

// groupResources merges the resources of the pooled dependencies, and of the pools holding only
// pooled dependencies, into one resource per prefix ("pool:others (499)"), sample by sample:
// in-use and capacity are the largest member's, rejections the members' sum.
func groupResources(rs []rundir.ResourceSample, name string, deps map[string]bool, pools []PoolInfo) []rundir.ResourceSample {
	pooled := map[string]bool{}
	for d := range deps {
		pooled[d] = true
	}
	for _, p := range pools {
		if len(p.Dependencies) > 0 && !slices.ContainsFunc(p.Dependencies, func(d string) bool { return !deps[d] }) {
			pooled[p.Name] = true
		}
	}
	out := make([]rundir.ResourceSample, 0, len(rs)/max(len(pooled), 1)+16)
	at := map[string]int{} // merged resource -> index in out, for the current sample time
	var t time.Duration = -1
	for _, r := range rs {
		if r.T != t {
			t = r.T
			clear(at)
		}
		prefix, member, ok := strings.Cut(r.Resource, ":")
		if !ok || !pooled[member] {
			out = append(out, r)
			continue
		}
		key := prefix + ":" + name
		i, seen := at[key]
		if !seen {
			at[key] = len(out)
			r.Resource = key
			out = append(out, r)
			continue
		}
		m := &out[i]
		m.InUse = max(m.InUse, r.InUse)
		m.Capacity = max(m.Capacity, r.Capacity)
		m.Rejected += r.Rejected
	}
	return out
}

// viewPaths is what tables and plots list for c: the endpoints, or, when grouped, the endpoints
// left on their own followed by the groups.
func viewPaths(c *Configuration) []string {
	if len(c.EndpointGroups) == 0 {
		return nil
	}
	in := map[string]bool{}
	for _, g := range c.EndpointGroups {
		for _, m := range g.Members {
			in[m] = true
		}
	}
	var ps []string
	for _, e := range c.Endpoints {
		if !in[e.Path] {
			ps = append(ps, e.Path)
		}
	}
	for _, g := range c.EndpointGroups {
		ps = append(ps, g.Name)
	}
	return ps
}

// groupRoles replaces grouped endpoints in the roles by their group.
func (s *Summary) groupRoles() {
	if len(s.Configurations) == 0 || len(s.Configurations[0].EndpointGroups) == 0 {
		return
	}
	s.Roles.Affected = groupList(s.Roles.Affected, s.Configurations[0].EndpointGroups)
	s.Roles.Unaffected = groupList(s.Roles.Unaffected, s.Configurations[0].EndpointGroups)
}

func groupList(paths []string, groups []EndpointGroup) []string {
	var out []string
	for _, p := range paths {
		name := p
		for _, g := range groups {
			if slices.Contains(g.Members, p) {
				name = g.Name
			}
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// memoryOf summarises the process-wide goroutines, heap and stacks of c's resource samples.
func memoryOf(c *Configuration, rs []rundir.ResourceSample) *Memory {
	m := &Memory{}
	var g, h, st float64
	for _, r := range rs {
		switch r.Resource {
		case "goroutines":
			m.Samples++
			g += float64(r.InUse)
			m.GoroutinesMax = max(m.GoroutinesMax, r.InUse)
		case "heap-bytes":
			h += float64(r.InUse)
			m.HeapBytesMax = max(m.HeapBytesMax, r.InUse)
		case "stack-bytes":
			st += float64(r.InUse)
			m.StackBytesMax = max(m.StackBytesMax, r.InUse)
		}
	}
	if m.Samples == 0 || m.HeapBytesMax == 0 {
		return nil // a run from before the memory series
	}
	n := float64(m.Samples)
	m.GoroutinesMean, m.HeapBytesMean, m.StackBytesMean = g/n, h/n, st/n
	for _, p := range c.Pools {
		if p.Kind == "workers" {
			m.WorkerPools++
			m.WorkerPoolSlots += p.Size
		} else {
			m.SemaphoreSlots += p.Size
		}
	}
	return m
}

func mb(b float64) string { return fmt.Sprintf("%.1f MB", b/(1<<20)) }

// hubSection is report.md's section for a grouped scenario (seed 003's partner hub): memory and
// goroutines per configuration next to the seed's figures, and the isolation of the pooled
// endpoints from the faulted ones. Empty for a scenario that was not grouped.
func (s *Summary) hubSection() string {
	cfgs := firstOfEachConfig(s.Configurations)
	if len(cfgs) == 0 || len(cfgs[0].EndpointGroups) == 0 {
		return ""
	}
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("## Many dependencies: memory, goroutines and isolation\n\n")
	w("Seed 003 sizes a hub of 500 partners with 20 slots each: as Java thread pools, 10,000 threads x ~1 MB of stack = ~10 GB; as semaphores, 10,000 permits ~ 80 KB. ")
	w("Here every figure is process-wide (service, embedded Toxiproxy, fake dependencies and load generator share one process), so a layout's own cost is the difference between configurations run the same way.\n\n")
	w("| configuration | pools | worker goroutines owned | semaphore permits | goroutines mean (max) | heap mean (max) | stacks mean (max) |\n|---|---|---|---|---|---|---|\n")
	var sem, wrk *Configuration
	for _, c := range cfgs {
		m := c.Memory
		if m == nil {
			w("| %s | %d | | | no memory series in this run | | |\n", c.Name, len(c.Pools))
			continue
		}
		w("| %s | %d | %d | %d | %.0f (%d) | %s (%s) | %s (%s) |\n", c.Name, len(c.Pools), m.WorkerPoolSlots, m.SemaphoreSlots,
			m.GoroutinesMean, m.GoroutinesMax, mb(m.HeapBytesMean), mb(float64(m.HeapBytesMax)), mb(m.StackBytesMean), mb(float64(m.StackBytesMax)))
		switch {
		case m.WorkerPools == 0 && sem == nil:
			sem = c
		case m.WorkerPools > 0 && wrk == nil:
			wrk = c
		}
	}
	w("\n")
	if sem != nil && wrk != nil {
		ms, mw := sem.Memory, wrk.Memory
		dg := mw.GoroutinesMean - ms.GoroutinesMean
		ds := mw.StackBytesMean - ms.StackBytesMean
		dh := mw.HeapBytesMean - ms.HeapBytesMean
		w("The worker pools' own cost (%s minus %s, means over the time line): %+.0f goroutines (the layout owns %d), %s of stacks (%.1f KB per extra goroutine), %s of heap. ",
			wrk.Name, sem.Name, dg, mw.WorkerPoolSlots, mb(ds), ds/max(dg, 1)/1024, mb(dh))
		w("Seed 003's thread-pool figure for the same %d workers at ~1 MB per thread: %.1f GB. ", mw.WorkerPoolSlots, float64(mw.WorkerPoolSlots)/1024)
		w("A Go goroutine starts with a 2 KB stack that grows only as deep as its calls go, and an idle worker blocks on a channel without a kernel thread, so the seed's argument against thread pools (memory and context switches) shrinks from gigabytes to megabytes; ")
		w("the semaphore variant still owns no goroutine at all (%d permits are %d bytes of counters in service/bench_test.go's measurement), and its calls run on the request's own goroutine.\n\n", ms.SemaphoreSlots, 4*ms.SemaphoreSlots)
	}
	w("Isolation: the pooled endpoints against the faulted ones, per phase (exact quantiles over the pooled requests).\n\n")
	w("| configuration | phase | endpoint | requests | success | p50 (ms) | p99 (ms) | max (ms) |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range cfgs {
		for _, ph := range c.Phases {
			for _, ep := range viewPaths(c) {
				if st := ph.Endpoints[ep]; st != nil {
					w("| %s | %s | %s | %d | %.2f%% | %s | %s | %s |\n", c.Name, ph.Name, ep, st.Requests, 100*st.SuccessRate, f1(st.P50MS), f1(st.P99MS), f1(st.MaxMS))
				}
			}
		}
	}
	w("\n")
	return b.String()
}
