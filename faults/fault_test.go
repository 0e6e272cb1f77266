package faults

import (
	"encoding/json"
	"go/build"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestTypesIsTheRegistry(t *testing.T) {
	got := Types()
	if !slices.IsSorted(got) {
		t.Errorf("Types() = %v, want sorted", got)
	}
	for _, name := range got {
		p, ok := NewParams(name)
		if !ok || p.Name() != name {
			t.Errorf("NewParams(%q) = %v, %v", name, p, ok)
		}
	}
	if _, ok := NewParams("explode"); ok {
		t.Error("NewParams of an unregistered name succeeded")
	}
	// The types a scenario file could already name keep their names.
	for _, old := range []string{"latency", "reset", "timeout", "http-error", "down", "bandwidth"} {
		if !slices.Contains(got, old) {
			t.Errorf("type %q is gone from the registry", old)
		}
	}
}

// NewParams returns a fresh value each time: decoding into one does not touch the other.
func TestNewParamsIsFresh(t *testing.T) {
	a, _ := NewParams("latency")
	b, _ := NewParams("latency")
	a.(*Latency).Latency = time.Second
	if b.(*Latency).Latency != 0 {
		t.Error("two NewParams share their value")
	}
}

func TestFields(t *testing.T) {
	p := &Latency{}
	fs := Fields(p)
	if len(fs) != 2 || fs[0].Key != "latency" || fs[1].Key != "jitter" {
		t.Fatalf("Fields = %+v, want latency, jitter", fs)
	}
	*fs[0].Ptr.(*time.Duration) = time.Second // decoding through the pointer sets the field
	if p.Latency != time.Second {
		t.Error("Fields' pointer does not point into the parameters")
	}
	if got := TypesTaking("jitter"); !slices.Equal(got, []string{"latency"}) {
		t.Errorf("TypesTaking(jitter) = %v", got)
	}
	if got := TypesTaking("nothing"); got != nil {
		t.Errorf("TypesTaking(nothing) = %v", got)
	}
}

// Misuse of Register panics at init, so a bad fault type cannot ship.
func TestRegisterPanics(t *testing.T) {
	tests := []struct {
		name  string
		proto Params
		want  string
	}{
		{"nil", nil, "pointer to a struct"},
		{"registered twice", &Latency{}, "registered twice"},
		{"empty name", &badParams{name: ""}, "empty name"},
		{"field without a json name", &noJSON{}, "needs a yaml and a json name"},
		{"unsupported kind", &badKind{}, "use time.Duration"},
		{"reserved key", &reservedKey{}, "reserved key"},
		{"repeated key", &repeatedKey{}, "repeats a key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(r.(string), tt.want) {
					t.Errorf("Register panicked with %v, want %q", r, tt.want)
				}
			}()
			Register(tt.proto)
		})
	}
}

type badParams struct{ name string }

func (b *badParams) Name() string     { return b.name }
func (*badParams) Check() []Problem   { return nil }
func (*badParams) Effect() Effect     { return Effect{} }
func (*badParams) Symptom() Symptom   { return Symptom{} }
func (*badParams) String() string     { return "" }
func (*noJSON) Name() string          { return "no-json" }
func (*badKind) Name() string         { return "bad-kind" }
func (*reservedKey) Name() string     { return "reserved-key" }
func (*repeatedKey) Name() string     { return "repeated-key" }
func (*noJSON) Check() []Problem      { return nil }
func (*badKind) Check() []Problem     { return nil }
func (*reservedKey) Check() []Problem { return nil }
func (*repeatedKey) Check() []Problem { return nil }
func (*noJSON) Effect() Effect        { return Effect{} }
func (*badKind) Effect() Effect       { return Effect{} }
func (*reservedKey) Effect() Effect   { return Effect{} }
func (*repeatedKey) Effect() Effect   { return Effect{} }
func (*noJSON) Symptom() Symptom      { return Symptom{} }
func (*badKind) Symptom() Symptom     { return Symptom{} }
func (*reservedKey) Symptom() Symptom { return Symptom{} }
func (*repeatedKey) Symptom() Symptom { return Symptom{} }
func (*noJSON) String() string        { return "" }
func (*badKind) String() string       { return "" }
func (*reservedKey) String() string   { return "" }
func (*repeatedKey) String() string   { return "" }

type noJSON struct {
	X int `yaml:"x"`
}
type badKind struct {
	X []int `yaml:"x" json:"x"`
}
type reservedKey struct {
	X int `yaml:"toxicity" json:"x"`
}
type repeatedKey struct {
	X int `yaml:"x" json:"x"`
	Y int `yaml:"x" json:"y"`
}

