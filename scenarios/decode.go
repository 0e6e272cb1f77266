package scenarios

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// The loader decodes through the Go types: a scenario file's keys are the yaml tags of Scenario
// and of every type under it (the service's, claim's and fault types' included), read by
// reflection, so one struct field is one key everywhere (loading, yaml.Marshal, the JSON Schema
// and docs/scenario-format.md). Each value is decoded from its YAML node by its Go type, with the
// node's line kept for every problem:
//
//	string kinds  a scalar                         time.Duration  "250ms", 0, or "0.9x timeout"
//	int           an integer that fits 32 bits      int64          64 bits; uint32 in range
//	float64       a finite number (a rate: "50/s")  bool           true or false
//	[]T           a list (null: none)               map[K]V        a mapping (null: none)
//	*T            T, set only when it decoded       struct         a mapping of its tagged fields
//
// A field's `scenario:"..."` tag adds what the Go type cannot say, comma-separated:
//
//	required   the key must be written, with a value
//	absolute   a duration that cannot be written relative to the timeout
//	rate       a float64 (or the elements of a list or map of them) written as a rate, "50/s"
//	zero       with rate: 0 is a rate too (a phase silencing an endpoint)
//	nonzero    when written, the value must not be 0 (0 means the default only when left out)
//	default=X  what leaving the key out means, in the file's words ("100ms", "1"): for errors
//	           and the docs; the value itself is filled by complete (defaults.go)
//	partial    a struct whose required keys are optional here (a measure under minus:)
//	key=NAME   the key of a field yaml.Marshal leaves out (yaml:"-"): decoded, not written
//	-          not a key of the scenario file (a field the runner fills)
//
// What the types cannot say at all is a rule (rules.go): a type decoded its own way (a fault's
// keys depend on its type, a test is a name or {name: {params}}), keys of a struct decoded
// specially, or a check once a struct is decoded. Adding a key to the scenario format is adding a
// tagged field to the struct it belongs to, and its check to validate.go; see docs/scenario-format.md.

// fieldOpts are a field's `scenario:` tag options.
type fieldOpts struct {
	required, absolute, rate, zero, nonzero, partial bool
	// def is the default= text, "" when the tag gives none.
	def string
}

// structField is one key of a struct type: its yaml name, where the field is (through inline
// embedded structs) and its options.
type structField struct {
	key   string
	index []int
	opts  fieldOpts
	typ   reflect.Type
	// goName is the Go field's name.
	goName string
}

var fieldCache sync.Map // reflect.Type -> []structField

// structFields returns the scenario keys of struct type t in declaration order, with inline
// embedded structs' keys in place. It panics on a tag it cannot read (a programming error that
// the package's tests reach, since they load every built-in).
func structFields(t reflect.Type) []structField {
	if v, ok := fieldCache.Load(t); ok {
		return v.([]structField)
	}
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, yopts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		o, key, skip := parseScenarioTag(t, f)
		if skip {
			continue
		}
		if strings.Contains(","+yopts+",", ",inline,") {
			if f.Type.Kind() != reflect.Struct {
				panic(fmt.Sprintf("scenarios: %s.%s: inline field of kind %s", t, f.Name, f.Type.Kind()))
			}
			for _, sf := range structFields(f.Type) {
				sf.index = append([]int{i}, sf.index...)
				out = append(out, sf)
			}
			continue
		}
		switch {
		case key != "":
			name = key
		case name == "-":
			continue
		case name == "":
			continue // no yaml key: not part of the file (faults.Fault's fields, decoded by its rule)
		}
		out = append(out, structField{key: name, index: []int{i}, opts: o, typ: f.Type, goName: f.Name})
	}
	fieldCache.Store(t, out)
	return out
}

// parseScenarioTag reads a field's `scenario:` tag: its options, a key given with key=, and
// whether the field is no key of the file at all ("-").
func parseScenarioTag(t reflect.Type, f reflect.StructField) (o fieldOpts, key string, skip bool) {
	tag, ok := f.Tag.Lookup("scenario")
	if !ok || tag == "" {
		return o, "", false
	}
	if tag == "-" {
		return o, "", true
	}
	for _, opt := range strings.Split(tag, ",") {
		switch opt = strings.TrimSpace(opt); {
		case opt == "required":
			o.required = true
		case opt == "absolute":
			o.absolute = true
		case opt == "rate":
			o.rate = true
		case opt == "zero":
			o.zero = true
		case opt == "nonzero":
			o.nonzero = true
		case opt == "partial":
			o.partial = true
		case strings.HasPrefix(opt, "default="):
			o.def = strings.TrimPrefix(opt, "default=")
		case strings.HasPrefix(opt, "key="):
			key = strings.TrimPrefix(opt, "key=")
		default:
			panic(fmt.Sprintf("scenarios: %s.%s: unknown scenario tag option %q", t, f.Name, opt))
		}
	}
	return o, key, false
}

