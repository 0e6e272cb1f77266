package scenarios

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/service"
)

// Validate checks that the scenario can run and returns nil or every problem found, each a
// *FieldError (joined one per line, matching ErrInvalid) with the file and line it came from when
// the scenario was loaded. It does not change the scenario. Load calls it; call it again after
// changing fields (a new rate, scaled durations). Zero values that have a documented default
// (Seed, Repetitions, SampleEvery, Load.Arrivals, Load.Timeout, Pool.Kind, Endpoint.Deadline,
// Endpoint.Rate, Configuration.Mode) are accepted.
//
// What the service is made of (dependencies, endpoints, pools, the client timeout and limits) is
// checked by service.Config.Validate, the one check of a service configuration, on every
// configuration's service config; its problems are reported at the scenario's field paths. A
// scenario that validates therefore builds with service.New in every configuration.
func (s *Scenario) Validate() error {
	return s.validate().err()
}

func (s *Scenario) validate() *problems {
	p := &problems{file: s.Path, lines: s.lines}
	s.checkName(p, "name", s.Name)
	s.checkTopLevel(p)
	s.checkTargets(p)
	for i, d := range s.Dependencies {
		path := index("dependencies", i)
		checkDuration(p, join(path, "latency"), d.Latency)
		checkDuration(p, join(path, "jitter"), d.Jitter)
	}
	s.checkEndpoints(p)
	s.checkLoad(p)
	s.checkConfigurations(p)
	s.checkService(p)
	s.checkPhases(p)
	s.checkInbound(p)
	s.checkRoles(p)
	s.checkClaims(p)
	s.checkNoiseFloor(p)
	return p
}

// checkTopLevel checks the repetitions and the sampling period.
func (s *Scenario) checkTopLevel(p *problems) {
	switch {
	case s.Repetitions < 0:
		p.add("repetitions", "must be >= 0, got %d", s.Repetitions)
	case s.Repetitions > MaxRepetitions:
		p.add("repetitions", "%d is more than the %d allowed", s.Repetitions, MaxRepetitions)
	}
	switch {
	case s.SampleEvery < 0:
		p.add("sample_every", "must be > 0, got %v", s.SampleEvery)
	case s.SampleEvery > 0 && s.SampleEvery < MinSampleEvery:
		p.add("sample_every", "%v is shorter than the %v allowed (every sample writes a row per resource)", s.SampleEvery, MinSampleEvery)
	case s.SampleEvery > service.MaxDuration:
		p.add("sample_every", "%v is longer than the %v allowed", s.SampleEvery, service.MaxDuration)
	}
}

// checkEndpoints checks the endpoints' own rates and that no two write the same raw file (the
// service checks the rest).
func (s *Scenario) checkEndpoints(p *problems) {
	files := map[string]string{} // lower-cased raw file name -> endpoint path
	for i, e := range s.Endpoints {
		path := index("endpoints", i)
		if e.Rate != 0 && e.Rate != s.Load.Rate { // an endpoint without a rate of its own runs at load.rate, checked below
			checkRate(p, join(path, "rate"), e.Rate)
		}
		if service.ValidPath(e.Path) != "" {
			continue // the service's check says why
		}
		name := rundir.RawFileName(e.Path)
		if other, ok := files[strings.ToLower(name)]; ok && other != e.Path {
			p.add(join(path, "path"), "%q and %q would both write the raw file %s (paths map to file names by keeping letters, digits, '-' and '.', case-insensitively)", other, e.Path, name)
		}
		files[strings.ToLower(name)] = e.Path
	}
}

// MinDrift is the shortest load.drift: a stream drifting one interval per second already sends one
// request a second more than its rate.
const MinDrift = time.Second

