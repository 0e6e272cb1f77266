package scenarios

import (
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/target"
)

// Target is a configuration's system under test when it is not the built-in service: a target
// of a registered kind (package target: a command the runner starts, a service already running
// at a URL, ...), with the keys every kind has, the kind's own keys, and the pool layout the
// target states of itself.
type Target struct {
	target.Config `yaml:",inline"`
	// Layout states the target's pool layout as its user knows it, apart from the built-in
	// service's pools (nil: the configuration's mode and pools stand for it, as before).
	Layout *Layout `yaml:"layout,omitempty"`
}

// MarshalYAML writes the target as one flat mapping: the common keys, the kind's own, layout.
func (t Target) MarshalYAML() (any, error) {
	return t.Config.MarshalYAMLWith(struct {
		Layout *Layout `yaml:"layout,omitempty"`
	}{t.Layout})
}

// TargetConfig returns the configuration's target as package target takes it: nil for the
// built-in service.
func (c Configuration) TargetConfig() *target.Config {
	if c.Target == nil {
		return nil
	}
	return &c.Target.Config
}

// Layout is how a target that is not the built-in service shares its scarce resources between
// dependencies, as its user knows it: a mode (shared, split or none: no limiter at all) and the
// pools it has, each with the dependencies whose calls take it. A pool's name is the name its
// resources are scraped under (pool:<name>, queue:<name>); its size and max wait are optional
// and only shown in the report and used as bounds (a proxy's queue timeout as max_wait). Roles
// and claims read the layout's mode, so a target with no limiter declares mode none and invents
// no pool.
type Layout struct {
	// Mode is shared (one pool for every dependency), split (one per dependency, or per group)
	// or none (no limiter at all).
	Mode string `yaml:"mode" json:"mode"`
	// Pools are the target's pools; none for mode none.
	Pools []LayoutPool `yaml:"pools,omitempty" json:"pools,omitempty"`
}

// LayoutPool is one pool of a Layout.
type LayoutPool struct {
	// Name is the name the pool's resources are scraped under: pool:<name>, queue:<name>.
	Name string `yaml:"name" json:"name"`
	// Dependencies lists the dependencies whose calls take the pool's slots; a dependency is in
	// one pool at most.
	Dependencies []string `yaml:"dependencies" json:"dependencies"`
	// Size is the pool's slots, when known (0: unknown): shown in the report and the plan.
	Size int `yaml:"size,omitempty" json:"size,omitempty"`
	// MaxWait is the longest a call waits for a slot, when known: the bound its queue is
	// judged against (a proxy's queue timeout).
	MaxWait time.Duration `yaml:"max_wait,omitempty" json:"max_wait,omitempty"`
}

// Topology is the contract view of a layout, for the report: its mode and pools, with the
// scenario's endpoints and client timeout.
func (l *Layout) Topology(s *Scenario) outcome.Topology {
	t := outcome.Topology{Mode: l.Mode, ClientTimeout: s.Timeout}
	for _, p := range l.Pools {
		t.Pools = append(t.Pools, outcome.TopologyPool{Name: p.Name, Size: p.Size, MaxWait: p.MaxWait, Dependencies: p.Dependencies})
	}
	for _, e := range s.Endpoints {
		t.Endpoints = append(t.Endpoints, outcome.TopologyCall{Path: e.Path, Calls: e.Calls})
	}
	return t
}

// EffectiveMode is the pool layout roles and claims see: the target's stated layout, else the
// configuration's mode.
func (c Configuration) EffectiveMode() string {
	if c.Target != nil && c.Target.Layout != nil {
		return c.Target.Layout.Mode
	}
	return c.Mode
}

var yamlLineRef = regexp.MustCompile(`line \d+: `)

