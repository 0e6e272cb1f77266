package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/bulkheadlab/bulkhead/service"
)

// Scaffold describes a new scenario for `bulkhead new`: seed 004's isolation test
// (tests: [isolation]) against a system under test, with its dependencies, endpoints and the
// two layouts to compare. The zero value of every field but the target has a default; see
// Write.
type Scaffold struct {
	// Name is the scenario's name; "" means "my-service".
	Name string
	// Command, when set, is the argv of a command target started per configuration run; Env
	// adds to its environment, Dir is its working folder (relative to the scenario file),
	// Files what of that folder it needs (copied into the run folder). In Command and Env the
	// token LayoutToken is replaced by the configuration's layout (shared or split): that is how
	// the service is told which layout to run. Runtime placeholders ({port}, {dep.NAME}) are
	// kept for the runner.
	Command []string
	Env     map[string]string
	Dir     string
	Files   []string
	// URLs, when set instead of Command, are the URLs of a service already running, one per
	// layout ("shared", "split").
	URLs map[string]string
	// Ready and Metrics are the target's readiness and Prometheus URLs ("" for none; with a
	// command, default ready is the port accepting connections).
	Ready, Metrics string
	// Version is the target's version command (recorded in each manifest); nil for none.
	Version []string
	// Endpoints maps each endpoint path to the dependencies it calls, in order; nil means
	// /a -> A and /b -> B. The first dependency of the first endpoint is the one the faults hit.
	Endpoints []ScaffoldEndpoint
	// Upstreams maps a dependency to a real server (host:port) its proxy forwards to; every
	// other dependency is a built-in fake answering in 5 ms (+ up to 1 ms).
	Upstreams map[string]string
	// Size is P, the slots of either layout (shared: one pool of P; split: P divided among the
	// dependencies, as `pools: default`); 0 means 10.
	Size int
	// Rate is each endpoint's rate per second; 0 means 50. Timeout is the client timeout of
	// every dependency call; 0 means 500ms.
	Rate    float64
	Timeout time.Duration
}

// ScaffoldEndpoint is one endpoint of a Scaffold: its path and the dependencies it calls.
type ScaffoldEndpoint struct {
	Path  string
	Calls []string
}

// LayoutToken is replaced, in a scaffolded command and its environment, by the configuration's
// layout: shared or split.
const LayoutToken = "{layout}"

// SchemaFile is the name `bulkhead new` gives the JSON Schema it writes beside a new scenario,
// which the scenario's first line (the yaml-language-server modeline) names.
const SchemaFile = "scenario.schema.json"

// Modeline is the first line of a scenario file whose JSON Schema is at schema (relative to the
// scenario file): an editor with a YAML language server checks and completes the file by it.
func Modeline(schema string) string {
	return "# yaml-language-server: $schema=" + filepath.ToSlash(schema)
}

// Write returns the scaffold's scenario file, to be written at path (its folder is where the
// command's dir and files are found), with comments a newcomer can follow. It checks its own
// output by loading it: the file it returns validates. It returns an error, saying which flag
// to change, when the scaffold cannot describe a test (no target, the isolation test without an
// endpoint that avoids the faulted dependency, a size the dependencies do not divide, a command
// that does not say which layout to run).
func (s Scaffold) Write(path string) ([]byte, error) {
	v, err := s.view()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := scaffoldTmpl.Execute(&b, v); err != nil {
		return nil, err
	}
	if _, err := Parse(path, b.Bytes()); err != nil {
		return b.Bytes(), fmt.Errorf("the scenario written does not load (a bug, or a flag's value the loader refuses): %w", err)
	}
	return b.Bytes(), nil
}

// FromBuiltin returns the built-in scenario name's file as a new scenario: its modeline naming
// the schema beside it (SchemaFile), and its name replaced by newName when that is not "".
func FromBuiltin(name, newName string) ([]byte, error) {
	src, err := Source(name)
	if err != nil {
		return nil, err
	}
	lines := strings.SplitAfter(string(src), "\n")
	if strings.HasPrefix(lines[0], "# yaml-language-server:") {
		lines[0] = Modeline(SchemaFile) + "\n"
	} else {
		lines = append([]string{Modeline(SchemaFile) + "\n"}, lines...)
	}
	out := strings.Join(lines, "")
	if newName != "" {
		re := regexp.MustCompile(`(?m)^name: .*$`)
		if !re.MatchString(out) {
			return nil, fmt.Errorf("built-in %s: no top-level name: line", name)
		}
		out = re.ReplaceAllLiteralString(out, "name: "+strconv.Quote(newName))
	}
	if _, err := Parse("new.yaml", []byte(out)); err != nil {
		return nil, err
	}
	return []byte(out), nil
}

