package model

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// JSONSchema returns a JSON Schema (draft 2020-12) of the JSON that encoding/json writes for a
// value of root's type, the way summary.json and the verdict block are written: one $defs entry
// per struct type, a property per exported field under its json name, required unless the field
// is omitempty or omitzero, null allowed where Go may write it (pointers, nil slices and maps),
// and no other properties. A type with its own MarshalJSON (a fault) is described only as what
// it writes at the top (an object), and time.Time as a date-time string. It is how
// docs/summary.schema.json and docs/verdict.schema.json are made (report's TestSchemasPublished).
func JSONSchema(root any, id, title, description string) ([]byte, error) {
	g := &schemaGen{defs: map[string]any{}, seen: map[string]reflect.Type{}}
	t := reflect.TypeOf(root)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	s := map[string]any{
		"$schema":     "https://json-schema.org/draft/2020-12/schema",
		"$id":         id,
		"title":       title,
		"description": description,
		"$ref":        g.ref(t)["$ref"],
		"$defs":       g.defs,
	}
	if g.err != nil {
		return nil, g.err
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

type schemaGen struct {
	defs map[string]any
	seen map[string]reflect.Type
	err  error
}

var (
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textType      = reflect.TypeFor[encoding.TextMarshaler]()
	timeType      = reflect.TypeFor[time.Time]()
)

// ref returns a reference to t's definition, adding it on first use.
func (g *schemaGen) ref(t reflect.Type) map[string]any {
	name := t.Name()
	if prev, ok := g.seen[name]; ok {
		if prev != t && g.err == nil {
			g.err = fmt.Errorf("schema: two types named %s (%s and %s)", name, prev, t)
		}
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	g.seen[name] = t
	props := map[string]any{}
	var required []string
	g.fields(t, props, &required)
	def := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		def["required"] = required
	}
	g.defs[name] = def
	return map[string]any{"$ref": "#/$defs/" + name}
}

// fields adds the properties of struct t (embedded structs without a name inlined).
func (g *schemaGen) fields(t reflect.Type, props map[string]any, required *[]string) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			g.fields(f.Type, props, required)
			continue
		}
		if name == "" {
			name = f.Name
		}
		props[name] = g.of(f.Type)
		if !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
}

// of returns the schema of a value of type t.
func (g *schemaGen) of(t reflect.Type) any {
	switch {
	case t == timeType:
		return map[string]any{"type": "string", "format": "date-time"}
	case t.Implements(marshalerType) || reflect.PointerTo(t).Implements(marshalerType):
		return map[string]any{"type": "object", "$comment": t.String() + " writes its own JSON"}
	case t.Implements(textType):
		return map[string]any{"type": "string"}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return nullable(g.of(t.Elem()))
	case reflect.Struct:
		return g.ref(t)
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return map[string]any{"type": "string", "contentEncoding": "base64"}
		}
		return nullable(map[string]any{"type": "array", "items": g.of(t.Elem())})
	case reflect.Array:
		return map[string]any{"type": "array", "items": g.of(t.Elem())}
	case reflect.Map:
		return nullable(map[string]any{"type": "object", "additionalProperties": g.of(t.Elem())})
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	}
	return map[string]any{} // an interface: anything
}

// nullable allows null besides s.
func nullable(s any) any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
}