var (
	durationType    = reflect.TypeFor[time.Duration]()
	unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// fieldsOf returns the mapping fields of the struct v (addressable): one per key of its type,
// each decoding into v's field, with the keys its rule decodes itself and the keys the rule adds
// for this node (n, the mapping about to be decoded).
func (d *decoder) fieldsOf(n *yaml.Node, v reflect.Value, partial bool) []field {
	rule := structRules[v.Type()]
	var out []field
	for _, sf := range structFields(v.Type()) {
		fv := v.FieldByIndex(sf.index)
		f := field{name: sf.key, required: sf.opts.required && !partial, decode: d.valueOf(fv, sf.opts)}
		if k, ok := rule.keys[sf.key]; ok {
			f.decode = func(n *yaml.Node, path string) { k(d, n, path, v) }
		}
		out = append(out, f)
	}
	if rule.extra != nil {
		out = append(out, rule.extra(d, n, v)...)
	}
	return out
}

// decodeStruct decodes the mapping n into the struct v at path, then runs its rule's check. It
// returns false when n is not a mapping.
func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value, partial bool) bool {
	if !d.mapping(n, path, d.fieldsOf(n, v, partial)) {
		return false
	}
	if after := structRules[v.Type()].after; after != nil {
		after(d, deref(n), path, v)
	}
	return true
}

// valueOf returns the decoder of one value: v is addressable and receives what the node holds.
// It panics on a Go type the scenario format has no YAML form for.
func (d *decoder) valueOf(v reflect.Value, o fieldOpts) func(*yaml.Node, string) {
	t := v.Type()
	if r, ok := typeRules[t]; ok {
		return func(n *yaml.Node, path string) { r(d, n, path, v) }
	}
	if t == durationType {
		dst := v.Addr().Interface().(*time.Duration)
		return d.checked(o, d.duration(dst, !o.absolute), func() bool { return *dst == 0 })
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return func(n *yaml.Node, path string) { d.unmarshal(n, path, v) }
	}
	elem := o
	elem.required, elem.nonzero = false, false
	switch t.Kind() {
	case reflect.Slice:
		return func(n *yaml.Node, path string) { d.decodeSlice(n, path, v, elem) }
	case reflect.Map:
		return func(n *yaml.Node, path string) { d.decodeMap(n, path, v, elem) }
	case reflect.Pointer:
		return func(n *yaml.Node, path string) { d.decodePointer(n, path, v, o) }
	case reflect.Struct:
		return func(n *yaml.Node, path string) { d.decodeStruct(n, path, v, o.partial) }
	}
	return d.scalarOf(v, o)
}

// scalarOf returns the decoder of a string, bool, integer or float value.
func (d *decoder) scalarOf(v reflect.Value, o fieldOpts) func(*yaml.Node, string) {
	switch t := v.Type(); t.Kind() {
	case reflect.String:
		return func(n *yaml.Node, path string) {
			if s, ok := d.scalar(n, path, "a string"); ok {
				v.SetString(s)
			}
		}
	case reflect.Bool:
		return func(n *yaml.Node, path string) {
			n = deref(n)
			if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
				d.addAt(n.Line, path, "expected true or false, got %s", describe(n))
				return
			}
			v.SetBool(strings.EqualFold(n.Value, "true"))
		}
	case reflect.Int, reflect.Int64:
		bits := 32 // an int of the file is a size or a count: it must fit everywhere
		if t.Kind() == reflect.Int64 {
			bits = 64
		}
		return d.checked(o, func(n *yaml.Node, path string) {
			if x, ok := d.integer(n, path, bits); ok {
				v.SetInt(x)
			}
		}, func() bool { return v.Int() == 0 })
	case reflect.Uint32:
		return func(n *yaml.Node, path string) {
			if x, ok := d.integer(n, path, 64); ok {
				if x < 0 || x > math.MaxUint32 {
					d.add(path, "must be between 0 and %d, got %d", uint32(math.MaxUint32), x)
					return
				}
				v.SetUint(uint64(x))
			}
		}
	case reflect.Float64:
		return d.checked(o, func(n *yaml.Node, path string) { d.decodeFloat(n, path, v, o) }, func() bool { return v.Float() == 0 })
	}
	panic(fmt.Sprintf("scenarios: no YAML form for a field of type %s", v.Type()))
}

