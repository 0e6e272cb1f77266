package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/claim"
)

// Overrides are the command line's changes to a scenario (`bulkhead run --rate --scale --only
// --repetitions --lag-limit`). The zero value changes nothing. A run records them in run.json
// beside the scenario as run, so the folder says both what was asked and what ran.
type Overrides struct {
	// Rate, when > 0, replaces load.rate and every endpoint's own rate (requests per second).
	// Phases' rates: blocks (bursts, silences) are kept.
	Rate float64 `json:"rate,omitempty"`
	// Scale, when > 0 and not 1, multiplies every phase's duration.
	Scale float64 `json:"scale,omitempty"`
	// Only, when not empty, keeps these configurations (by name, in the file's order); claims
	// about the others are left out, since they cannot be judged.
	Only []string `json:"only,omitempty"`
	// Repetitions, when > 0, replaces repetitions.
	Repetitions int `json:"repetitions,omitempty"`
	// LagLimit, when > 0, replaces load.lag_limit.
	LagLimit time.Duration `json:"lag_limit_ns,omitempty"`
}

// IsZero reports whether o changes nothing.
func (o Overrides) IsZero() bool {
	return o.Rate == 0 && (o.Scale == 0 || o.Scale == 1) && len(o.Only) == 0 && o.Repetitions == 0 && o.LagLimit == 0
}

// Override applies o to s in place and validates the result. It returns the claims it left out
// (about configurations --only dropped). An override that makes no sense (a negative scale, a
// configuration that does not exist) or a result that does not validate is an error naming the
// flag's field; s is then unchanged. It does not block.
func (s *Scenario) Override(o Overrides) (dropped []claim.Claim, err error) {
	if err := o.check(s); err != nil {
		return nil, err
	}
	next := s.clone()
	if o.Rate > 0 {
		next.Load.Rate = o.Rate
		next.Load.Rates = nil
		for i := range next.Endpoints {
			next.Endpoints[i].Rate = o.Rate
		}
	}
	if o.Scale > 0 && o.Scale != 1 {
		for i := range next.Phases {
			next.Phases[i].Duration = time.Duration(float64(next.Phases[i].Duration) * o.Scale)
		}
	}
	if o.Repetitions > 0 {
		next.Repetitions = o.Repetitions
	}
	if o.LagLimit > 0 {
		next.Load.LagLimit = o.LagLimit
	}
	if len(o.Only) > 0 {
		dropped = next.keepOnly(o.Only)
	}
	if err := next.Validate(); err != nil {
		return nil, fmt.Errorf("after overrides: %w", err)
	}
	*s = *next
	return dropped, nil
}

func (o Overrides) check(s *Scenario) error {
	switch {
	case o.Rate < 0:
		return fmt.Errorf("rate: must be > 0, got %g", o.Rate)
	case o.Scale < 0:
		return fmt.Errorf("scale: must be > 0, got %g", o.Scale)
	case o.Repetitions < 0:
		return fmt.Errorf("repetitions: must be > 0, got %d", o.Repetitions)
	case o.LagLimit < 0:
		return fmt.Errorf("lag_limit: must be > 0, got %s", o.LagLimit)
	}
	for _, name := range o.Only {
		if !slices.ContainsFunc(s.Configurations, func(c Configuration) bool { return c.Name == name }) {
			var names []string
			for _, c := range s.Configurations {
				names = append(names, c.Name)
			}
			return fmt.Errorf("only: no configuration %q in %s (have: %s)", name, s.Path, strings.Join(names, ", "))
		}
	}
	return nil
}

// keepOnly keeps the named configurations, the claims that only name kept ones and the roles
// that do, and returns the claims it dropped.
func (s *Scenario) keepOnly(names []string) (dropped []claim.Claim) {
	var keep []Configuration
	index := map[int]int{} // old configuration index -> new
	for i, c := range s.Configurations {
		if slices.Contains(names, c.Name) {
			index[i] = len(keep)
			keep = append(keep, c)
		}
	}
	s.Configurations = keep
	// What the loader resolved and where each field was written are keyed by field path: the
	// kept configurations' entries move to their new index, the others' go.
	s.Resolved = reindexConfigurations(s.Resolved, index)
	s.lines = reindexConfigurations(s.lines, index)
	kept := func(name string) bool { return slices.Contains(names, name) }
	var claims []claim.Claim
	for _, c := range s.Claims {
		// Every configuration the claim names: its measure, than, their minus:/over:, and its
		// preconditions.
		if !slices.ContainsFunc(c.Configurations(), func(n string) bool { return !kept(n) }) {
			claims = append(claims, c)
		} else {
			dropped = append(dropped, c)
		}
	}
	s.Claims = claims
	// Roles naming a configuration that will not run are left out the same way.
	s.Roles = s.Roles.Keep(kept)
	return dropped
}

// reindexConfigurations returns m with its "configurations[i]..." keys moved to
// "configurations[index[i]]...", and those of a configuration index leaves out removed; other
// keys are kept.
func reindexConfigurations[V any](m map[string]V, index map[int]int) map[string]V {
	if m == nil {
		return nil
	}
	out := make(map[string]V, len(m))
	for k, v := range m {
		var i int
		if n, _ := fmt.Sscanf(k, "configurations[%d]", &i); n == 1 {
			j, ok := index[i]
			if !ok {
				continue
			}
			k = fmt.Sprintf("configurations[%d]", j) + k[strings.Index(k, "]")+1:]
		}
		out[k] = v
	}
	return out
}

// clone copies s deeply enough for Override: the slices and maps it changes are new.
func (s *Scenario) clone() *Scenario {
	c := *s
	c.Endpoints = slices.Clone(s.Endpoints)
	c.Phases = slices.Clone(s.Phases)
	c.Configurations = slices.Clone(s.Configurations)
	c.Claims = slices.Clone(s.Claims)
	return &c
}

// Marshal writes s as a scenario file with every default, relative amount and shorthand
// resolved: loading it gives the same scenario (what a run records as the scenario as run).
func (s *Scenario) Marshal() ([]byte, error) {
	out, err := yaml.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("write scenario %s: %w", s.Name, err)
	}
	head := fmt.Sprintf("# The scenario as run: %s with defaults, relative amounts and overrides resolved.\n", s.Path)
	return append([]byte(head), out...), nil
}