// checkLoad checks the load: its rate, arrivals, drift, lag limit and timeout.
func (s *Scenario) checkLoad(p *problems) {
	checkRate(p, "load.rate", s.Load.Rate)
	switch s.Load.Arrivals {
	case "", ArrivalsConstant, ArrivalsPoisson:
	default:
		p.add("load.arrivals", "unknown arrivals %q (known: %s, %s)", s.Load.Arrivals, ArrivalsConstant, ArrivalsPoisson)
	}
	switch {
	case s.Load.Drift < 0:
		p.add("load.drift", "must be > 0, got %v", s.Load.Drift)
	case s.Load.Drift > 0 && s.Load.Drift < MinDrift:
		p.add("load.drift", "%v is shorter than %v: a drifting stream sends 1/drift requests a second more than its rate", s.Load.Drift, MinDrift)
	case s.Load.Drift > service.MaxDuration:
		p.add("load.drift", "%v is longer than the %v allowed", s.Load.Drift, service.MaxDuration)
	case s.Load.Drift > 0 && s.Load.Arrivals == ArrivalsPoisson:
		p.add("load.drift", "only constant arrivals have an offset to drift (arrivals is %s)", s.Load.Arrivals)
	}
	switch {
	case s.Load.LagLimit < 0:
		p.add("load.lag_limit", "must be > 0, got %v", s.Load.LagLimit)
	case s.Load.LagLimit > service.MaxDuration:
		p.add("load.lag_limit", "%v is longer than the %v allowed", s.Load.LagLimit, service.MaxDuration)
	case s.Load.Timeout < 0:
		p.add("load.timeout", "must be > 0, got %v", s.Load.Timeout)
	case s.Load.Timeout > MaxLoadTimeout:
		p.add("load.timeout", "%v is longer than the %v allowed", s.Load.Timeout, MaxLoadTimeout)
	case s.Load.Timeout > 0 && s.Timeout > 0 && s.Load.Timeout <= s.Timeout:
		p.add("load.timeout", "%v must exceed the client timeout %v, or the load generator gives up before the service can answer", s.Load.Timeout, s.Timeout)
	}
}

// checkConfigurations checks the configurations' count, names and folders, and what each adds
// to the service's rules.
func (s *Scenario) checkConfigurations(p *problems) {
	switch {
	case len(s.Configurations) == 0:
		p.add("configurations", "at least one configuration is needed")
	case len(s.Configurations) > MaxConfigurations:
		p.add("configurations", "%d configurations, more than the %d allowed", len(s.Configurations), MaxConfigurations)
	}
	names := map[string]bool{}
	folders := map[string]string{} // lower-cased folder name -> configuration name
	for i, c := range s.Configurations {
		path := join(index("configurations", i), "name")
		s.checkUniqueName(p, path, "configuration", c.Name, names)
		checkFolderName(p, path, c.Name, folders)
		s.checkConfiguration(p, index("configurations", i), c)
	}
}

// checkPhases checks the phases: their count, names, durations, the time line's length, and
// each phase's faults.
func (s *Scenario) checkPhases(p *problems) {
	switch {
	case len(s.Phases) > MaxPhases:
		p.add("phases", "%d phases, more than the %d allowed", len(s.Phases), MaxPhases)
	case slices.ContainsFunc(s.Phases, func(ph Phase) bool { return ph.Duration > MaxTimeline }):
		// each such phase is reported below; the sum would only saturate
	case s.Duration() > MaxTimeline:
		p.add("phases", "the time line is %v, more than the %v allowed", s.Duration(), MaxTimeline)
	}
	if len(s.Phases) == 0 {
		p.add("phases", "at least one phase is needed")
	}
	names := map[string]bool{}
	for i, ph := range s.Phases {
		path := index("phases", i)
		s.checkUniqueName(p, join(path, "name"), "phase", ph.Name, names)
		switch {
		case ph.Duration <= 0:
			p.add(join(path, "duration"), "must be > 0, got %v", ph.Duration)
		case ph.Duration > MaxTimeline:
			p.add(join(path, "duration"), "%v is longer than the %v allowed for the whole time line", ph.Duration, MaxTimeline)
		}
		s.checkFaults(p, path, ph)
	}
}