// scaffoldView is what the template writes: the scaffold with defaults applied and its parts
// as YAML text.
type scaffoldView struct {
	Modeline, Name, Timeout, Rate string
	Deps                          []scaffoldDep
	Endpoints                     []string
	Configs                       []scaffoldConfig
	Fault, Affected, Unaffected   string
	Kind                          string // "command" or "url"
}

type scaffoldDep struct{ Line, Comment string }

type scaffoldConfig struct {
	Name   string
	Target []string // the target mapping's lines
}

func (s Scaffold) view() (scaffoldView, error) {
	v := scaffoldView{Modeline: Modeline(SchemaFile), Name: s.Name}
	if v.Name == "" {
		v.Name = "my-service"
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = 500 * time.Millisecond
	}
	rate := s.Rate
	if rate <= 0 {
		rate = 50
	}
	size := s.Size
	if size <= 0 {
		size = 10
	}
	v.Timeout, v.Rate = timeout.String(), strconv.FormatFloat(rate, 'f', -1, 64)+"/s"
	eps := s.Endpoints
	if len(eps) == 0 {
		eps = []ScaffoldEndpoint{{"/a", []string{"A"}}, {"/b", []string{"B"}}}
	}
	var deps []string
	for _, e := range eps {
		if len(e.Calls) == 0 {
			return v, fmt.Errorf("--endpoint %s: names no dependency (write /path=DEP or /path=DEP+DEP)", e.Path)
		}
		for _, d := range e.Calls {
			if !slices.Contains(deps, d) {
				deps = append(deps, d)
			}
		}
		v.Endpoints = append(v.Endpoints, fmt.Sprintf("{path: %s, calls: [%s]}", yamlScalar(e.Path), strings.Join(e.Calls, ", ")))
	}
	for d := range s.Upstreams {
		if !slices.Contains(deps, d) {
			return v, fmt.Errorf("--upstream %s: no endpoint calls %s (dependencies: %s)", d, d, strings.Join(deps, ", "))
		}
	}
	for _, d := range deps {
		if up, ok := s.Upstreams[d]; ok {
			v.Deps = append(v.Deps, scaffoldDep{fmt.Sprintf("{name: %s, upstream: %s}", d, yamlScalar(up)), "a real server; its proxy forwards to it"})
		} else {
			v.Deps = append(v.Deps, scaffoldDep{fmt.Sprintf("{name: %s, latency: 5ms, jitter: 1ms}", d), "a built-in fake answering in 5 ms (+ up to 1 ms)"})
		}
	}
	v.Fault = eps[0].Calls[0]
	v.Affected = eps[0].Path
	for _, e := range eps {
		if !slices.Contains(e.Calls, v.Fault) {
			v.Unaffected = e.Path
			break
		}
	}
	if v.Unaffected == "" {
		return v, fmt.Errorf("--endpoint: the isolation test needs an endpoint that does not call %s (the dependency the faults hit, the first endpoint's first): add one, e.g. --endpoint /b=B", v.Fault)
	}
	var err error
	switch {
	case len(s.Command) > 0 && len(s.URLs) > 0:
		return v, errors.New("--command and --url: give one (a command the runner starts, or a service already running)")
	case len(s.Command) > 0:
		v.Kind = "command"
		if !strings.Contains(strings.Join(s.Command, " ")+" "+strings.Join(slices.Collect(maps.Values(s.Env)), " "), LayoutToken) {
			return v, fmt.Errorf("--command: both configurations would start the same service: put %s where your service is told its layout (replaced by shared and split), e.g. --command './svc --layout %s --port {port}'", LayoutToken, LayoutToken)
		}
	case len(s.URLs) > 0:
		v.Kind = "url"
		for _, l := range []string{"shared", "split"} {
			if s.URLs[l] == "" {
				return v, fmt.Errorf("--url: give the URL of each layout's instance: --url shared=URL --url split=URL (missing %s)", l)
			}
		}
	default:
		return v, errors.New("say what to test: --from a built-in scenario, --command your service's command, or --url shared=URL --url split=URL")
	}
	for _, layout := range []service.Mode{service.ModeShared, service.ModeSplit} {
		c := scaffoldConfig{Name: string(layout)}
		if c.Target, err = s.targetLines(layout, size, deps, timeout); err != nil {
			return v, err
		}
		v.Configs = append(v.Configs, c)
	}
	return v, nil
}

