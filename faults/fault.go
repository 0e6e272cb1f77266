package faults

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Fault is one fault in front of one dependency: the same struct in a scenario (as written,
// amounts resolved), in a run folder's manifest (with the measured switch times) and in the
// report.
//
// In YAML and JSON it is one flat mapping: dependency, type, toxicity and direction, then the
// keys of its type's parameters; JSON adds applied_at_ns, removed_at_ns and a description.
type Fault struct {
	// Dependency names the dependency whose proxy (or server) the fault acts on.
	Dependency string
	// Type names the fault type (see Types). It is Params.Name() when Params is set.
	Type string
	// Toxicity is the share of connections a toxic acts on, drawn once per connection; in
	// (0, 1]. 0 means 1: every connection. Only for faults that install a toxic.
	Toxicity float64
	// Direction is the stream a toxic acts on. The zero value means Downstream. Only for faults
	// that install a toxic.
	Direction Direction
	// Params are the type's parameters; nil only for a type this build does not know (read
	// from a manifest written by another version).
	Params Params
	// AppliedAt and RemovedAt are the offsets from the time line's start at which the fault
	// actually switched on and off, measured by the runner; -1 when it never did. Zero in a
	// scenario.
	AppliedAt time.Duration
	RemovedAt time.Duration
}

// New returns the fault p on dependency, every connection, downstream.
func New(dependency string, p Params) Fault {
	return Fault{Dependency: dependency, Type: p.Name(), Params: p}
}

// Check returns every problem with f's type, toxicity, direction and parameters, each naming
// its key ("latency", "toxicity"; "type" for an unknown type); nil when f can be applied. It does
// not check that the dependency exists.
func (f Fault) Check() []Problem {
	if f.Params == nil {
		return []Problem{problemf("type", "unknown fault type %q (known: %s)", f.Type, strings.Join(Types(), ", "))}
	}
	if f.Params.Name() != f.Type {
		return []Problem{problemf("type", "type %q does not match its parameters (%s)", f.Type, f.Params.Name())}
	}
	var ps []Problem
	isToxic := f.Params.Effect().Toxic != nil
	if f.Toxicity != 0 {
		switch {
		case !isToxic:
			ps = append(ps, problemf("toxicity", "only a fault made by a Toxiproxy toxic takes toxicity (%s is not one)", f.Type))
		case !(f.Toxicity > 0 && f.Toxicity <= 1) || !finite(f.Toxicity):
			ps = append(ps, problemf("toxicity", "must be more than 0 and at most 1 (the share of connections), got %v", f.Toxicity))
		}
	}
	if f.Direction != "" {
		if _, err := ParseDirection(string(f.Direction)); err != nil {
			ps = append(ps, Problem{Field: "direction", Reason: err.Error()})
		} else if !isToxic {
			ps = append(ps, problemf("direction", "only a fault made by a Toxiproxy toxic takes a direction (%s is not one)", f.Type))
		}
	}
	return append(ps, f.Params.Check()...)
}

// Effect returns what f installs, with a toxic's stream and toxicity filled in from f. It returns
// the zero Effect (nothing) when Params is nil.
func (f Fault) Effect() Effect {
	if f.Params == nil {
		return Effect{}
	}
	e := f.Params.Effect()
	if e.Toxic != nil {
		t := *e.Toxic
		t.Stream, _ = ParseDirection(string(f.Direction))
		t.Toxicity = f.share()
		e.Toxic = &t
	}
	return e
}

// share is the toxicity with its default.
func (f Fault) share() float64 {
	if f.Toxicity == 0 {
		return 1
	}
	return f.Toxicity
}

// Symptom returns how f shows to a caller (see Symptom): its type's, when it acts on every
// connection, and the zero Symptom when it acts on a share of them or its type is unknown.
func (f Fault) Symptom() Symptom {
	if f.Params == nil || f.share() < 1 {
		return Symptom{}
	}
	return f.Params.Symptom()
}

// String describes f with its resolved amounts: "latency 450ms on A", "reset upstream on A",
// "slicer 64±16 B every 1ms on A for 50% of connections".
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(f.Type)
	if f.Params != nil {
		if s := f.Params.String(); s != "" {
			b.WriteString(" " + s)
		}
	}
	if f.Direction == Upstream {
		b.WriteString(" upstream")
	}
	b.WriteString(" on " + f.Dependency)
	if f.Toxicity != 0 && f.Toxicity != 1 {
		fmt.Fprintf(&b, " for %g%% of connections", 100*f.Toxicity)
	}
	return b.String()
}