// checkTargets checks what needs the whole scenario: placeholders name known dependencies, and
// listen addresses are host:port and distinct.
func (s *Scenario) checkTargets(p *problems) {
	deps := map[string]string{}
	for _, d := range s.Dependencies {
		deps[d.Name] = "h:1"
	}
	var listens []string
	for i, d := range s.Dependencies {
		for _, f := range []struct{ key, val string }{{"listen", d.Listen}, {"upstream", d.Upstream}} {
			if f.val == "" {
				continue
			}
			path := fmt.Sprintf("dependencies[%d].%s", i, f.key)
			if _, port, err := net.SplitHostPort(f.val); err != nil || port == "" {
				p.add(path, "%q is not host:port", f.val)
			}
		}
		if d.Listen != "" {
			if slices.Contains(listens, d.Listen) {
				p.add(fmt.Sprintf("dependencies[%d].listen", i), "%s is already another dependency's", d.Listen)
			}
			listens = append(listens, d.Listen)
		}
		if d.Upstream != "" && (d.Latency != 0 || d.Jitter != 0) {
			p.add(fmt.Sprintf("dependencies[%d].upstream", i), "a real upstream has its own latency; latency and jitter are for the built-in fake")
		}
	}
	for i, c := range s.Configurations {
		t := c.TargetConfig()
		if t == nil {
			continue
		}
		path := fmt.Sprintf("configurations[%d].target", i)
		strs := t.Strings()
		ports := map[string]string{}
		for _, name := range target.PortNames(slices.Collect(maps.Values(strs))...) {
			ports[name] = "1"
		}
		for _, key := range slices.Sorted(maps.Keys(strs)) {
			if _, err := target.ExpandAt(strs[key], "h", ports, deps); err != nil {
				p.add(join(path, key), "%v (known: {host}, {port}, {port:NAME}, {dep.NAME} for a dependency NAME)", err)
			}
		}
		for j, a := range t.Version {
			if len(target.PortNames(a)) > 0 || strings.Contains(a, "{dep.") {
				p.add(fmt.Sprintf("%s.version[%d]", path, j), "takes no placeholders: the version command runs before any port or proxy exists")
			}
		}
		s.checkTargetFiles(p, t, path)
	}
}

// checkTargetFiles checks that the files a target names (target.Files) are there, in its folder
// relative to the scenario's: the runner copies them into the run folder before anything starts.
func (s *Scenario) checkTargetFiles(p *problems, t *target.Config, path string) {
	k, err := target.Of(t)
	if err != nil {
		return // reported by the decoder
	}
	fk, ok := k.(target.Files)
	if !ok {
		return
	}
	dir, files := fk.Files(t)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(s.Dir(), dir)
	}
	for j, f := range files {
		if !filepath.IsLocal(f) {
			continue // the kind's Check says so
		}
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			p.add(fmt.Sprintf("%s.files[%d]", path, j), "%s: not found in %s (the runner copies it into the run folder)", f, orDot(dir))
		}
	}
}

func orDot(dir string) string {
	if dir == "" {
		return "."
	}
	return dir
}

// checkLayout checks a target's layout: a known mode, named pools, no dependency in two pools.
func (d *decoder) checkLayout(l *Layout, path string) {
	switch l.Mode {
	case outcome.ModeShared, outcome.ModeSplit, outcome.ModeNone:
	default:
		d.add(join(path, "mode"), "%q is not shared, split or none", l.Mode)
	}
	if l.Mode == outcome.ModeNone && len(l.Pools) > 0 {
		d.add(join(path, "pools"), "mode none has no pools")
	}
	owner := map[string]string{}
	for i, p := range l.Pools {
		pp := fmt.Sprintf("%s.pools[%d]", path, i)
		if p.Name == "" {
			d.add(join(pp, "name"), "missing")
		}
		if p.Size < 0 {
			d.add(join(pp, "size"), "must not be negative")
		}
		if p.MaxWait < 0 {
			d.add(join(pp, "max_wait"), "must not be negative")
		}
		for _, dep := range p.Dependencies {
			if o, ok := owner[dep]; ok {
				d.add(join(pp, "dependencies"), "dependency %q is already in pool %q", dep, o)
			}
			owner[dep] = p.Name
		}
	}
}