// Check covers what every fault has: its type, toxicity and direction, then its parameters.
func TestFaultCheck(t *testing.T) {
	lat := func() Params { return &Latency{Latency: time.Second} }
	tests := []struct {
		name string
		f    Fault
		want []string // problem fields, in order
	}{
		{"valid", New("A", lat()), nil},
		{"half the connections, upstream", Fault{Dependency: "A", Type: "latency", Params: lat(), Toxicity: 0.5, Direction: Upstream}, nil},
		{"explicit downstream", Fault{Dependency: "A", Type: "latency", Params: lat(), Direction: Downstream}, nil},
		{"unknown type", Fault{Dependency: "A", Type: "explode"}, []string{"type"}},
		{"type does not match parameters", Fault{Dependency: "A", Type: "reset", Params: lat()}, []string{"type"}},
		{"toxicity above 1", Fault{Dependency: "A", Type: "latency", Params: lat(), Toxicity: 1.5}, []string{"toxicity"}},
		{"negative toxicity", Fault{Dependency: "A", Type: "latency", Params: lat(), Toxicity: -0.1}, []string{"toxicity"}},
		{"unknown direction", Fault{Dependency: "A", Type: "latency", Params: lat(), Direction: "sideways"}, []string{"direction"}},
		{"toxicity on down", Fault{Dependency: "A", Type: "down", Params: &Down{}, Toxicity: 0.5}, []string{"toxicity"}},
		{"direction on http-error", Fault{Dependency: "A", Type: "http-error", Params: &HTTPError{}, Direction: Upstream}, []string{"direction"}},
		{"and the parameters", Fault{Dependency: "A", Type: "latency", Params: &Latency{}, Toxicity: 2}, []string{"toxicity", "latency"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range tt.f.Check() {
				got = append(got, p.Field)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Check() at %v, want %v (%v)", got, tt.want, tt.f.Check())
			}
		})
	}
	if p := (Fault{Type: "explode"}).Check(); !strings.Contains(p[0].Reason, strings.Join(Types(), ", ")) {
		t.Errorf("unknown type: %q does not list the known types", p[0].Reason)
	}
}

// Effect fills a toxic's stream and toxicity from the fault.
func TestFaultEffect(t *testing.T) {
	tests := []struct {
		name     string
		f        Fault
		stream   Direction
		toxicity float64
	}{
		{"defaults", New("A", &Reset{}), Downstream, 1},
		{"upstream on a share", Fault{Dependency: "A", Type: "reset", Params: &Reset{}, Direction: Upstream, Toxicity: 0.25}, Upstream, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.f.Effect()
			if e.Toxic == nil || e.Toxic.Stream != tt.stream || e.Toxic.Toxicity != tt.toxicity {
				t.Fatalf("Effect() = %+v, want stream %s toxicity %v", e.Toxic, tt.stream, tt.toxicity)
			}
			if err := e.Toxic.Validate(); err != nil {
				t.Errorf("Validate() = %v", err)
			}
			if want := "bulkhead_reset_peer_" + string(tt.stream); e.Toxic.Name() != want {
				t.Errorf("Name() = %q, want %q", e.Toxic.Name(), want)
			}
		})
	}
	// The parameters' own Effect is not changed by filling in the fault's.
	p := &Reset{}
	_ = Fault{Type: "reset", Params: p, Direction: Upstream}.Effect()
	if p.Effect().Toxic.Stream != "" {
		t.Error("Effect changed the parameters' toxic")
	}
	if e := (Fault{Type: "explode"}).Effect(); e.OnProxy() || e.Status != 0 {
		t.Errorf("unknown type: Effect() = %+v, want nothing", e)
	}
}

func TestToxicValidate(t *testing.T) {
	ok := Toxic{Type: "latency", Stream: Downstream, Toxicity: 1}
	tests := []struct {
		name   string
		change func(*Toxic)
		valid  bool
	}{
		{"valid", func(*Toxic) {}, true},
		{"zero stream is downstream", func(t *Toxic) { t.Stream = "" }, true},
		{"no type", func(t *Toxic) { t.Type = "" }, false},
		{"unknown stream", func(t *Toxic) { t.Stream = "both" }, false},
		{"toxicity 0", func(t *Toxic) { t.Toxicity = 0 }, false},
		{"toxicity above 1", func(t *Toxic) { t.Toxicity = 1.01 }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := ok
			tt.change(&x)
			if err := x.Validate(); (err == nil) != tt.valid {
				t.Errorf("Validate() = %v, want valid %v", err, tt.valid)
			}
		})
	}
}

