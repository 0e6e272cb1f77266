package target

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scrape"
)

// Kind is one kind of system under test: how a scenario writes it (its own keys beside the
// common ones of Config), how it is checked, and how it starts. Every kind is one file that
// registers itself (builtin.go, command.go, url.go); the loader, the runner, the engines and the
// report reach a kind through this interface and the registry only.
type Kind interface {
	// Name is what a scenario's `kind:` names and the manifest records ("command").
	Name() string
	// Key is the scenario key whose presence selects this kind when a target does not write
	// `kind:` ("command" for a command target); "" when the kind must be named.
	Key() string
	// Doc says in a sentence what the kind is, for `bulkhead schema` and the docs.
	Doc() string
	// NewParams returns a pointer to a new struct holding the kind's own scenario keys (yaml
	// tags, and scenario tags as package scenarios reads them), or nil when the kind has none.
	NewParams() any
	// Check returns the problems of c (whose Params are this kind's), each naming its key
	// relative to the target: mapping ("command", "env.X"); nil when c can start.
	Check(c *Config) []Problem
	// Remote reports whether a target of this kind is already running somewhere the runner only
	// reaches over the network: an engine that cannot start processes on the runner's host can
	// still use it.
	Remote() bool
	Starter
}

// Files is implemented by a kind whose targets start from files of the scenario's folder (a
// command's program, the config file it reads). The runner copies the files a target names
// into the run folder, records their hashes in run.json, starts the target from the copies, and
// writes the scenario as run pointing at them, so that <run folder>/scenario.yaml runs again
// (see package experiment).
type Files interface {
	// Files returns the folder c's files are relative to, as c writes it (relative to the
	// scenario's folder, "" for the folder itself), and the files and folders c names there
	// (local paths: none leads out of the folder).
	Files(c *Config) (dir string, files []string)
	// MovedTo returns a copy of c whose folder is dir (its files are found there), c unchanged.
	MovedTo(c *Config, dir string) *Config
}

// FixedPorts is implemented by a kind whose {port} and {port:NAME} the scenario fixes (an image's
// container ports) instead of the runner choosing them when the target starts: `bulkhead plan`
// shows them as they will be.
type FixedPorts interface {
	// Ports returns c's ports by name, "" for {port}.
	Ports(c *Config) map[string]int
}

// Problem is one problem of a target's configuration: its key, relative to the target: mapping
// ("" for the mapping itself), and what is wrong.
type Problem struct {
	Field, Msg string
}

// BuiltInKind is the name of the built-in service's kind: the system under test when a
// configuration writes no target.
const BuiltInKind = "builtin"

var kinds []Kind

// Register adds a kind. It panics on a kind without a name, a name already registered, or a key
// another kind selects by (a programming error: registration runs at init).
func Register(k Kind) {
	if k.Name() == "" {
		panic("target: a kind without a name")
	}
	for _, o := range kinds {
		if o.Name() == k.Name() {
			panic("target: kind " + k.Name() + " registered twice")
		}
		if k.Key() != "" && o.Key() == k.Key() {
			panic("target: kinds " + o.Name() + " and " + k.Name() + " are both selected by key " + k.Key())
		}
	}
	kinds = append(kinds, k)
}

// Kinds returns the registered kinds' names, sorted.
func Kinds() []string {
	var out []string
	for _, k := range kinds {
		out = append(out, k.Name())
	}
	slices.Sort(out)
	return out
}

// Lookup returns the registered kind of that name.
func Lookup(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name() == name {
			return k, true
		}
	}
	return nil, false
}

// Of returns the kind of c: the built-in service for a nil Config, else c.Kind's. It returns an
// error naming the known kinds when c.Kind is not registered.
func Of(c *Config) (Kind, error) {
	name := BuiltInKind
	if c != nil {
		name = c.Kind
	}
	if k, ok := Lookup(name); ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown target kind %q (known: %s)", name, strings.Join(Kinds(), ", "))
}

// Infer returns the kind a target mapping that does not write `kind:` is of, from the keys it
// writes: the kind selected by a key of its own parameters first (command is written only by a
// command target), else the kind selected by a common key (url alone is a URL target). It
// returns false when no kind is selected.
func Infer(written func(key string) bool) (Kind, bool) {
	var common Kind
	for _, k := range kinds {
		if k.Key() == "" || !written(k.Key()) {
			continue
		}
		if ParamKeys(k.NewParams()) != nil && slices.Contains(ParamKeys(k.NewParams()), k.Key()) {
			return k, true
		}
		if common == nil {
			common = k
		}
	}
	return common, common != nil
}

