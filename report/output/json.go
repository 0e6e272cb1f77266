package output

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// JSON writes summary.json: the Summary as other tools read it.
type JSON struct {
	// MemberStats keeps, for a run whose endpoints were grouped (more than eight endpoints: the
	// faulted ones alone, the rest as "others (N)"), every member's attack, pools, per-phase
	// statistics and aggregates in summary.json. Off by default: for seed 003's 500 partners they
	// make summary.json about 12 MB, against well under 1 MB with the groups' figures alone.
	// report.md and the plots show groups either way.
	MemberStats bool
}

// Name is "json".
func (JSON) Name() string { return "json" }

// Write writes dir/summary.json atomically.
func (o JSON) Write(s *model.Summary, dir string) error {
	js := s
	if !o.MemberStats {
		js = withoutMembers(s)
	}
	if err := rundir.WriteJSON(filepath.Join(dir, rundir.SummaryFile), js); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// VerdictJSON prints summary.json's verdict block, indented, for scripts (what --json puts on
// stdout).
type VerdictJSON struct {
	// W receives the block; nil prints nothing.
	W io.Writer
}

// Name is "verdict-json".
func (VerdictJSON) Name() string { return "verdict-json" }

// Write prints s.Verdict as indented JSON and a newline.
func (o VerdictJSON) Write(s *model.Summary, _ string) error {
	if o.W == nil {
		return nil
	}
	b, err := json.MarshalIndent(s.Verdict, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(o.W, "%s\n", b)
	return err
}

// memberNote is summary.json's note on a grouped run whose members' details were left out.
const memberNote = "per-member statistics omitted: the endpoint groups' statistics are kept (exact, over their pooled requests) " +
	"with each group's attacks and pools summed up; `bulkhead report --member-stats` keeps every member's"

// withoutMembers returns a copy of s for summary.json in which grouped members appear only through
// their group: their attacks, pools, per-phase statistics and aggregates are left out, and the
// failure attribution of their requests is summed under the group. s is not changed. A run
// without groups is returned as it is.
func withoutMembers(s *model.Summary) *model.Summary {
	grouped := false
	for _, c := range s.Configurations {
		grouped = grouped || len(c.EndpointGroups) > 0
	}
	if !grouped {
		return s
	}
	out := *s
	out.MemberStats = memberNote
	out.Configurations = make([]model.Configuration, len(s.Configurations))
	groupOf := map[string]string{} // member -> group, over every configuration
	for i, c := range s.Configurations {
		member := map[string]string{}
		deps := map[string]bool{}
		for _, g := range c.EndpointGroups {
			for _, m := range g.Members {
				member[m], groupOf[m] = g.Name, g.Name
			}
		}
		var eps []model.EndpointRun
		for _, e := range c.Endpoints {
			if member[e.Path] == "" {
				eps = append(eps, e)
				continue
			}
			for _, d := range e.Calls {
				deps[d] = true
			}
		}
		var pools []model.PoolInfo
		for _, p := range c.Pools {
			if !model.GroupPool(p, deps) {
				pools = append(pools, p)
			}
		}
		c.Endpoints, c.Pools = eps, pools
		phases := make([]model.Phase, len(c.Phases))
		for pi, ph := range c.Phases {
			kept := map[string]*model.Stats{}
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
	out.Aggregates = make([]model.Aggregate, len(s.Aggregates))
	for i, a := range s.Aggregates {
		phases := make([]model.AggregatePhase, len(a.Phases))
		for pi, ph := range a.Phases {
			kept := map[string]map[string]model.Figure{}
			for ep, f := range ph.Endpoints {
				if groupOf[ep] == "" {
					kept[ep] = f
				}
			}
			phases[pi] = model.AggregatePhase{Name: ph.Name, Endpoints: kept}
		}
		a.Phases = phases
		out.Aggregates[i] = a
	}
	return &out
}
