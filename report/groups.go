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
// Tables (settings and validity included, one row per group with its members summed up), plots
// and the roles then use the group, and the members' invalid reasons fold into one reason per
// group. summary.json keeps the group's statistics, timeline and summed attacks and pools but
// leaves out the members' own (GenerateOptions.MemberStats keeps them: for 500 partners they are
// about 12 MB). Resources are grouped the same way: pool:<member>,
// queue:<member>, conns:<member> and calls:<member> of the pooled members become one resource
// per prefix whose in-use is the largest member's and whose rejections are the members' sum.

// groupFrom is the number of endpoints above which the report groups them.
const groupFrom = 8

// EndpointGroup is a set of endpoints reported together, with their attacks and pools summed
// up: what the settings and validity tables show in one row instead of one per member.
type EndpointGroup struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
	// Dependencies is the number of dependencies the members call.
	Dependencies int `json:"dependencies"`
	// RateMin and RateMax bound the members' rates (requests per second each); Arrivals lists
	// their arrival processes; TimeoutMS is the largest load generator timeout.
	RateMin   float64  `json:"rate_min"`
	RateMax   float64  `json:"rate_max"`
	Arrivals  []string `json:"arrivals"`
	TimeoutMS float64  `json:"timeout_ms"`
	// Scheduled, Sent and Dropped are the members' sums.
	Scheduled uint64 `json:"scheduled"`
	Sent      uint64 `json:"sent"`
	Dropped   uint64 `json:"dropped"`
	// LagP99MS is the largest send lag p99 of a member, LagWorst that member; LagMaxMS the
	// largest send lag of any member.
	LagP99MS float64 `json:"lag_p99_ms_max"`
	LagWorst string  `json:"lag_worst"`
	LagMaxMS float64 `json:"lag_max_ms"`
	// InvalidMembers are the members the configuration's invalid reasons name; their reasons are
	// folded into one reason naming the group (the manifest keeps every reason).
	InvalidMembers []string `json:"invalid_members,omitempty"`
	// Pools summarises the pools that hold only the members' dependencies.
	Pools GroupPools `json:"pools"`
}

// GroupPools summarises a group's pools.
type GroupPools struct {
	Count     int      `json:"count"`
	Kinds     []string `json:"kinds,omitempty"`
	SizeMin   int      `json:"size_min"`
	SizeMax   int      `json:"size_max"`
	QueueMin  int      `json:"queue_min"`
	QueueMax  int      `json:"queue_max"`
	MaxWaitMS float64  `json:"max_wait_ms_max"`
}

// summarizeGroups fills each group of c with its members' attacks and pools, and folds the
// members' invalid reasons into one reason per group (a hub of 500 lagging partners would
// otherwise list 500 reasons wherever the run's validity is stated).
func summarizeGroups(c *Configuration) {
	for gi := range c.EndpointGroups {
		g := &c.EndpointGroups[gi]
		in := map[string]bool{}
		for _, m := range g.Members {
			in[m] = true
		}
		deps := map[string]bool{}
		first := true
		for _, e := range c.Endpoints {
			if !in[e.Path] {
				continue
			}
			for _, d := range e.Calls {
				deps[d] = true
			}
			if first || e.Rate < g.RateMin {
				g.RateMin = e.Rate
			}
			if first || e.Rate > g.RateMax {
				g.RateMax = e.Rate
			}
			first = false
			if !slices.Contains(g.Arrivals, e.Arrivals) {
				g.Arrivals = append(g.Arrivals, e.Arrivals)
			}
			g.TimeoutMS = max(g.TimeoutMS, e.TimeoutMS)
			g.Scheduled += e.Scheduled
			g.Sent += e.Sent
			g.Dropped += e.Dropped
			if e.LagP99MS > g.LagP99MS || g.LagWorst == "" {
				g.LagP99MS, g.LagWorst = e.LagP99MS, e.Path
			}
			g.LagMaxMS = max(g.LagMaxMS, e.LagMaxMS)
		}
		g.Dependencies = len(deps)
		g.Pools = GroupPools{}
		for _, p := range c.Pools {
			if !groupPool(p, deps) {
				continue
			}
			gp := &g.Pools
			if gp.Count == 0 {
				gp.SizeMin, gp.SizeMax, gp.QueueMin, gp.QueueMax = p.Size, p.Size, p.Queue, p.Queue
			}
			gp.Count++
			if !slices.Contains(gp.Kinds, p.Kind) {
				gp.Kinds = append(gp.Kinds, p.Kind)
			}
			gp.SizeMin, gp.SizeMax = min(gp.SizeMin, p.Size), max(gp.SizeMax, p.Size)
			gp.QueueMin, gp.QueueMax = min(gp.QueueMin, p.Queue), max(gp.QueueMax, p.Queue)
			gp.MaxWaitMS = max(gp.MaxWaitMS, p.MaxWaitMS)
		}
		c.Invalid = foldReasons(c.Invalid, g)
	}
}

// groupPool reports whether pool p holds only dependencies of the group (deps).
func groupPool(p PoolInfo, deps map[string]bool) bool {
	return len(p.Dependencies) > 0 && !slices.ContainsFunc(p.Dependencies, func(d string) bool { return !deps[d] })
}