// ParamKeys returns the yaml keys of a kind's parameters (a pointer to a struct), in order.
func ParamKeys(params any) []string {
	if params == nil {
		return nil
	}
	t := reflect.TypeOf(params).Elem()
	var out []string
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// KindsTaking returns the kinds whose parameters have key, sorted.
func KindsTaking(key string) []string {
	var out []string
	for _, k := range kinds {
		if slices.Contains(ParamKeys(k.NewParams()), key) {
			out = append(out, k.Name())
		}
	}
	slices.Sort(out)
	return out
}

// Config is a configuration's system under test as its scenario writes it under `target:`: the
// keys every kind has, and the kind's own (Params). Placeholders in its strings are filled when
// the target starts (see Expand).
type Config struct {
	// Kind names a registered kind (Kinds). Left out, the loader infers it (see Infer) and fills
	// it in, so after loading it is always set.
	Kind string `yaml:"kind,omitempty"`
	// URL is the base URL the load is sent to: the service itself for a URL target, where a
	// started command is reached for a command target ("" there means
	// http://127.0.0.1:{port}).
	URL string `yaml:"url,omitempty"`
	// Ready is polled until it answers 2xx before the load starts; "" means the base URL
	// answering anything (a URL target) or accepting connections (a command target).
	Ready string `yaml:"ready,omitempty"`
	// Metrics is a Prometheus text endpoint scraped at sample_every into resources.csv.
	Metrics string `yaml:"metrics,omitempty"`
	// Scrape tunes the scraping of Metrics (timeout, own mappings).
	Scrape scrape.Config `yaml:"scrape,omitempty"`
	// Outcomes maps the target's responses to outcome classes (defaults when empty).
	Outcomes outcome.Mapping `yaml:"outcomes,omitempty"`
	// Version is a command (argv) the runner runs before it starts each configuration run's
	// target, in the command's dir for a command target (else the scenario's folder): its
	// standard output, trimmed, is recorded in the manifest as the target's version (see
	// RunVersion). It takes no placeholders: it runs before any port or proxy exists.
	Version []string `yaml:"version,omitempty"`
	// Params are the kind's own keys: a pointer to the struct its NewParams returns (nil for a
	// kind without any).
	Params any `yaml:"-"`
}

// MarshalYAMLWith returns c as the one flat mapping a scenario writes: the common keys, the
// kind's own keys, then extra's (a struct with yaml tags, or nil), so that a type embedding
// Config inline can marshal as the loader reads it.
func (c Config) MarshalYAMLWith(extra any) (any, error) {
	type plain Config
	parts := []any{plain(c)}
	if c.Params != nil {
		parts = append(parts, c.Params)
	}
	if extra != nil {
		parts = append(parts, extra)
	}
	return flatten(parts...), nil
}

// Record is what the manifest records of a running target: its kind, a description for the
// report, and what it was started as, placeholders filled.
type Record struct {
	Kind string `json:"kind"`
	// Description says what the system under test was, in the report's words ("the built-in
	// service", "command `node server.js --port 41233`").
	Description string            `json:"description,omitempty"`
	Command     []string          `json:"command,omitempty"`
	Dir         string            `json:"dir,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	// Image is the container image an image target ran from.
	Image   string `json:"image,omitempty"`
	URL     string `json:"url"`
	Ready   string `json:"ready,omitempty"`
	Metrics string `json:"metrics,omitempty"`
	// Outcomes is the mapping its responses are classed by; nil for the built-in contract.
	Outcomes *outcome.Mapping `json:"outcomes,omitempty"`
	Pid      int              `json:"pid,omitempty"`
}

// flatten returns one struct value holding the yaml-keyed fields of every part (struct values or
// pointers to structs) in order, for yaml.Marshal to write as one mapping.
func flatten(parts ...any) any {
	var fields []reflect.StructField
	var values []reflect.Value
	for _, p := range parts {
		v := reflect.Indirect(reflect.ValueOf(p))
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			if name, _, _ := strings.Cut(sf.Tag.Get("yaml"), ","); name == "-" || !sf.IsExported() {
				continue
			}
			fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", len(fields)), Type: sf.Type, Tag: sf.Tag})
			values = append(values, v.Field(i))
		}
	}
	out := reflect.New(reflect.StructOf(fields)).Elem()
	for i, x := range values {
		out.Field(i).Set(x)
	}
	return out.Interface()
}

// Strings returns every string of c a placeholder may be in, by its key relative to the target:
// mapping ("url", "command[1]", "env.X"): the common url, ready and metrics, and every string,
// list of strings and map of strings among the kind's parameters.
func (c *Config) Strings() map[string]string {
	out := map[string]string{"url": c.URL, "ready": c.Ready, "metrics": c.Metrics}
	if c.Params == nil {
		return out
	}
	v := reflect.Indirect(reflect.ValueOf(c.Params))
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if key == "" || key == "-" {
			continue
		}
		switch f := v.Field(i); {
		case f.Kind() == reflect.String:
			out[key] = f.String()
		case f.Kind() == reflect.Slice && f.Type().Elem().Kind() == reflect.String:
			for j := range f.Len() {
				out[fmt.Sprintf("%s[%d]", key, j)] = f.Index(j).String()
			}
		case f.Kind() == reflect.Map && f.Type().Elem().Kind() == reflect.String:
			for _, k := range f.MapKeys() {
				out[key+"."+k.String()] = f.MapIndex(k).String()
			}
		}
	}
	return out
}
