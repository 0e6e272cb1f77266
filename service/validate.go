package service

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds Validate enforces, so that every Config that validates can be built by New on one
// machine: each is far above what an experiment needs and far below what exhausts memory,
// goroutines or the int32 counters of a Semaphore.
const (
	// MaxPoolSize bounds one pool's permits or worker goroutines.
	MaxPoolSize = 10_000
	// MaxQueueCapacity bounds one pool's waiting room.
	MaxQueueCapacity = 100_000
	// MaxWorkers bounds the worker goroutines of all workers pools together.
	MaxWorkers = 20_000
	// MaxQueued bounds the waiting rooms of all pools together (a workers pool allocates its
	// queue up front).
	MaxQueued = 1_000_000
	// MaxConns bounds MaxInboundConns, MaxOutboundConns and MaxIdleConnsPerDependency.
	MaxConns = 1_000_000
	// MaxDependencies, MaxEndpoints and MaxPools bound the lengths of the Config's lists.
	MaxDependencies = 5_000
	MaxEndpoints    = 5_000
	MaxPools        = 5_000
	// MaxDuration bounds every duration of a Config: the client timeout, pools' waits, inbound
	// retry delays and breaker periods.
	MaxDuration = time.Hour
	// MaxInboundAttempts and MaxInboundBacklog bound an inbound endpoint's retries and backlog.
	MaxInboundAttempts = 1_000
	MaxInboundBacklog  = 1_000_000
	// MaxNameLength bounds dependency and pool names, MaxPathLength endpoint paths.
	MaxNameLength = 100
	MaxPathLength = 200
)

// ErrInvalidConfig is matched (errors.Is) by every error Validate returns.
var ErrInvalidConfig = errors.New("invalid service config")

// FieldError is one problem of a Config: Path names the field by its yaml keys and list indexes
// ("pools[1].size", "endpoints[0].calls[2]"; "" for the config as a whole) and Reason says what
// is wrong with it ("must be > 0, got 0").
type FieldError struct {
	Path   string
	Reason string
}

// Error formats the problem as "path: reason".
func (e FieldError) Error() string {
	if e.Path == "" {
		return e.Reason
	}
	return e.Path + ": " + e.Reason
}

// ValidationError lists every problem Validate found. errors.Is(err, ErrInvalidConfig) holds.
type ValidationError struct {
	Problems []FieldError
}

func (e *ValidationError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Error()
	}
	return "invalid service config: " + strings.Join(msgs, "; ")
}

// Is reports ErrInvalidConfig.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalidConfig }

// namePattern is what dependency and pool names must match: they become header values, metric
// labels, resource names and proxy names.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidName returns "" when name can name a dependency or a pool, else the reason it cannot.
func ValidName(name string) string {
	switch {
	case name == "":
		return "must not be empty"
	case len(name) > MaxNameLength:
		return fmt.Sprintf("%d characters, more than the %d allowed", len(name), MaxNameLength)
	case !namePattern.MatchString(name):
		return fmt.Sprintf("%q: use letters, digits, '.', '_' and '-' (starting with a letter or digit)", name)
	}
	return ""
}

// ValidPath returns "" when p can be an endpoint's path, else the reason it cannot. A path the
// router takes literally: it starts with /, is clean (no //, . or .. segments, which the router
// would redirect), holds no pattern syntax ({ }), no percent-escapes, spaces, control characters,
// ? or #, is valid UTF-8, and stays clear of the service's own MetricsPath and /debug/ routes.
// A trailing / is allowed (the router then serves the whole subtree).
func ValidPath(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Sprintf("must start with /, got %q", p)
	case len(p) > MaxPathLength:
		return fmt.Sprintf("%d bytes, more than the %d allowed", len(p), MaxPathLength)
	case !utf8.ValidString(p):
		return fmt.Sprintf("%q is not valid UTF-8", p)
	case strings.ContainsAny(p, "{}"):
		return fmt.Sprintf("%q holds { or }, which the router reads as a wildcard pattern", p)
	case strings.ContainsRune(p, '%'):
		return fmt.Sprintf("%q holds a percent-escape; write the character itself", p)
	case strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || r == '?' || r == '#' || r == '\\' }):
		return fmt.Sprintf("%q holds a space, a control character, ?, # or \\", p)
	case p != path.Clean(p) && p != path.Clean(p)+"/":
		return fmt.Sprintf("%q is not a clean path (no //, . or .. segments); the router would redirect it", p)
	}
	for _, own := range []string{MetricsPath, "/debug"} {
		if p == own || strings.HasPrefix(p, own+"/") {
			return fmt.Sprintf("%q collides with the service's own %s", p, own)
		}
	}
	return ""
}