// head is the part of the flat mapping Fault itself owns, before the parameters.
type head struct {
	Dependency string    `json:"dependency" yaml:"dependency"`
	Type       string    `json:"type" yaml:"type"`
	Toxicity   float64   `json:"toxicity,omitempty" yaml:"toxicity,omitempty"`
	Direction  Direction `json:"direction,omitempty" yaml:"direction,omitempty"`
}

// tail is the part after the parameters: what a run measured, and a description for readers.
type tail struct {
	AppliedAt   time.Duration `json:"applied_at_ns"`
	RemovedAt   time.Duration `json:"removed_at_ns"`
	Description string        `json:"description,omitempty"`
}

// MarshalJSON writes f as one flat object: dependency, type, toxicity and direction when set,
// the parameters under their json names, applied_at_ns, removed_at_ns and description.
func (f Fault) MarshalJSON() ([]byte, error) {
	parts := []any{head{f.Dependency, f.Type, f.Toxicity, f.Direction}}
	if f.Params != nil {
		parts = append(parts, f.Params)
	}
	parts = append(parts, tail{f.AppliedAt, f.RemovedAt, f.String()})
	var out bytes.Buffer
	out.WriteByte('{')
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("faults: encode %s: %w", f.Type, err)
		}
		inner := bytes.TrimSpace(b[1 : len(b)-1]) // an object: drop its braces
		if len(inner) == 0 {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(inner)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes. A type this build does not know is kept by name
// with nil Params (a manifest from another version stays readable); the description is not read
// back, String derives it.
func (f *Fault) UnmarshalJSON(data []byte) error {
	var h struct {
		head
		tail
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return err
	}
	*f = Fault{Dependency: h.Dependency, Type: h.Type, Toxicity: h.Toxicity, Direction: h.Direction,
		AppliedAt: h.AppliedAt, RemovedAt: h.RemovedAt}
	if p, ok := NewParams(h.Type); ok {
		if err := json.Unmarshal(data, p); err != nil {
			return fmt.Errorf("faults: decode %s parameters: %w", h.Type, err)
		}
		f.Params = p
	}
	return nil
}

// MarshalYAML writes f as the flat mapping a scenario file holds (dependency, type, toxicity and
// direction when set, then the parameters under their yaml names), so that a marshalled scenario
// loads back to the same faults. It builds a struct of those fields with reflect, so that the
// YAML encoder keeps their order and honours omitempty.
func (f Fault) MarshalYAML() (any, error) {
	fields := []reflect.StructField{}
	values := []reflect.Value{}
	hv := reflect.ValueOf(head{f.Dependency, f.Type, f.Toxicity, f.Direction})
	for i := range hv.NumField() {
		fields = append(fields, hv.Type().Field(i))
		values = append(values, hv.Field(i))
	}
	if f.Params != nil {
		pv := reflect.ValueOf(f.Params).Elem()
		for i := range pv.NumField() {
			sf := pv.Type().Field(i)
			fields = append(fields, reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag})
			values = append(values, pv.Field(i))
		}
	}
	v := reflect.New(reflect.StructOf(fields)).Elem()
	for i, x := range values {
		v.Field(i).Set(x)
	}
	return v.Interface(), nil
}