// checkFaults checks a phase's faults: known dependencies, no two of one type on one stream
// (they would be one toxic), and each fault's own check.
func (s *Scenario) checkFaults(p *problems, path string, ph Phase) {
	known := map[string]bool{}
	for _, d := range s.Dependencies {
		known[d.Name] = true
	}
	type key struct {
		dep, typ string
		dir      faults.Direction
	}
	seen := map[key]bool{}
	for j, f := range ph.Faults {
		fp := index(join(path, "faults"), j)
		if !known[f.Dependency] {
			p.add(join(fp, "dependency"), "unknown dependency %q (known: %s)", f.Dependency, s.knownList())
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

// checkName reports an empty or unusable name (service.ValidName: names become folder names,
// proxy names and header values) and returns whether it is usable.
func (s *Scenario) checkName(p *problems, path, name string) bool {
	if reason := service.ValidName(name); reason != "" {
		p.add(path, "%s", reason)
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

// checkConfiguration checks what a configuration adds to the service's own rules: a pool layout
// written as split must not be one pool covering every dependency (that is the shared layout).
// Everything else about its pools is the service's check (see checkService).
func (s *Scenario) checkConfiguration(p *problems, path string, c Configuration) {
	if service.Mode(c.Mode) == service.ModeSplit && len(c.Pools) == 1 && len(s.Dependencies) > 1 && coversAll(c.Pools[0], s.DependencyNames()) {
		p.add(join(path, "pools"), "mode split with one pool covering every dependency is a shared pool: write mode shared, or give each dependency (or group) its own pool")
	}
}

// checkService validates the service config of every configuration with service.Config.Validate
// and reports each of its problems once, at the scenario's field path (see scenarioPath). A
// scenario without configurations is checked as one of mode none, so that its dependencies and
// endpoints are checked still.
func (s *Scenario) checkService(p *problems) {
	confs := s.Configurations
	if len(confs) == 0 {
		confs = []Configuration{{Mode: string(service.ModeNone)}}
	}
	seen := map[[2]string]bool{}
	for i, c := range confs {
		var ve *service.ValidationError
		if !errors.As(s.serviceConfig(c, PlaceholderURL).Validate(), &ve) {
			continue
		}
		for _, fe := range ve.Problems {
			path := scenarioPath(i, fe.Path)
			if seen[[2]string{path, fe.Reason}] {
				continue // a dependency's or an endpoint's problem, found again in the next configuration
			}
			seen[[2]string{path, fe.Reason}] = true
			p.add(path, "%s", fe.Reason)
		}
	}
}

// PlaceholderURL stands for dependency dep's proxy address while a configuration is validated or
// planned, before any proxy listens ("http://proxy-of-a.invalid": the .invalid top-level domain
// resolves nowhere). Nothing derived from a config depends on it but the URLs themselves, which
// a run fills with service.Config.WithURLs.
func PlaceholderURL(dep string) string { return "http://proxy-of-" + strings.ToLower(dep) + ".invalid" }

// scenarioPath maps a field path of configuration conf's service.Config to the scenario's: the
// mode and pools are the configuration's, the client timeout is the scenario's timeout, the
// connection caps are its limits; dependencies and endpoints are the scenario's own lists, in the
// same order.
func scenarioPath(conf int, path string) string {
	switch {
	case path == "mode" || path == "pools" || strings.HasPrefix(path, "pools["):
		return join(index("configurations", conf), path)
	case path == "client_timeout":
		return "timeout"
	case path == "max_inbound_conns" || path == "max_outbound_conns":
		return join("limits", path)
	}
	return path
}

// checkDuration reports a duration outside [0, service.MaxDuration].
func checkDuration(p *problems, path string, d time.Duration) {
	switch {
	case d < 0:
		p.add(path, "must be >= 0, got %v", d)
	case d > service.MaxDuration:
		p.add(path, "%v is longer than the %v allowed", d, service.MaxDuration)
	}
}

// checkRate reports a rate outside [MinRate, loadgen.MaxRate].
func checkRate(p *problems, path string, r float64) {
	if !(r >= MinRate && r <= loadgen.MaxRate) {
		p.add(path, "must be a rate in [%g, %g] requests/s, got %v", MinRate, float64(loadgen.MaxRate), r)
	}
}

// checkFolderName reports a configuration name the run folder cannot hold as a folder of its own:
// one of the run folder's own files, or one that differs from an earlier name only in case (the
// same folder on a case-insensitive file system, and run folders travel between machines).
func checkFolderName(p *problems, path, name string, folders map[string]string) {
	if service.ValidName(name) != "" {
		return // reported by checkName
	}
	for _, own := range rundir.OwnFiles {
		if strings.EqualFold(name, own) {
			p.add(path, "%q is the name of the run folder's own %s (reserved: %s)", name, own, strings.Join(rundir.OwnFiles, ", "))
			return
		}
	}
	if other, ok := folders[strings.ToLower(name)]; ok && other != name {
		p.add(path, "%q and %q differ only in case: the same folder on a case-insensitive file system", other, name)
	}
	folders[strings.ToLower(name)] = name
}
