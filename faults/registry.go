package faults

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"
)

// Params are one fault type's parameters: a pointer to the type's own struct, whose yaml tags
// name its keys in a scenario file and whose json tags name them in a manifest. Every field is a
// time.Duration, int, int64, float64 or string (Register checks). The zero value of each field is
// what a scenario that leaves the key out gets.
type Params interface {
	// Name is the type as a scenario writes it ("latency").
	Name() string
	// Check returns every problem with the parameters, each naming its key ("latency") and why;
	// nil when they can be applied.
	Check() []Problem
	// Effect describes what the fault installs, as data. A toxic's Stream and Toxicity are left
	// zero: Fault.Effect fills them from the fault.
	Effect() Effect
	// Symptom says how the fault shows to a caller with a client timeout (see Symptom).
	Symptom() Symptom
	// String writes the amounts ("450ms±20ms"), "" for a type without parameters.
	String() string
}

// Problem is one thing wrong with a fault: the key it is about (a yaml name, "latency"; "" for
// the fault as a whole) and the reason.
type Problem struct {
	Field  string
	Reason string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Reason
	}
	return p.Field + ": " + p.Reason
}

// problemf builds a Problem about field.
func problemf(field, format string, args ...any) Problem {
	return Problem{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// registry maps a type's name to its parameter struct.
var registry = map[string]reflect.Type{}

// reserved are the keys Fault itself writes; a type's parameters may not use them.
var reserved = []string{"dependency", "type", "toxicity", "direction", "applied_at_ns", "removed_at_ns", "description"}

// Register adds a fault type, given a pointer to a zero value of its parameter struct. Call it from
// the type's init function. It panics (misuse) on a nil or non-struct-pointer value, a name already
// registered, a field without a yaml and a json name or of an unsupported kind, and a key that
// Fault reserves or that two fields share.
func Register(proto Params) {
	v := reflect.ValueOf(proto)
	if proto == nil || v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("faults: Register(%T): want a pointer to a struct", proto))
	}
	name := proto.Name()
	if name == "" {
		panic(fmt.Sprintf("faults: Register(%T): empty name", proto))
	}
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("faults: Register(%T): fault type %q registered twice", proto, name))
	}
	st := v.Elem().Type()
	seen := map[string]bool{}
	for i := range st.NumField() {
		sf := st.Field(i)
		y, j := tagName(sf, "yaml"), tagName(sf, "json")
		switch {
		case !sf.IsExported() || y == "" || y == "-" || j == "" || j == "-":
			panic(fmt.Sprintf("faults: Register(%T): field %s needs a yaml and a json name", proto, sf.Name))
		case !supported(sf.Type):
			panic(fmt.Sprintf("faults: Register(%T): field %s is a %s; use time.Duration, int, int64, float64 or string", proto, sf.Name, sf.Type))
		}
		if slices.Contains([]string{"Dependency", "Type", "Toxicity", "Direction"}, sf.Name) {
			panic(fmt.Sprintf("faults: Register(%T): field name %s is Fault's own", proto, sf.Name))
		}
		for _, k := range []string{y, j} {
			if slices.Contains(reserved, k) {
				panic(fmt.Sprintf("faults: Register(%T): field %s uses the reserved key %q", proto, sf.Name, k))
			}
		}
		if seen["y:"+y] || seen["j:"+j] {
			panic(fmt.Sprintf("faults: Register(%T): field %s repeats a key", proto, sf.Name))
		}
		seen["y:"+y], seen["j:"+j] = true, true
	}
	registry[name] = st
}

func tagName(sf reflect.StructField, key string) string {
	name, _, _ := strings.Cut(sf.Tag.Get(key), ",")
	return name
}

func supported(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[time.Duration](), reflect.TypeFor[int](), reflect.TypeFor[int64](),
		reflect.TypeFor[float64](), reflect.TypeFor[string]():
		return true
	}
	return false
}

// Types returns the names of every registered fault type, sorted.
func Types() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NewParams returns fresh zero parameters of the named type, and false for a name that is not
// registered.
func NewParams(name string) (Params, bool) {
	st, ok := registry[name]
	if !ok {
		return nil, false
	}
	return reflect.New(st).Interface().(Params), true
}

// Field is one key of a type's parameters, for a decoder: Key is its yaml name, Ptr points into
// the parameters and is a *time.Duration, *int, *int64, *float64 or *string.
type Field struct {
	Key string
	Ptr any
}

// Fields returns the keys of p in declaration order, each with a pointer to decode into.
func Fields(p Params) []Field {
	v := reflect.ValueOf(p).Elem()
	out := make([]Field, v.NumField())
	for i := range out {
		out[i] = Field{Key: tagName(v.Type().Field(i), "yaml"), Ptr: v.Field(i).Addr().Interface()}
	}
	return out
}

// TypesTaking returns the sorted names of the types whose parameters have the yaml key key, so
// that a decoder can say "only a latency fault takes jitter".
func TypesTaking(key string) []string {
	var out []string
	for _, name := range Types() {
		st := registry[name]
		for i := range st.NumField() {
			if tagName(st.Field(i), "yaml") == key {
				out = append(out, name)
			}
		}
	}
	return out
}