// decodeFloat decodes a number, or with the rate option a rate ("50/s"; 0 too with zero).
func (d *decoder) decodeFloat(n *yaml.Node, path string, v reflect.Value, o fieldOpts) {
	var x float64
	before := len(d.list)
	switch {
	case o.rate && o.zero && isZeroRateNode(n):
	case o.rate:
		d.rate(&x)(n, path)
	default:
		d.floatField(&x)(n, path)
	}
	if len(d.list) == before {
		v.SetFloat(x)
	}
}

// decodeSlice decodes a list into the slice v, each element with the options o (null: none).
func (d *decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value, o fieldOpts) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.addAt(n.Line, path, "expected a list, got %s", describe(n))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	d.sequence(n, path, func(i int, c *yaml.Node, p string) { d.valueOf(s.Index(i), o)(c, p) })
	v.Set(s)
}

// decodePointer decodes into a new value and sets the pointer v to it: always for a struct (a
// mapping that decoded, whatever its fields' problems), only without problems for anything
// else. A null where a struct belongs is refused: {} is how a file asks for every default.
func (d *decoder) decodePointer(n *yaml.Node, path string, v reflect.Value, o fieldOpts) {
	et := v.Type().Elem()
	if et.Kind() == reflect.Struct {
		if isNull(deref(n)) {
			d.add(path, "expected a mapping (use {} for all defaults)")
			return
		}
		p := reflect.New(et)
		if d.decodeStruct(n, path, p.Elem(), o.partial) {
			v.Set(p)
		}
		return
	}
	p := reflect.New(et)
	before := len(d.list)
	d.valueOf(p.Elem(), o)(n, path)
	if len(d.list) == before {
		v.Set(p)
	}
}

// checked wraps dec with the nonzero option: a value written as 0 is reported, since 0 stands for
// the default only when the key is left out.
func (d *decoder) checked(o fieldOpts, dec func(*yaml.Node, string), zero func() bool) func(*yaml.Node, string) {
	if !o.nonzero {
		return dec
	}
	return func(n *yaml.Node, path string) {
		before, pending := len(d.list), len(d.pending)
		dec(n, path)
		if len(d.list) == before && len(d.pending) == pending && zero() {
			def := "the default"
			if o.def != "" {
				def = o.def
			}
			d.add(path, "must be > 0 when set (omit it for %s), got 0", def)
		}
	}
}

// decodeMap decodes a mapping into the map v: keys as v's key type, each value as its element
// type with the options o; a duplicate key is reported once.
func (d *decoder) decodeMap(n *yaml.Node, path string, v reflect.Value, o fieldOpts) {
	n = deref(n)
	if isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		d.addAt(n.Line, path, "expected a mapping, got %s", describe(n))
		return
	}
	t := v.Type()
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			d.addAt(k.Line, path, "a key must be a plain name, got %s", describe(k))
			continue
		}
		fp := path + "." + k.Value
		d.lines[fp] = k.Line
		key := reflect.New(t.Key()).Elem()
		before := len(d.list)
		d.valueOf(key, fieldOpts{})(k, fp)
		if len(d.list) != before {
			continue
		}
		if m.MapIndex(key).IsValid() {
			d.addAt(k.Line, fp, "duplicate key %q", k.Value)
			continue
		}
		val := reflect.New(t.Elem()).Elem()
		d.valueOf(val, o)(n.Content[i+1], fp)
		if len(d.list) == before {
			m.SetMapIndex(key, val)
		}
	}
	v.Set(m)
}

// unmarshal decodes n into v through v's own UnmarshalYAML (a type of another package with a
// short form, such as scrape.Series), reporting its error at n's line.
func (d *decoder) unmarshal(n *yaml.Node, path string, v reflect.Value) {
	n = deref(n)
	p := reflect.New(v.Type())
	if err := n.Decode(p.Interface()); err != nil {
		d.addAt(n.Line, path, "%s", yamlLineRef.ReplaceAllString(strings.TrimPrefix(err.Error(), "yaml: "), ""))
		return
	}
	v.Set(p.Elem())
}

// isZeroRateNode reports whether n is a scalar rate of zero ("0", "0/s", "0/1m").
func isZeroRateNode(n *yaml.Node) bool {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return false
	}
	num, _, _ := strings.Cut(strings.TrimSpace(n.Value), "/")
	x, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	return err == nil && x == 0
}