// Validate reports every problem that would stop New from building the service, as a
// *ValidationError listing each problem as a FieldError. It is the one check of a Config: New
// calls it, and the scenario loader calls it for every configuration of a scenario. It does not
// change c and does not block.
func (c Config) Validate() error {
	v := &validation{}
	c.validate(v)
	if len(v.problems) > 0 {
		return &ValidationError{Problems: v.problems}
	}
	return nil
}

type validation struct{ problems []FieldError }

func (v *validation) add(path, format string, args ...any) {
	v.problems = append(v.problems, FieldError{Path: path, Reason: fmt.Sprintf(format, args...)})
}

func idx(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// duration checks 0 <= d <= MaxDuration (or 0 < d when positive).
func (v *validation) duration(path string, d time.Duration, positive bool) {
	switch {
	case positive && d <= 0:
		v.add(path, "must be > 0, got %v", d)
	case d < 0:
		v.add(path, "must be >= 0, got %v", d)
	case d > MaxDuration:
		v.add(path, "%v is longer than the %v allowed", d, MaxDuration)
	}
}

// bounded checks 0 <= n <= limit.
func (v *validation) bounded(path string, n, limit int, zero string) {
	switch {
	case n < 0:
		v.add(path, "must be >= 0 (0 = %s), got %d", zero, n)
	case n > limit:
		v.add(path, "%d is more than the %d allowed", n, limit)
	}
}

func (c Config) validate(v *validation) {
	mode, err := ParseMode(string(c.Mode))
	if err != nil {
		v.add("mode", "unknown mode %q (known: shared, split, none)", c.Mode)
	}
	v.duration("client_timeout", c.ClientTimeout, true)
	v.bounded("max_inbound_conns", c.MaxInboundConns, MaxConns, "no cap")
	v.bounded("max_outbound_conns", c.MaxOutboundConns, MaxConns, "no cap")
	v.bounded("max_idle_conns_per_dependency", c.MaxIdleConnsPerDependency, MaxConns, fmt.Sprint(DefaultMaxIdleConnsPerDependency))

	deps := c.validateDependencies(v)
	c.validateEndpoints(v, deps)
	covered := c.validatePools(v, deps)
	switch mode {
	case ModeNone:
		if len(c.Pools) > 0 {
			v.add("pools", "mode none admits every call at once and takes no pools, got %d", len(c.Pools))
		}
	case ModeShared:
		if len(c.Pools) != 1 {
			v.add("pools", "mode shared needs exactly one pool covering every dependency, got %d pools", len(c.Pools))
		} else if len(c.Pools[0].Dependencies) > 0 {
			for _, d := range c.Dependencies {
				if deps[d.Name] && covered[d.Name] == "" {
					v.add("pools[0].dependencies", "the shared pool must cover %q (or list none to cover all)", d.Name)
				}
			}
		}
	case ModeSplit:
		if len(c.Pools) == 0 {
			v.add("pools", "mode split needs at least one pool")
		}
		for _, d := range c.Dependencies {
			if deps[d.Name] && covered[d.Name] == "" {
				v.add("pools", "dependency %q is in no pool; each dependency belongs to exactly one pool", d.Name)
			}
		}
		inboundPools := map[string]bool{}
		for _, e := range c.Endpoints {
			if e.Inbound != nil {
				inboundPools[e.Inbound.Pool] = true
			}
		}
		for i, p := range c.Pools {
			if len(p.Dependencies) == 0 && !inboundPools[p.Name] {
				v.add(idx("pools", i)+".dependencies", "a pool must cover at least one dependency in mode split (or process an inbound endpoint)")
			}
		}
	}
}

// validateDependencies checks the dependencies and returns the set of usable names.
func (c Config) validateDependencies(v *validation) map[string]bool {
	deps := map[string]bool{}
	switch {
	case len(c.Dependencies) == 0:
		v.add("dependencies", "at least one dependency is needed")
	case len(c.Dependencies) > MaxDependencies:
		v.add("dependencies", "%d dependencies, more than the %d allowed", len(c.Dependencies), MaxDependencies)
	}
	for i, d := range c.Dependencies {
		f := idx("dependencies", i)
		switch reason := ValidName(d.Name); {
		case reason != "":
			v.add(f+".name", "%s", reason)
		case deps[d.Name]:
			v.add(f+".name", "duplicate dependency %q", d.Name)
		default:
			deps[d.Name] = true
		}
		if u, err := url.Parse(d.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			v.add(f+".url", "%q is not an http(s) URL with a host", d.URL)
		}
		if b := d.Breaker; b != nil {
			bf := f + ".breaker"
			if !(b.FailureRatio >= 0 && b.FailureRatio <= 1) {
				v.add(bf+".failure_ratio", "must be between 0 and 1, got %v", b.FailureRatio)
			}
			v.duration(bf+".slow_call_threshold", b.SlowCallThreshold, false)
			v.duration(bf+".open_timeout", b.OpenTimeout, false)
			v.duration(bf+".interval", b.Interval, false)
		}
	}
	return deps
}

func (c Config) validateEndpoints(v *validation, deps map[string]bool) {
	switch {
	case len(c.Endpoints) == 0:
		v.add("endpoints", "at least one endpoint is needed")
	case len(c.Endpoints) > MaxEndpoints:
		v.add("endpoints", "%d endpoints, more than the %d allowed", len(c.Endpoints), MaxEndpoints)
	}
	var names []string
	for _, d := range c.Dependencies {
		if deps[d.Name] {
			names = append(names, d.Name)
		}
	}
	known := knownNames(names)
	pools := map[string]bool{}
	for _, p := range c.Pools {
		pools[p.Name] = true
	}
	paths := map[string]bool{}
	mux := newRouter(http.NotFoundHandler(), http.NotFoundHandler())
	for i, e := range c.Endpoints {
		f := idx("endpoints", i)
		switch reason := ValidPath(e.Path); {
		case reason != "":
			v.add(f+".path", "%s", reason)
		case paths[e.Path]:
			v.add(f+".path", "duplicate endpoint %q", e.Path)
		default:
			paths[e.Path] = true
			if err := mux.handle(e.Path, http.NotFoundHandler()); err != nil {
				v.add(f+".path", "%q: the router refuses it: %v", e.Path, err)
			}
		}
		if len(e.Calls) == 0 {
			v.add(f+".calls", "an endpoint must call at least one dependency")
		}
		seen := map[string]bool{}
		for j, name := range e.Calls {
			cf := idx(f+".calls", j)
			switch {
			case !deps[name]:
				v.add(cf, "unknown dependency %q (known: %s)", name, known)
			case seen[name]:
				v.add(cf, "dependency %q called twice", name)
			}
			seen[name] = true
		}
		if e.Deadline != "" && e.Deadline != DeadlinePerCall && e.Deadline != DeadlineShared {
			v.add(f+".deadline", "unknown deadline %q (known: %s, %s)", e.Deadline, DeadlinePerCall, DeadlineShared)
		}
		if in := e.Inbound; in != nil {
			inf := f + ".inbound"
			v.bounded(inf+".attempts", in.Attempts, MaxInboundAttempts, fmt.Sprint(DefaultInboundAttempts))
			v.duration(inf+".retry_delay", in.RetryDelay, false)
			v.bounded(inf+".max_backlog", in.MaxBacklog, MaxInboundBacklog, fmt.Sprint(DefaultInboundMaxBacklog))
			if in.Pool != "" && !pools[in.Pool] {
				v.add(inf+".pool", "unknown pool %q", in.Pool)
			}
		}
	}
}

// validatePools checks each pool and the totals, and returns which pool covers each dependency.
func (c Config) validatePools(v *validation, deps map[string]bool) map[string]string {
	if len(c.Pools) > MaxPools {
		v.add("pools", "%d pools, more than the %d allowed", len(c.Pools), MaxPools)
	}
	covered := map[string]string{} // dependency -> pool
	names := map[string]bool{}
	workers, queued := 0, 0
	var known []string
	for _, d := range c.Dependencies {
		if deps[d.Name] {
			known = append(known, d.Name)
		}
	}
	for i, p := range c.Pools {
		f := idx("pools", i)
		v.problems = append(v.problems, validatePool(f, p)...)
		if names[p.Name] && p.Name != "" {
			v.add(f+".name", "duplicate pool %q", p.Name)
		}
		names[p.Name] = true
		if p.Size > 0 {
			workers += min(PoolGoroutines(p), MaxPoolSize+1)
		}
		if p.QueueCapacity > 0 {
			queued += min(p.QueueCapacity, MaxQueueCapacity+1)
		}
		for j, d := range p.Dependencies {
			df := idx(f+".dependencies", j)
			switch {
			case !deps[d]:
				v.add(df, "unknown dependency %q (known: %s)", d, knownNames(known))
			case covered[d] != "":
				v.add(df, "dependency %q is already in pool %q; each dependency belongs to exactly one pool", d, covered[d])
			default:
				covered[d] = p.Name
			}
		}
	}
	if workers > MaxWorkers {
		v.add("pools", "the pools start %d goroutines together, more than the %d allowed", workers, MaxWorkers)
	}
	if queued > MaxQueued {
		v.add("pools", "the pools' queues hold %d together, more than the %d allowed", queued, MaxQueued)
	}
	return covered
}

// knownNames lists names for an "unknown dependency" message, in declaration order, the first 20.
func knownNames(names []string) string {
	switch {
	case len(names) == 0:
		return "none declared"
	case len(names) > 20:
		return strings.Join(names[:20], ", ") + fmt.Sprintf(", ... (%d in all)", len(names))
	}
	return strings.Join(names, ", ")
}

// validatePool checks one pool on its own, f being its field path: the checks every pool gets,
// then its kind's (PoolParams.Check), whose paths are keys under f.
func validatePool(f string, p PoolConfig) []FieldError {
	v := &validation{}
	if reason := ValidName(p.Name); reason != "" {
		v.add(f+".name", "%s", reason)
	}
	named := len(v.problems)
	p = p.WithDefaults()
	p.Params = p.params()
	switch {
	case p.Params == nil:
		v.add(f+".kind", "unknown pool kind %q (known: %s)", p.Kind, knownPoolKinds())
	case p.Params.Kind() != p.Kind:
		v.add(f+".kind", "kind %q does not match its parameters (%s)", p.Kind, p.Params.Kind())
	}
	switch {
	case p.Size <= 0:
		v.add(f+".size", "must be > 0, got %d", p.Size)
	case p.Size > MaxPoolSize:
		v.add(f+".size", "%d is more than the %d allowed", p.Size, MaxPoolSize)
	}
	v.bounded(f+".queue", p.QueueCapacity, MaxQueueCapacity, "no waiting room")
	v.duration(f+".max_wait", p.MaxWait, false)
	if len(v.problems) == named { // the kind's checks may assume a known kind and sound bounds
		for _, fe := range p.Params.Check(p) {
			v.add(join(f, fe.Path), "%s", fe.Reason)
		}
	}
	return v.problems
}

// join appends key to the field path f ("pools[0]" + "min_limit"); an empty key is f itself.
func join(f, key string) string {
	if key == "" {
		return f
	}
	return f + "." + key
}

// ParseMode returns the Mode named by s ("" means shared).
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeShared:
		return ModeShared, nil
	case ModeSplit, ModeNone:
		return Mode(s), nil
	}
	return "", fmt.Errorf("mode %q: must be shared, split or none", s)
}

// router is an http.ServeMux that returns the mux's panic on a pattern it refuses as an error.
// Validate registers every endpoint on a throwaway router the same way New does, so that a Config
// that validates never panics in New.
type router struct {
	mux *http.ServeMux
}

// newRouter returns a router holding the service's own routes.
func newRouter(resources, metrics http.Handler) *router {
	mux := http.NewServeMux()
	mux.Handle("GET "+DebugResourcesPath, resources)
	mux.Handle("GET "+MetricsPath, metrics)
	return &router{mux: mux}
}

// handle registers h for pattern; it returns the router's refusal as an error instead of panicking.
func (r *router) handle(pattern string, h http.Handler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	r.mux.Handle(pattern, h)
	return nil
}