// targetLines writes a configuration's target: mapping for layout, its stated layout's pools
// being what `pools: default` of size P builds.
func (s Scaffold) targetLines(layout service.Mode, size int, deps []string, timeout time.Duration) ([]string, error) {
	pools, err := DefaultPools(layout, size, deps, timeout)
	if err != nil {
		return nil, fmt.Errorf("--size: %w", err)
	}
	fill := func(x string) string { return strings.ReplaceAll(x, LayoutToken, string(layout)) }
	var out []string
	if len(s.Command) > 0 {
		var argv []string
		for _, a := range s.Command {
			argv = append(argv, yamlScalar(fill(a)))
		}
		out = append(out, "command: ["+strings.Join(argv, ", ")+"]")
		if s.Dir != "" {
			out = append(out, "dir: "+yamlScalar(s.Dir))
		}
		if len(s.Files) > 0 {
			var fs []string
			for _, f := range s.Files {
				fs = append(fs, yamlScalar(f))
			}
			out = append(out, "files: ["+strings.Join(fs, ", ")+"]")
		}
		if len(s.Env) > 0 {
			var kv []string
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				kv = append(kv, k+": "+yamlScalar(fill(s.Env[k])))
			}
			out = append(out, "env: {"+strings.Join(kv, ", ")+"}")
		}
	} else {
		out = append(out, "url: "+yamlScalar(s.URLs[string(layout)]))
	}
	if s.Ready != "" {
		out = append(out, "ready: "+yamlScalar(fill(s.Ready)))
	}
	if s.Metrics != "" {
		out = append(out, "metrics: "+yamlScalar(fill(s.Metrics)))
	}
	if len(s.Version) > 0 {
		var argv []string
		for _, a := range s.Version {
			argv = append(argv, yamlScalar(a))
		}
		out = append(out, "version: ["+strings.Join(argv, ", ")+"]")
	}
	var ps []string
	for _, p := range pools {
		ps = append(ps, fmt.Sprintf("{name: %s, dependencies: [%s], size: %d}", yamlScalar(p.Name), strings.Join(p.Dependencies, ", "), p.Size))
	}
	out = append(out, fmt.Sprintf("layout: {mode: %s, pools: [%s]}", layout, strings.Join(ps, ", ")))
	return out, nil
}

// yamlScalar writes s as a YAML flow scalar: plain when that reads back as the same string,
// double-quoted otherwise.
func yamlScalar(s string) string {
	if s != "" && regexp.MustCompile(`^[A-Za-z0-9_./-][A-Za-z0-9_./:=-]*$`).MatchString(s) &&
		!slices.Contains([]string{"true", "false", "null", "yes", "no", "on", "off", "~"}, strings.ToLower(s)) {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			return s
		}
	}
	return strconv.Quote(s)
}

var scaffoldTmpl = template.Must(template.New("scaffold").Parse(`{{.Modeline}}
# Seed 004's isolation test against your service, written by bulkhead new. Check it with
# bulkhead validate, see the plan with bulkhead plan, run it with bulkhead run (this file).
# Every key: docs/scenario-format.md; targets: docs/own-service.md; the test: docs/verdicts.md.
name: {{.Name}}
timeout: {{.Timeout}}   # the client timeout of every dependency call, the same in both layouts
repetitions: 5   # the claims' intervals are over the repetitions
dependencies:    # each reached through its own Toxiproxy proxy, where the faults act
{{- range .Deps}}
  - {{.Line}}   # {{.Comment}}
{{- end}}
endpoints:       # what the load is sent to, and the dependencies each calls
{{- range .Endpoints}}
  - {{.}}
{{- end}}
load: {rate: {{.Rate}}, timeout: 2s, lag_limit: 10ms}   # per endpoint, open model
configurations:  # your service in each layout: its target, and the layout it holds
{{- range .Configs}}
  - name: {{.Name}}
    target:
{{- range .Target}}
      {{.}}
{{- end}}
{{- end}}
phases:          # one time line per configuration run; the faults switch at the offsets
  - {name: baseline, duration: 12s}
  - {name: busy, duration: 8s, faults: [{dependency: {{.Fault}}, type: latency, latency: 0.3x timeout}]}
  - {name: calm, duration: 3s}
  - {name: latency, duration: 30s, faults: [{dependency: {{.Fault}}, type: latency, latency: 0.9x timeout}]}
  - {name: recovery, duration: 3s}
  - {name: errors, duration: 12s, faults: [{dependency: {{.Fault}}, type: reset}]}
  - {name: recovery-2, duration: 2s}
roles:           # which part is which: what the test's claims are about
  shared: shared
  split: split
  fault_dependency: {{.Fault}}
  affected: {{.Affected}}
  unaffected: {{.Unaffected}}
  baseline: baseline
  latency_phase: latency   # {{.Fault}} answers just inside the timeout: P1, P2
  error_phase: errors      # {{.Fault}} fails fast: P4
  normal_load: [busy]      # {{.Fault}} slower under normal load: P3, the cost of isolation
# How far a figure moves between runs, for a run of one repetition (--repetitions 1).
noise_floor: {p50_ms: 10%, p90_ms: 10%, p95_ms: 10%, mean_ms: 10%, p99_ms: 50%, p999_ms: 50%, max_ms: 50%}
tests: [isolation]   # P1-P4 with their preconditions; claims: of your own add to them
`))
