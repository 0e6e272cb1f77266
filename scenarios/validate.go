package scenarios

import (
	"math"
	"regexp"
	"strings"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/service"
)

// namePattern is what names of scenarios, dependencies, configurations, pools and phases must
// match: they become folder names, proxy names and header values.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// Validate checks that the scenario can run and returns nil or every problem found, each a
// *FieldError (joined one per line, matching ErrInvalid) with the file and line it came from when
// the scenario was loaded. It does not change the scenario. Load calls it; call it again after
// changing fields (a new rate, scaled durations). Zero values that have a documented default
// (Seed, Repetitions, SampleEvery, Load.Arrivals, Load.Timeout, Pool.Kind, Endpoint.Deadline,
// Endpoint.Rate, Configuration.Mode) are accepted.
func (s *Scenario) Validate() error {
	return s.validate().err()
}

func (s *Scenario) validate() *problems {
	p := &problems{file: s.Path, lines: s.lines}
	s.checkName(p, "name", s.Name)
	if s.Timeout <= 0 {
		p.add("timeout", "must be > 0, got %v", s.Timeout)
	}
	if s.Repetitions < 0 {
		p.add("repetitions", "must be >= 0, got %d", s.Repetitions)
	}
	if s.SampleEvery < 0 {
		p.add("sample_every", "must be > 0, got %v", s.SampleEvery)
	}
	if s.Limits.MaxInboundConns < 0 {
		p.add("limits.max_inbound_conns", "must be >= 0 (0 = no cap), got %d", s.Limits.MaxInboundConns)
	}
	if s.Limits.MaxOutboundConns < 0 {
		p.add("limits.max_outbound_conns", "must be >= 0 (0 = no cap), got %d", s.Limits.MaxOutboundConns)
	}

	known := map[string]bool{}
	if len(s.Dependencies) == 0 {
		p.add("dependencies", "at least one dependency is needed")
	}
	for i, d := range s.Dependencies {
		path := index("dependencies", i)
		s.checkUniqueName(p, join(path, "name"), "dependency", d.Name, known)
		if d.Latency < 0 {
			p.add(join(path, "latency"), "must be >= 0, got %v", d.Latency)
		}
		if d.Jitter < 0 {
			p.add(join(path, "jitter"), "must be >= 0, got %v", d.Jitter)
		}
		if b := d.Breaker; b != nil {
			bp := join(path, "breaker")
			if b.SlowCallThreshold < 0 {
				p.add(join(bp, "slow_call_threshold"), "must be >= 0, got %v", b.SlowCallThreshold)
			}
			if b.OpenTimeout < 0 {
				p.add(join(bp, "open_timeout"), "must be >= 0, got %v", b.OpenTimeout)
			}
			if b.Interval < 0 {
				p.add(join(bp, "interval"), "must be >= 0, got %v", b.Interval)
			}
			if !(b.FailureRatio >= 0 && b.FailureRatio <= 1) {
				p.add(join(bp, "failure_ratio"), "must be between 0 and 1, got %v", b.FailureRatio)
			}
		}
	}
	knownList := s.knownList()

	if len(s.Endpoints) == 0 {
		p.add("endpoints", "at least one endpoint is needed")
	}
	paths := map[string]bool{}
	for i, e := range s.Endpoints {
		path := index("endpoints", i)
		switch {
		case !strings.HasPrefix(e.Path, "/") || strings.ContainsAny(e.Path, " \t\r\n?#"):
			p.add(join(path, "path"), "must start with / and hold no spaces, ? or #, got %q", e.Path)
		case paths[e.Path]:
			p.add(join(path, "path"), "duplicate endpoint %q", e.Path)
		}
		paths[e.Path] = true
		if len(e.Calls) == 0 {
			p.add(join(path, "calls"), "an endpoint must call at least one dependency")
		}
		seen := map[string]bool{}
		for j, c := range e.Calls {
			cp := index(join(path, "calls"), j)
			switch {
			case !known[c]:
				p.add(cp, "unknown dependency %q (known: %s)", c, knownList)
			case seen[c]:
				p.add(cp, "dependency %q called twice", c)
			}
			seen[c] = true
		}
		switch e.Deadline {
		case "", string(service.DeadlinePerCall), string(service.DeadlineShared):
		default:
			p.add(join(path, "deadline"), "unknown deadline %q (known: %s, %s)", e.Deadline, service.DeadlinePerCall, service.DeadlineShared)
		}
		if e.Rate < 0 || math.IsNaN(e.Rate) || math.IsInf(e.Rate, 0) {
			p.add(join(path, "rate"), "must be > 0, got %v", e.Rate)
		}
	}

	if !(s.Load.Rate > 0) || math.IsInf(s.Load.Rate, 0) {
		p.add("load.rate", "must be > 0, got %v", s.Load.Rate)
	}
	switch s.Load.Arrivals {
	case "", ArrivalsConstant, ArrivalsPoisson:
	default:
		p.add("load.arrivals", "unknown arrivals %q (known: %s, %s)", s.Load.Arrivals, ArrivalsConstant, ArrivalsPoisson)
	}
	switch {
	case s.Load.LagLimit < 0:
		p.add("load.lag_limit", "must be > 0, got %v", s.Load.LagLimit)
	case s.Load.Timeout < 0:
		p.add("load.timeout", "must be > 0, got %v", s.Load.Timeout)
	case s.Load.Timeout > 0 && s.Timeout > 0 && s.Load.Timeout <= s.Timeout:
		p.add("load.timeout", "%v must exceed the client timeout %v, or the load generator gives up before the service can answer", s.Load.Timeout, s.Timeout)
	}

	if len(s.Configurations) == 0 {
		p.add("configurations", "at least one configuration is needed")
	}
	names := map[string]bool{}
	for i, c := range s.Configurations {
		path := index("configurations", i)
		s.checkUniqueName(p, join(path, "name"), "configuration", c.Name, names)
		s.checkConfiguration(p, path, c, known)
	}

	if len(s.Phases) == 0 {
		p.add("phases", "at least one phase is needed")
	}
	names = map[string]bool{}
	for i, ph := range s.Phases {
		path := index("phases", i)
		s.checkUniqueName(p, join(path, "name"), "phase", ph.Name, names)
		if ph.Duration <= 0 {
			p.add(join(path, "duration"), "must be > 0, got %v", ph.Duration)
		}
		// Faults on one dependency add up; two of the same type and stream would be one toxic.
		type key struct {
			dep, typ string
			dir      faults.Direction
		}
		seen := map[key]bool{}
		for j, f := range ph.Faults {
			fp := index(join(path, "faults"), j)
			if !known[f.Dependency] {
				p.add(join(fp, "dependency"), "unknown dependency %q (known: %s)", f.Dependency, knownList)
			}
			k := key{f.Dependency, f.Type, faults.Direction(f.Direction.String())}
			if seen[k] {
				p.add(fp, "a second %s fault on %q in the same phase", f.Type, f.Dependency)
			}
			seen[k] = true
			for _, pr := range f.Check() {
				p.add(join(fp, pr.Field), "%s", pr.Reason)
			}
		}
	}
	s.checkInbound(p)
	s.checkRoles(p)
	s.checkClaims(p)
	return p
}