// foldReasons replaces the reasons that name a member of g ("<path>: ...") by one reason naming
// the group, the count, the first member's reason as an example and the worst send lag; it
// records the members in g.InvalidMembers.
func foldReasons(reasons []string, g *EndpointGroup) []string {
	in := map[string]bool{}
	for _, m := range g.Members {
		in[m] = true
	}
	g.InvalidMembers = nil
	var out []string
	example, at := "", -1
	for _, r := range reasons {
		path, _, ok := strings.Cut(r, ": ")
		if !ok || !in[path] {
			out = append(out, r)
			continue
		}
		if !slices.Contains(g.InvalidMembers, path) {
			g.InvalidMembers = append(g.InvalidMembers, path)
		}
		if example == "" {
			example, at = r, len(out)
			out = append(out, "") // the group's reason goes where its first member's was
		}
	}
	if at < 0 {
		return reasons
	}
	out[at] = fmt.Sprintf("%s: %d of %d members invalid (worst send lag p99 %.2f ms, %s), e.g. %s",
		g.Name, len(g.InvalidMembers), len(g.Members), g.LagP99MS, g.LagWorst, example)
	return out
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
func (g *grouper) finish(c *Configuration, outs []kind, spans [][2]time.Duration, s *scratch) {
	if g == nil {
		return
	}
	slices.SortFunc(g.recs, func(a, b record) int { return cmpInt(a.t, b.t) })
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Endpoints[g.name] = computeStats(span(g.recs, int64(ph.start), int64(ph.end)), outs, ph.end-ph.start, s)
	}
	c.Timeline[g.name] = timelineOf(g.recs, spans, outs, s)
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
		// Interval figures: the busiest member's. The group's time at capacity (any member at
		// capacity) is at least the longest member's, which is what it shows.
		if r.Exact() {
			if !m.Exact() || r.FirstAtCapacity >= 0 && (m.FirstAtCapacity < 0 || r.FirstAtCapacity < m.FirstAtCapacity) {
				m.FirstAtCapacity = r.FirstAtCapacity
			}
			m.Interval = max(m.Interval, r.Interval)
			m.MeanInUse = max(m.MeanInUse, r.MeanInUse)
			m.MaxInUse = max(m.MaxInUse, r.MaxInUse)
			m.AtCapacity = max(m.AtCapacity, r.AtCapacity)
		}
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
	together := "service, embedded Toxiproxy, fake dependencies and load generator share one process"
	if cfgs[0].Load == "process" {
		together = "service, embedded Toxiproxy and fake dependencies share one process; the load generator ran in its own"
	}
	w("Here every figure is process-wide (%s), so a layout's own cost is the difference between configurations run the same way.\n\n", together)
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

// memberNote is summary.json's note on a grouped run whose members' details were left out.
const memberNote = "per-member statistics omitted: the endpoint groups' statistics are kept (exact, over their pooled requests) " +
	"with each group's attacks and pools summed up; `bulkhead report --member-stats` keeps every member's"

// withoutMembers returns a copy of s for summary.json in which grouped members appear only through
// their group: their attacks, pools, per-phase statistics and aggregates are left out, and the
// failure attribution of their requests is summed under the group. s is not changed. A run
// without groups is returned as it is.
func (s *Summary) withoutMembers() *Summary {
	grouped := false
	for _, c := range s.Configurations {
		grouped = grouped || len(c.EndpointGroups) > 0
	}
	if !grouped {
		return s
	}
	out := *s
	out.MemberStats = memberNote
	out.Configurations = make([]Configuration, len(s.Configurations))
	groupOf := map[string]string{} // member -> group, over every configuration
	for i, c := range s.Configurations {
		member := map[string]string{}
		deps := map[string]bool{}
		for _, g := range c.EndpointGroups {
			for _, m := range g.Members {
				member[m], groupOf[m] = g.Name, g.Name
			}
		}
		var eps []EndpointRun
		for _, e := range c.Endpoints {
			if member[e.Path] == "" {
				eps = append(eps, e)
				continue
			}
			for _, d := range e.Calls {
				deps[d] = true
			}
		}
		var pools []PoolInfo
		for _, p := range c.Pools {
			if !groupPool(p, deps) {
				pools = append(pools, p)
			}
		}
		c.Endpoints, c.Pools = eps, pools
		phases := make([]Phase, len(c.Phases))
		for pi, ph := range c.Phases {
			kept := map[string]*Stats{}
			for ep, st := range ph.Endpoints {
				if member[ep] == "" {
					kept[ep] = st
				}
			}
			ph.Endpoints = kept
			if ph.Cause != nil {
				cause := *ph.Cause
				cause.ByEndpoint = map[string]map[string]int{}
				for ep, byRes := range ph.Cause.ByEndpoint {
					name := ep
					if g := member[ep]; g != "" {
						name = g
					}
					if cause.ByEndpoint[name] == nil {
						cause.ByEndpoint[name] = map[string]int{}
					}
					for r, n := range byRes {
						cause.ByEndpoint[name][r] += n
					}
				}
				ph.Cause = &cause
			}
			phases[pi] = ph
		}
		c.Phases = phases
		out.Configurations[i] = c
	}
	out.Aggregates = make([]Aggregate, len(s.Aggregates))
	for i, a := range s.Aggregates {
		phases := make([]AggregatePhase, len(a.Phases))
		for pi, ph := range a.Phases {
			kept := map[string]map[string]Figure{}
			for ep, f := range ph.Endpoints {
				if groupOf[ep] == "" {
					kept[ep] = f
				}
			}
			phases[pi] = AggregatePhase{Name: ph.Name, Endpoints: kept}
		}
		a.Phases = phases
		out.Aggregates[i] = a
	}
	return &out
}
