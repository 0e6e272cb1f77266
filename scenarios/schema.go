package scenarios

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/service"
	"github.com/bulkheadlab/bulkhead/target"
)

// JSONSchema returns the JSON Schema (draft 2020-12) of a scenario file, generated from the
// types the loader decodes through (decode.go) and the registries (fault types, pool kinds,
// target kinds, tests, metrics): every key with its type, required keys, the string-or-object
// forms, durations (also "0.9x timeout"), rates ("50/s"). An editor given it (the
// yaml-language-server modeline at the top of a scenario) completes and checks keys as you
// type. It accepts what the loader can decode; what needs the whole file (a fault on a
// dependency that exists, a pool covering each dependency once) is the loader's to say.
func JSONSchema() []byte {
	g := &schemaGen{defs: map[string]any{}}
	root := g.structSchema(reflect.TypeFor[Scenario](), false)
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = "https://bulkheadlab.github.io/bulkhead/scenario.schema.json"
	root["title"] = "bulkhead scenario"
	root["description"] = "A bulkhead experiment: dependencies, endpoints, pool layouts (configurations), open-model load, phases with faults, and the claims the run is judged by. docs/scenario-format.md describes every key."
	root["patternProperties"] = map[string]any{"^x-": true} // extension keys: a place for YAML anchors
	root["$defs"] = g.defs
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		panic(err) // maps of strings, bools and numbers only
	}
	return append(out, '\n')
}

type schemaGen struct {
	defs map[string]any
}

// Patterns of the scalar forms, as the loader reads them.
const (
	durationPattern = `^\s*-?([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h)(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|ms|s|m|h))*\s*$`
	relativePattern = `^\s*-?([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*x(\s+timeout)?\s*$`
	ratePattern     = `^\s*([0-9]+(\.[0-9]*)?|\.[0-9]+)\s*(/\s*([0-9]+(\.[0-9]*)?)?(ns|us|µs|ms|s|m|h))?\s*$`
)

func durationSchema(relative bool) map[string]any {
	forms := []any{
		map[string]any{"type": "string", "pattern": durationPattern},
		map[string]any{"const": 0},
	}
	desc := `a duration with its unit, "250ms", "1.5s" (or 0)`
	if relative {
		forms = append(forms, map[string]any{"type": "string", "pattern": relativePattern})
		desc += `, or relative to the client timeout: "0.9x timeout", "0.9x"`
	}
	return map[string]any{"anyOf": forms, "description": desc}
}

func rateSchema(zero bool) map[string]any {
	num := map[string]any{"type": "number", "exclusiveMinimum": 0}
	if zero {
		num = map[string]any{"type": "number", "minimum": 0}
	}
	return map[string]any{
		"anyOf":       []any{num, map[string]any{"type": "string", "pattern": ratePattern}},
		"description": `requests per second: "50/s", "3000/1m", or a number`,
	}
}

// defName is the $defs name of a struct type (package-qualified when it is another package's).
func defName(t reflect.Type, partial bool) string {
	name := t.Name()
	if pkg := t.PkgPath(); !strings.HasSuffix(pkg, "/scenarios") {
		name = pkg[strings.LastIndex(pkg, "/")+1:] + "." + name
	}
	if partial {
		name += ".partial"
	}
	return name
}

// ref returns a reference to struct type t's definition, generating it once.
func (g *schemaGen) ref(t reflect.Type, partial bool) map[string]any {
	name := defName(t, partial)
	if _, ok := g.defs[name]; !ok {
		g.defs[name] = true // a placeholder against recursion (a measure's minus: is a measure)
		g.defs[name] = g.structSchema(t, partial)
	}
	return map[string]any{"$ref": "#/$defs/" + name}
}