// checkName reports an empty or unusable name and returns whether it is usable.
func (s *Scenario) checkName(p *problems, path, name string) bool {
	if !namePattern.MatchString(name) {
		if name == "" {
			p.add(path, "must not be empty")
		} else {
			p.add(path, "%q: use letters, digits, '.', '_' and '-' (starting with a letter or digit)", name)
		}
		return false
	}
	return true
}

// checkUniqueName checks name like checkName and that no earlier item of the same kind used it;
// seen collects the valid names.
func (s *Scenario) checkUniqueName(p *problems, path, kind, name string, seen map[string]bool) {
	if !s.checkName(p, path, name) {
		return
	}
	if seen[name] {
		p.add(path, "duplicate %s %q", kind, name)
	}
	seen[name] = true
}

func (s *Scenario) knownList() string {
	names := s.DependencyNames()
	if len(names) == 0 {
		return "none declared"
	}
	return strings.Join(names, ", ")
}

// checkConfiguration checks one pool layout: each pool sound, every dependency in exactly one
// pool, and the mode consistent with the pools.
func (s *Scenario) checkConfiguration(p *problems, path string, c Configuration, known map[string]bool) {
	pp := join(path, "pools")
	mode := c.Mode
	switch service.Mode(mode) {
	case "":
		mode = inferMode(c.Pools, s.DependencyNames())
	case service.ModeShared, service.ModeSplit, service.ModeNone:
	default:
		p.add(join(path, "mode"), "unknown mode %q (known: shared, split, none)", c.Mode)
		return
	}
	switch service.Mode(mode) {
	case service.ModeNone:
		if len(c.Pools) > 0 {
			p.add(pp, "mode none admits every call at once and takes no pools, got %d", len(c.Pools))
		}
		return
	case service.ModeShared:
		if len(c.Pools) != 1 {
			p.add(pp, "mode shared needs exactly one pool covering every dependency, got %d pools (or write `pools: default` with size)", len(c.Pools))
		}
	case service.ModeSplit:
		if len(c.Pools) == 0 {
			p.add(pp, "mode split needs pools (or `pools: default` with size)")
		} else if len(c.Pools) == 1 && len(s.Dependencies) > 1 && coversAll(c.Pools[0], s.DependencyNames()) {
			p.add(pp, "mode split with one pool covering every dependency is a shared pool: write mode shared, or give each dependency (or group) its own pool")
		}
	}
	owner := map[string]string{}
	poolNames := map[string]bool{}
	for j, pl := range c.Pools {
		path := index(pp, j)
		s.checkUniqueName(p, join(path, "name"), "pool", pl.Name, poolNames)
		switch service.PoolKind(pl.Kind) {
		case "", service.KindSemaphore, service.KindWorkers:
		default:
			p.add(join(path, "kind"), "unknown pool kind %q (known: semaphore, workers)", pl.Kind)
		}
		if pl.Size <= 0 {
			p.add(join(path, "size"), "must be > 0, got %d", pl.Size)
		}
		if pl.Queue < 0 {
			p.add(join(path, "queue"), "must be >= 0 (0 = no waiting room), got %d", pl.Queue)
		}
		if pl.MaxWait < 0 {
			p.add(join(path, "max_wait"), "must be >= 0, got %v", pl.MaxWait)
		}
		if len(pl.Dependencies) == 0 && len(pl.Inbound) == 0 {
			p.add(join(path, "dependencies"), "a pool must cover at least one dependency (or list inbound endpoints)")
		}
		for k, dep := range pl.Dependencies {
			dp := index(join(path, "dependencies"), k)
			switch {
			case !known[dep]:
				p.add(dp, "unknown dependency %q (known: %s)", dep, s.knownList())
			case owner[dep] != "":
				p.add(dp, "dependency %q is already in pool %q; each dependency belongs to exactly one pool", dep, owner[dep])
			default:
				owner[dep] = pl.Name
			}
		}
	}
	if len(c.Pools) == 0 {
		return
	}
	for _, d := range s.Dependencies {
		if known[d.Name] && owner[d.Name] == "" {
			p.add(pp, "dependency %q is in no pool; each dependency belongs to exactly one pool", d.Name)
		}
	}
}
