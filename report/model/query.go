package model

import (
	"slices"
	"time"
)

// GroupNames returns the configuration names of cfgs (without repetition suffix), in the order
// they first appear.
func GroupNames(cfgs []Configuration) []string {
	var names []string
	for _, c := range cfgs {
		if !slices.Contains(names, c.Config) {
			names = append(names, c.Config)
		}
	}
	return names
}

// Group returns the configuration runs of configuration name (one per repetition), in order.
func Group(cfgs []Configuration, name string) []*Configuration {
	var out []*Configuration
	for i := range cfgs {
		if cfgs[i].Config == name {
			out = append(out, &cfgs[i])
		}
	}
	return out
}

// FirstOfEachConfig returns the first repetition of each configuration.
func FirstOfEachConfig(cfgs []Configuration) []*Configuration {
	var out []*Configuration
	for _, name := range GroupNames(cfgs) {
		out = append(out, Group(cfgs, name)[0])
	}
	return out
}

// Repetitions returns the configuration runs of configuration config, one per repetition, in
// order (none when the run has no such configuration).
func (s *Summary) Repetitions(config string) []*Configuration { return Group(s.Configurations, config) }

// BucketWidth returns the width of the time buckets (BucketS), DefaultBucket when unset.
func (s *Summary) BucketWidth() time.Duration {
	w := time.Duration(s.BucketS * float64(time.Second))
	if w <= 0 {
		w = DefaultBucket
	}
	return w
}

// WorstLagP99MS is the largest send-lag p99 (ms) of c's endpoints: how late the run's timers
// fired at its worst, as its load generators saw it.
func (c *Configuration) WorstLagP99MS() float64 {
	worst := 0.0
	for _, e := range c.Endpoints {
		worst = max(worst, e.LagP99MS)
	}
	return worst
}

// Phase returns c's phase called name, nil when there is none.
func (c *Configuration) Phase(name string) *Phase {
	for i := range c.Phases {
		if c.Phases[i].Name == name {
			return &c.Phases[i]
		}
	}
	return nil
}

// Members maps every grouped endpoint of c to its group's name.
func (c *Configuration) Members() map[string]string {
	m := map[string]string{}
	for _, g := range c.EndpointGroups {
		for _, p := range g.Members {
			m[p] = g.Name
		}
	}
	return m
}

// ViewPaths is what tables and plots list for c: the endpoints, or, when grouped, the endpoints
// left on their own followed by the groups (nil without groups).
func (c *Configuration) ViewPaths() []string {
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

// EndpointPaths lists c's endpoints as tables and plots show them: ViewPaths when grouped, else
// every endpoint in order.
func (c *Configuration) EndpointPaths() []string {
	if v := c.ViewPaths(); v != nil {
		return v
	}
	var ps []string
	for _, e := range c.Endpoints {
		ps = append(ps, e.Path)
	}
	return ps
}

// GroupDeps returns the dependencies called by grouped endpoints of c (empty without groups).
func (c *Configuration) GroupDeps() map[string]bool {
	member := c.Members()
	deps := map[string]bool{}
	for _, e := range c.Endpoints {
		if member[e.Path] != "" {
			for _, d := range e.Calls {
				deps[d] = true
			}
		}
	}
	return deps
}

// Grouped reports whether any configuration of cfgs has endpoint groups.
func Grouped(cfgs []Configuration) bool {
	for _, c := range cfgs {
		if len(c.EndpointGroups) > 0 {
			return true
		}
	}
	return false
}

// GroupPool reports whether pool p holds only dependencies of a group (deps).
func GroupPool(p PoolInfo, deps map[string]bool) bool {
	return len(p.Dependencies) > 0 && !slices.ContainsFunc(p.Dependencies, func(d string) bool { return !deps[d] })
}
