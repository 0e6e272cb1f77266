package ingest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
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
// leaves out the members' own (output.JSON's MemberStats keeps them: for 500 partners they are
// about 12 MB). Resources are grouped the same way: pool:<member>,
// queue:<member>, conns:<member> and calls:<member> of the pooled members become one resource
// per prefix whose in-use is the largest member's and whose rejections are the members' sum.

// groupFrom is the number of endpoints above which the report groups them.
const groupFrom = 8

// summarizeGroups fills each group of c with its members' attacks and pools, and folds the
// members' invalid reasons into one reason per group (a hub of 500 lagging partners would
// otherwise list 500 reasons wherever the run's validity is stated).
func summarizeGroups(c *model.Configuration) {
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
		g.Pools = model.GroupPools{}
		for _, p := range c.Pools {
			if !model.GroupPool(p, deps) {
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

// foldReasons replaces the reasons that name a member of g ("<path>: ...") by one reason naming
// the group, the count, the first member's reason as an example and the worst send lag; it
// records the members in g.InvalidMembers.
func foldReasons(reasons []string, g *model.EndpointGroup) []string {
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

// grouper collects the requests of the pooled endpoints of one configuration.
type grouper struct {
	name    string
	members map[string]bool
	deps    map[string]bool // dependencies the members call
	recs    []model.Record
}

// newGrouper decides the grouping of c's endpoints (calls maps endpoint to dependencies); nil
// when there are groupFrom endpoints or fewer, or nothing to pool.
func newGrouper(c *model.Configuration, endpoints []rundir.Endpoint, calls map[string][]string) *grouper {
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
	c.EndpointGroups = append(c.EndpointGroups, model.EndpointGroup{Name: g.name, Members: members})
	return g
}

func faultedDeps(c *model.Configuration) map[string]bool {
	f := map[string]bool{}
	for _, ph := range c.Phases {
		for _, x := range ph.Faults {
			f[x.Dependency] = true
		}
	}
	return f
}

// add keeps a member's requests for the group; it reports whether path is a member.
func (g *grouper) add(path string, recs []model.Record) bool {
	if g == nil || !g.members[path] {
		return false
	}
	g.recs = append(g.recs, recs...)
	return true
}

// finish computes the group's per-phase statistics and timeline into c, keeps the group's
// requests on c and drops the members' timelines.
func (g *grouper) finish(c *model.Configuration, outs []model.Kind, spans [][2]time.Duration, s *stats.Scratch) {
	if g == nil {
		return
	}
	model.SortByTime(g.recs)
	for i := range c.Phases {
		ph := &c.Phases[i]
		ph.Endpoints[g.name] = stats.Compute(model.Span(g.recs, int64(ph.Start), int64(ph.End)), outs, ph.End-ph.Start, s)
	}
	c.Timeline[g.name] = stats.Timeline(g.recs, spans, outs, s)
	for m := range g.members {
		delete(c.Timeline, m)
	}
	// The group's requests stay for the verdict engine: the headline shows a group's figures
	// with intervals (a group is the endpoints the faults should not touch).
	if c.Requests == nil {
		c.Requests = map[string][]model.Record{}
	}
	c.Requests[g.name] = g.recs
	g.recs = nil
}

// groupResources groups c's resource samples (before the exhausted-resource analysis reads them).
func (g *grouper) groupResources(c *model.Configuration) {
	c.Resources = groupResources(c.Resources, g.name, g.deps, c.Pools)
}

// groupResources merges the resources of the pooled dependencies, and of the pools holding only
// pooled dependencies, into one resource per prefix ("pool:others (499)"), sample by sample:
// in-use and capacity are the largest member's, rejections the members' sum.
func groupResources(rs []rundir.ResourceSample, name string, deps map[string]bool, pools []model.PoolInfo) []rundir.ResourceSample {
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

// groupRoles replaces grouped endpoints in the roles by their group.
func groupRoles(s *model.Summary) {
	if len(s.Configurations) == 0 || len(s.Configurations[0].EndpointGroups) == 0 {
		return
	}
	s.Roles.Affected = groupList(s.Roles.Affected, s.Configurations[0].EndpointGroups)
	s.Roles.Unaffected = groupList(s.Roles.Unaffected, s.Configurations[0].EndpointGroups)
}

func groupList(paths []string, groups []model.EndpointGroup) []string {
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
func memoryOf(c *model.Configuration, rs []rundir.ResourceSample) *model.Memory {
	m := &model.Memory{}
	var g, h, st float64
	for _, r := range rs {
		switch r.Resource {
		case "goroutines":
			m.Samples++
			g += r.InUse
			m.GoroutinesMax = max(m.GoroutinesMax, int(r.InUse))
		case "heap-bytes":
			h += r.InUse
			m.HeapBytesMax = max(m.HeapBytesMax, int(r.InUse))
		case "stack-bytes":
			st += r.InUse
			m.StackBytesMax = max(m.StackBytesMax, int(r.InUse))
		}
	}
	if m.Samples == 0 || m.HeapBytesMax == 0 {
		return nil // a run from before the memory series
	}
	n := float64(m.Samples)
	m.GoroutinesMean, m.HeapBytesMean, m.StackBytesMean = g/n, h/n, st/n
	for _, p := range c.Pools {
		if p.Goroutines > 0 { // a pool that owns goroutines (a workers pool) costs them
			m.WorkerPools++
			m.WorkerPoolSlots += p.Goroutines
		} else {
			m.SemaphoreSlots += p.Size
		}
	}
	return m
}