// structSchema is the schema of one struct type's mapping: its keys, the keys its rule adds,
// and its required keys.
func (g *schemaGen) structSchema(t reflect.Type, partial bool) map[string]any {
	if s, ok := g.special(t); ok {
		return s
	}
	props := map[string]any{}
	var required []string
	for _, sf := range structFields(t) {
		props[sf.key] = g.valueSchema(sf.typ, sf.opts)
		if sf.opts.required && !partial {
			required = append(required, sf.key)
		}
	}
	for k, v := range schemaExtraKeys[t] {
		props[k] = v
	}
	if t == reflect.TypeFor[Configuration]() { // a rule's key (decodePools): a list, or "default"
		props["pools"] = map[string]any{"anyOf": []any{
			map[string]any{"const": "default", "description": "DefaultPools of the configuration's mode and size"},
			g.valueSchema(reflect.TypeFor[[]Pool](), fieldOpts{}),
		}}
	}
	for key, values := range schemaEnums(t) {
		if p, ok := props[key].(map[string]any); ok {
			p["enum"] = values
		}
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// valueSchema is the schema of one value of Go type t, with its field's options.
func (g *schemaGen) valueSchema(t reflect.Type, o fieldOpts) any {
	if t == durationType {
		return durationSchema(!o.absolute)
	}
	if s, ok := g.special(t); ok {
		return s
	}
	elem := o
	elem.required = false
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int64:
		return map[string]any{"type": "integer"}
	case reflect.Uint32:
		return map[string]any{"type": "integer", "minimum": 0}
	case reflect.Float64:
		if o.rate {
			return rateSchema(o.zero)
		}
		return map[string]any{"type": "number"}
	case reflect.Slice:
		return map[string]any{"type": []any{"array", "null"}, "items": g.valueSchema(t.Elem(), elem)}
	case reflect.Map:
		m := map[string]any{"type": []any{"object", "null"}, "additionalProperties": g.valueSchema(t.Elem(), elem)}
		if t.Key().Kind() == reflect.Int {
			m["propertyNames"] = map[string]any{"pattern": "^[0-9]+$"}
		}
		return m
	case reflect.Pointer:
		return g.valueSchema(t.Elem(), o)
	case reflect.Struct:
		return g.ref(t, o.partial)
	}
	return true
}

// special returns the schema of the types a rule decodes (rules.go) and of the types of other
// packages that decode themselves.
func (g *schemaGen) special(t reflect.Type) (map[string]any, bool) {
	switch t {
	case reflect.TypeFor[faults.Fault]():
		return g.faultSchema(), true
	case reflect.TypeFor[Pool]():
		return g.poolSchema(), true
	case reflect.TypeFor[Target]():
		return g.targetSchema(), true
	case reflect.TypeFor[Test]():
		var branches []any
		for _, name := range TestKinds() {
			_, ps, _ := TestParams(name)
			props := map[string]any{"except": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}
			for _, p := range ps {
				props[p.Name] = map[string]any{"type": "number", "default": p.Default, "description": p.Doc}
			}
			branches = append(branches, map[string]any{"type": "object", "additionalProperties": false,
				"properties": map[string]any{name: map[string]any{"type": []any{"object", "null"}, "properties": props, "additionalProperties": false}},
				"required":   []any{name}})
		}
		return map[string]any{
			"description": "a registered test by name, or {name: {parameter: number}}",
			"oneOf":       append([]any{map[string]any{"type": "string", "enum": toAny(TestKinds())}}, branches...),
		}, true
	case reflect.TypeFor[claim.Floor]():
		return map[string]any{"description": `a share of the figure ("10%") or a number in the metric's unit`,
			"anyOf": []any{map[string]any{"type": "number", "minimum": 0}, map[string]any{"type": "string", "pattern": `^\s*[0-9]+(\.[0-9]*)?\s*%\s*$`}}}, true
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) && t.Kind() == reflect.Struct {
		// A type with a short form (scrape.Series): its first key's value alone, or the mapping.
		obj := g.plainStruct(t)
		first := structFields(t)[0]
		return map[string]any{"anyOf": []any{g.valueSchema(first.typ, first.opts), obj}}, true
	}
	return nil, false
}

// plainStruct is structSchema without the special forms (for a type that has a short form too).
func (g *schemaGen) plainStruct(t reflect.Type) map[string]any {
	props := map[string]any{}
	for _, sf := range structFields(t) {
		props[sf.key] = g.valueSchema(sf.typ, sf.opts)
	}
	return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
}

// paramProps returns the schema of a registry's parameter struct (a pointer to it), as the loader
// decodes its fields (durations relative to the timeout).
func (g *schemaGen) paramProps(params any) map[string]any {
	props := map[string]any{}
	if params == nil {
		return props
	}
	for _, sf := range structFields(reflect.TypeOf(params).Elem()) {
		props[sf.key] = g.valueSchema(sf.typ, sf.opts)
	}
	return props
}

// kindBranches builds one branch per registered kind: the common keys, the kind's parameters,
// and the key naming the kind. A kind may be left out of the mapping only where absentKind says
// which one it then is.
func kindBranches(key string, kinds []string, common map[string]any, params func(kind string) map[string]any, required []string, absentKind string) []any {
	var out []any
	for _, k := range kinds {
		props := map[string]any{}
		for n, v := range common {
			props[n] = v
		}
		for n, v := range params(k) {
			props[n] = v
		}
		props[key] = map[string]any{"const": k}
		req := append([]string{}, required...)
		if k != absentKind {
			req = append(req, key)
		}
		out = append(out, map[string]any{"type": "object", "properties": props, "required": toAny(req), "additionalProperties": false})
	}
	return out
}

func (g *schemaGen) faultSchema() map[string]any {
	common := map[string]any{
		"dependency": map[string]any{"type": "string", "description": "the dependency whose proxy the fault acts on"},
		"toxicity":   map[string]any{"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "the share of connections it acts on, drawn per connection (toxic-made faults only)"},
		"direction":  map[string]any{"enum": []any{"downstream", "upstream"}},
	}
	branches := kindBranches("type", faults.Types(), common, func(k string) map[string]any {
		p, _ := faults.NewParams(k)
		return g.paramProps(p)
	}, []string{"dependency"}, "")
	return map[string]any{"description": "a fault: its type, the dependency, and the type's parameters", "oneOf": branches}
}

func (g *schemaGen) poolSchema() map[string]any {
	common := map[string]any{}
	var required []string
	for _, sf := range structFields(reflect.TypeFor[Pool]()) {
		if sf.key == "kind" {
			continue
		}
		common[sf.key] = g.valueSchema(sf.typ, sf.opts)
		if sf.opts.required {
			required = append(required, sf.key)
		}
	}
	for k, v := range schemaExtraKeys[reflect.TypeFor[Pool]()] {
		common[k] = v
	}
	var kinds []string
	for _, k := range service.PoolKinds() {
		kinds = append(kinds, string(k))
	}
	// With kind left out a pool is the default kind: its branch does not require kind.
	branches := kindBranches("kind", kinds, common, func(k string) map[string]any {
		p, _ := service.NewPoolParams(service.PoolKind(k))
		return g.paramProps(p)
	}, required, string(service.DefaultPoolKind))
	return map[string]any{"description": "a pool: its kind (default " + string(service.DefaultPoolKind) + "), size, waiting room, the dependencies whose calls take it, and the kind's parameters", "oneOf": branches}
}

func (g *schemaGen) targetSchema() map[string]any {
	common := map[string]any{}
	for _, sf := range structFields(reflect.TypeFor[Target]()) {
		if sf.key != "kind" {
			common[sf.key] = g.valueSchema(sf.typ, sf.opts)
		}
	}
	var branches []any
	for _, name := range target.Kinds() {
		k, _ := target.Lookup(name)
		if name == target.BuiltInKind {
			continue // the built-in service is no target: mapping
		}
		props := map[string]any{}
		for n, v := range common {
			props[n] = v
		}
		var required []string
		if p := k.NewParams(); p != nil {
			for _, sf := range structFields(reflect.TypeOf(p).Elem()) {
				props[sf.key] = g.valueSchema(sf.typ, sf.opts)
				if sf.opts.required {
					required = append(required, sf.key)
				}
			}
		}
		props["kind"] = map[string]any{"const": name, "description": k.Doc()}
		// Without kind:, the key that selects the kind must be written.
		branch := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
		if k.Key() != "" {
			branch["anyOf"] = []any{map[string]any{"required": []any{"kind"}}, map[string]any{"required": []any{k.Key()}}}
		} else {
			required = append(required, "kind")
		}
		if len(required) > 0 {
			branch["required"] = toAny(required)
		}
		branches = append(branches, branch)
	}
	return map[string]any{"description": "the system under test when it is not the built-in service: a target of a registered kind", "anyOf": branches}
}

// schemaExtraKeys are keys the loader reads before it decodes (expand.go's families and
// templates), by the type they may appear on.
var schemaExtraKeys = map[reflect.Type]map[string]any{
	reflect.TypeFor[Dependency](): {keyCount: map[string]any{"type": "integer", "minimum": 1, "description": "stands for this many dependencies named <name>-<i>"}},
	reflect.TypeFor[Endpoint]():   {keyForEach: map[string]any{"type": "string", "description": "one copy per member of this dependency family, {dep} replaced by its name"}},
	reflect.TypeFor[Pool]():       {keyForEach: map[string]any{"type": "string", "description": "one copy per member of this dependency family, {dep} replaced by its name"}},
}

// schemaEnums returns the closed sets of values of some string keys of t, from the registries
// and the package's constants.
func schemaEnums(t reflect.Type) map[string][]any {
	switch t {
	case reflect.TypeFor[Configuration](), reflect.TypeFor[Layout]():
		return map[string][]any{"mode": {string(service.ModeShared), string(service.ModeSplit), string(service.ModeNone)}}
	case reflect.TypeFor[LoadSpec]():
		return map[string][]any{"arrivals": {ArrivalsConstant, ArrivalsPoisson}}
	case reflect.TypeFor[Endpoint]():
		return map[string][]any{"deadline": {string(service.DeadlinePerCall), string(service.DeadlineShared)}}
	case reflect.TypeFor[claim.Condition](), reflect.TypeFor[claim.Claim]():
		return map[string][]any{"op": toAny(claim.ClaimOps)}
	case reflect.TypeFor[claim.Measure]():
		names := append(slices.Clone(claim.EndpointMetrics), claim.ResourceMetrics...)
		slices.Sort(names)
		return map[string][]any{"metric": toAny(slices.Compact(names))}
	}
	return nil
}

func toAny[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