// Only a fault on every connection has a symptom the report may rely on.
func TestFaultSymptom(t *testing.T) {
	tests := []struct {
		name string
		f    Fault
		want Symptom
	}{
		{"latency", New("A", &Latency{Latency: time.Second}), Symptom{Delay: time.Second}},
		{"hang", New("A", &Timeout{}), Symptom{Hang: true}},
		{"timeout that closes", New("A", &Timeout{CloseAfter: time.Second}), Symptom{}},
		{"reset", New("A", &Reset{}), Symptom{FastError: true}},
		{"down", New("A", &Down{}), Symptom{FastError: true}},
		{"http-error", New("A", &HTTPError{}), Symptom{FastError: true}},
		{"bandwidth depends on size", New("A", &Bandwidth{RateKBps: 1}), Symptom{}},
		{"a share of connections", Fault{Dependency: "A", Type: "reset", Params: &Reset{}, Toxicity: 0.5}, Symptom{}},
		{"unknown type", Fault{Dependency: "A", Type: "explode"}, Symptom{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.Symptom(); got != tt.want {
				t.Errorf("Symptom() = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestFaultString(t *testing.T) {
	tests := []struct {
		f    Fault
		want string
	}{
		{New("A", &Latency{Latency: 450 * time.Millisecond}), "latency 450ms on A"},
		{New("A", &Latency{Latency: 450 * time.Millisecond, Jitter: 20 * time.Millisecond}), "latency 450ms±20ms on A"},
		{New("B", &Bandwidth{RateKBps: 64}), "bandwidth 64 KB/s on B"},
		{New("A", &Reset{}), "reset on A"},
		{New("A", &HTTPError{}), "http-error on A"},
		{New("A", &HTTPError{Status: 503}), "http-error 503 on A"},
		{New("A", &Timeout{CloseAfter: time.Second}), "timeout closed after 1s on A"},
		{Fault{Dependency: "A", Type: "reset", Params: &Reset{}, Direction: Upstream, Toxicity: 0.5}, "reset upstream on A for 50% of connections"},
		{Fault{Dependency: "A", Type: "explode"}, "explode on A"},
	}
	for _, tt := range tests {
		if got := tt.f.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// A fault goes into a manifest and comes back the same, whatever its type.
func TestFaultJSONRoundTrip(t *testing.T) {
	for _, f := range []Fault{
		{Dependency: "A", Type: "latency", Params: &Latency{Latency: 450 * time.Millisecond, Jitter: time.Millisecond}, AppliedAt: time.Second, RemovedAt: 2 * time.Second},
		{Dependency: "A", Type: "reset", Params: &Reset{}, Toxicity: 0.5, Direction: Upstream, AppliedAt: -1, RemovedAt: -1},
		{Dependency: "B", Type: "bandwidth", Params: &Bandwidth{RateKBps: 64}},
		{Dependency: "B", Type: "http-error", Params: &HTTPError{Status: 503}},
		{Dependency: "B", Type: "down", Params: &Down{}},
		{Dependency: "B", Type: "timeout", Params: &Timeout{CloseAfter: time.Second}},
	} {
		t.Run(f.Type, func(t *testing.T) {
			b, err := json.Marshal(f)
			if err != nil {
				t.Fatal(err)
			}
			var back Fault
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(back, f) {
				t.Errorf("round trip: %s\ngot  %+v\nwant %+v", b, back, f)
			}
			if !strings.Contains(string(b), `"description":"`+f.String()+`"`) {
				t.Errorf("%s has no description %q", b, f.String())
			}
		})
	}
}

// Manifests written before faults were one struct (rundir.Fault) read the same.
func TestFaultJSONReadsOldManifests(t *testing.T) {
	old := `{"dependency":"A","type":"latency","latency_ns":450000000,"jitter_ns":20000000,"applied_at_ns":25002694678,"removed_at_ns":40001983937}`
	var f Fault
	if err := json.Unmarshal([]byte(old), &f); err != nil {
		t.Fatal(err)
	}
	want := Fault{Dependency: "A", Type: "latency", Params: &Latency{Latency: 450 * time.Millisecond, Jitter: 20 * time.Millisecond},
		AppliedAt: 25002694678, RemovedAt: 40001983937}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("got %+v, want %+v", f, want)
	}
	// A type this build does not know stays readable, by name.
	if err := json.Unmarshal([]byte(`{"dependency":"A","type":"gremlin","teeth":3,"applied_at_ns":1}`), &f); err != nil {
		t.Fatal(err)
	}
	if f.Type != "gremlin" || f.Params != nil || f.AppliedAt != 1 || f.String() != "gremlin on A" {
		t.Errorf("unknown type read as %+v", f)
	}
}

// The definitions compile against the standard library only, so that the report and the run
// folder can read faults without Toxiproxy or Prometheus (those live in faults/proxy).
func TestImportsOnlyStandardLibrary(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if first, _, _ := strings.Cut(imp, "/"); strings.Contains(first, ".") {
			t.Errorf("package faults imports %s; keep it to the standard library", imp)
		}
	}
}
