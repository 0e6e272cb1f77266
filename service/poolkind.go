package service

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// PoolKind names a pool's admission mechanism ("semaphore", "workers", "gradient2"). Each kind
// is one file of this package (or of another: see RegisterPoolKind) declaring its parameters and
// registering them; nothing else in the module names a kind. PoolKinds lists them.
type PoolKind string

// DefaultPoolKind is the kind of a pool that names none. PoolConfig.WithDefaults is the one place
// it is applied.
const DefaultPoolKind = KindSemaphore

// PoolParams are one pool kind's own parameters and what the kind does with them: a pointer to
// the kind's struct (SemaphoreParams, Gradient2Params, ...), whose yaml tags name its keys in a
// scenario's pool mapping (beside name, kind, size, queue, max_wait and dependencies, which
// every pool has) and whose json tags name them in a run's manifest. Every field is a
// time.Duration, int, int64, float64 or string (RegisterPoolKind checks), and the zero value of
// each field is what a scenario that leaves the key out gets: a kind's zero parameters are
// valid for any pool that passes the checks every pool gets.
type PoolParams interface {
	// Kind is the kind as a scenario writes it.
	Kind() PoolKind
	// Check returns every problem of cfg (whose Params is this value) particular to the kind:
	// a common field the kind constrains ("max_wait" of a semaphore with a queue) or one of its
	// own keys ("min_limit"), each FieldError's Path naming that key alone. The checks every pool
	// gets (name, size in [1, MaxPoolSize], queue and max_wait bounds) have been made, and failed
	// ones reported, before Check is called. nil when cfg can be built.
	Check(cfg PoolConfig) []FieldError
	// New builds the pool cfg describes; cfg has passed Validate (its Params is this value).
	// The pool starts every goroutine it owns here; Close releases them.
	New(cfg PoolConfig) Pool
	// Goroutines is the number of goroutines New starts for cfg and keeps until Close (a
	// workers pool's workers; 0 for a pool whose calls run on their callers' goroutines). The
	// validator bounds their total, the planner and the report read it.
	Goroutines(cfg PoolConfig) int
	// Metrics is the kind's metric family at /metrics, beside the families every pool has
	// (bulkhead_pool_info, admissions, rejections and waits): each read from the pool's account
	// and labelled with the pool's name.
	Metrics() []PoolMetric
	// String writes the parameters for a one-line description of the pool ("smoothing 0.2,
	// queue_size 4"); "" for a kind without parameters of its own.
	String() string
}

// PoolMetric is one metric of a pool kind's family, labelled "name" (the pool's name).
type PoolMetric struct {
	// Name and Help are the Prometheus metric's; two kinds that publish the same name must give
	// it the same help and type (RegisterPoolKind checks), so dashboards read both alike.
	Name string
	Help string
	// Type is prometheus.GaugeValue or prometheus.CounterValue.
	Type prometheus.ValueType
	// Value reads the metric from the pool's account.
	Value func(st PoolStats) float64
}

// poolKindInfo is what the registry keeps of a kind.
type poolKindInfo struct {
	params reflect.Type // the struct PoolParams points to
}

var (
	// poolKinds maps a kind's name to its parameter struct.
	poolKinds = map[PoolKind]poolKindInfo{}
	// poolMetricDescs holds one descriptor per metric name any kind publishes, with its type.
	poolMetricDescs = map[string]poolMetricDesc{}
)

type poolMetricDesc struct {
	desc *prometheus.Desc
	help string
	typ  prometheus.ValueType
}

// poolKeys are the keys every pool mapping has; a kind's parameters may not use them.
var poolKeys = []string{"name", "kind", "size", "queue", "queue_capacity", "max_wait", "dependencies", "inbound"}

// RegisterPoolKind adds a pool kind, given a pointer to a zero value of its parameter struct.
// Call it from the kind's init function; a kind defined in another package registers the same
// way and builds its pool on the exported accounting (Meter, PoolCounters, Now) and the Pool
// interface. It panics (misuse) on a nil or non-struct-pointer value, an empty name or one
// registered twice, a field without a yaml and a json name or of an unsupported type, a key
// every pool has or two fields share, a metric without a name, help or value, and a metric
// name another kind publishes with a different help or type.
func RegisterPoolKind(proto PoolParams) {
	v := reflect.ValueOf(proto)
	if proto == nil || v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		panic(fmt.Sprintf("service: RegisterPoolKind(%T): want a pointer to a struct", proto))
	}
	name := proto.Kind()
	if name == "" {
		panic(fmt.Sprintf("service: RegisterPoolKind(%T): empty kind", proto))
	}
	if _, dup := poolKinds[name]; dup {
		panic(fmt.Sprintf("service: RegisterPoolKind(%T): pool kind %q registered twice", proto, name))
	}
	st := v.Elem().Type()
	checkParamFields(proto, st)
	registerPoolMetrics(proto)
	poolKinds[name] = poolKindInfo{params: st}
}

// checkParamFields panics unless every field of st, proto's parameter struct, has a yaml and a
// json name of its own, of a supported type, and no key every pool has.
func checkParamFields(proto PoolParams, st reflect.Type) {
	seen := map[string]bool{}
	for i := range st.NumField() {
		sf := st.Field(i)
		y, j := tagName(sf, "yaml"), tagName(sf, "json")
		switch {
		case !sf.IsExported() || y == "" || y == "-" || j == "" || j == "-":
			panic(fmt.Sprintf("service: RegisterPoolKind(%T): field %s needs a yaml and a json name", proto, sf.Name))
		case !paramSupported(sf.Type):
			panic(fmt.Sprintf("service: RegisterPoolKind(%T): field %s is a %s; use time.Duration, int, int64, float64 or string", proto, sf.Name, sf.Type))
		}
		for _, k := range []string{y, j} {
			if slices.Contains(poolKeys, k) {
				panic(fmt.Sprintf("service: RegisterPoolKind(%T): field %s uses the key %q every pool has", proto, sf.Name, k))
			}
		}
		if seen["y:"+y] || seen["j:"+j] {
			panic(fmt.Sprintf("service: RegisterPoolKind(%T): field %s repeats a key", proto, sf.Name))
		}
		seen["y:"+y], seen["j:"+j] = true, true
	}
}

// registerPoolMetrics adds a descriptor for each metric of proto's family not published yet, and
// panics on a metric without a name, help or value or one another kind publishes differently.
func registerPoolMetrics(proto PoolParams) {
	for _, m := range proto.Metrics() {
		if m.Name == "" || m.Help == "" || m.Value == nil {
			panic(fmt.Sprintf("service: RegisterPoolKind(%T): metric %q needs a name, a help and a value", proto, m.Name))
		}
		if d, ok := poolMetricDescs[m.Name]; ok {
			if d.help != m.Help || d.typ != m.Type {
				panic(fmt.Sprintf("service: RegisterPoolKind(%T): metric %s is published by another kind with another help or type", proto, m.Name))
			}
			continue
		}
		poolMetricDescs[m.Name] = poolMetricDesc{desc: prometheus.NewDesc(m.Name, m.Help, []string{"name"}, nil), help: m.Help, typ: m.Type}
	}
}

func tagName(sf reflect.StructField, key string) string {
	name, _, _ := strings.Cut(sf.Tag.Get(key), ",")
	return name
}

func paramSupported(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[time.Duration](), reflect.TypeFor[int](), reflect.TypeFor[int64](),
		reflect.TypeFor[float64](), reflect.TypeFor[string]():
		return true
	}
	return false
}

// PoolKinds returns the names of every registered pool kind, sorted.
func PoolKinds() []PoolKind {
	names := make([]PoolKind, 0, len(poolKinds))
	for n := range poolKinds {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// knownPoolKinds lists the kinds for a message: "aimd, gradient2, semaphore, vegas, workers".
func knownPoolKinds() string {
	var b strings.Builder
	for i, k := range PoolKinds() {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(string(k))
	}
	return b.String()
}

// NewPoolParams returns fresh zero parameters of the named kind ("" names DefaultPoolKind), and
// false for a kind that is not registered.
func NewPoolParams(kind PoolKind) (PoolParams, bool) {
	if kind == "" {
		kind = DefaultPoolKind
	}
	k, ok := poolKinds[kind]
	if !ok {
		return nil, false
	}
	return reflect.New(k.params).Interface().(PoolParams), true
}

// PoolParamField is one key of a kind's parameters, for a decoder: Key is its yaml name, Ptr
// points into the parameters and is a *time.Duration, *int, *int64, *float64 or *string.
type PoolParamField struct {
	Key string
	Ptr any
}

// PoolParamFields returns the keys of p in declaration order, each with a pointer to decode into.
func PoolParamFields(p PoolParams) []PoolParamField {
	v := reflect.ValueOf(p).Elem()
	out := make([]PoolParamField, v.NumField())
	for i := range out {
		out[i] = PoolParamField{Key: tagName(v.Type().Field(i), "yaml"), Ptr: v.Field(i).Addr().Interface()}
	}
	return out
}

// PoolKindsTaking returns the sorted kinds whose parameters have the yaml key key, so that a
// decoder can say "only gradient2 takes smoothing".
func PoolKindsTaking(key string) []PoolKind {
	var out []PoolKind
	for _, name := range PoolKinds() {
		st := poolKinds[name].params
		for i := range st.NumField() {
			if tagName(st.Field(i), "yaml") == key {
				out = append(out, name)
			}
		}
	}
	return out
}

// WithDefaults returns c with its kind filled: Kind "" becomes its Params' kind, or
// DefaultPoolKind without Params. It is the one place that default is applied. Params stay as
// they are: nil means the kind's zero parameters (see params).
func (c PoolConfig) WithDefaults() PoolConfig {
	switch {
	case c.Kind == "" && c.Params != nil:
		c.Kind = c.Params.Kind()
	case c.Kind == "":
		c.Kind = DefaultPoolKind
	}
	return c
}

// params returns c's parameters: Params, or the zero parameters of c's kind (with its default)
// when Params is nil; nil for a kind that is not registered.
func (c PoolConfig) params() PoolParams {
	if c.Params != nil {
		return c.Params
	}
	p, _ := NewPoolParams(c.WithDefaults().Kind)
	return p
}

// PoolGoroutines returns the goroutines the pool c describes owns once built (its kind's
// Goroutines), 0 for a kind that is not registered.
func PoolGoroutines(c PoolConfig) int {
	p := c.params()
	if p == nil {
		return 0
	}
	return p.Goroutines(c.WithDefaults())
}

// poolHead is the part of a pool's flat mapping every pool has, before its kind's parameters.
type poolHead struct {
	Name          string        `json:"name" yaml:"name"`
	Kind          PoolKind      `json:"kind" yaml:"kind"`
	Size          int           `json:"size" yaml:"size"`
	QueueCapacity int           `json:"queue_capacity" yaml:"queue"`
	MaxWait       time.Duration `json:"max_wait" yaml:"max_wait"`
	Dependencies  []string      `json:"dependencies" yaml:"dependencies"`
}

func (c PoolConfig) head() poolHead {
	return poolHead{c.Name, c.Kind, c.Size, c.QueueCapacity, c.MaxWait, c.Dependencies}
}

// MarshalJSON writes c as one flat object: the fields every pool has, then its parameters under
// their json names.
func (c PoolConfig) MarshalJSON() ([]byte, error) {
	parts := []any{c.head()}
	if c.Params != nil {
		parts = append(parts, c.Params)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for _, p := range parts {
		b, err := json.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("service: encode pool %s: %w", c.Name, err)
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

// UnmarshalJSON reads what MarshalJSON writes. A kind this build does not know is kept by name
// with nil Params (a manifest from another version stays readable).
func (c *PoolConfig) UnmarshalJSON(data []byte) error {
	var h poolHead
	if err := json.Unmarshal(data, &h); err != nil {
		return err
	}
	*c = PoolConfig{Name: h.Name, Kind: h.Kind, Size: h.Size, QueueCapacity: h.QueueCapacity,
		MaxWait: h.MaxWait, Dependencies: h.Dependencies}
	if p, ok := NewPoolParams(h.Kind); ok && h.Kind != "" {
		if err := json.Unmarshal(data, p); err != nil {
			return fmt.Errorf("service: decode %s pool parameters: %w", h.Kind, err)
		}
		c.Params = p
	}
	return nil
}

// MarshalYAML writes c as the flat mapping a scenario file holds, so that a marshalled scenario
// loads back to the same pool: the fields every pool has, then the parameters under their yaml
// names.
func (c PoolConfig) MarshalYAML() (any, error) { return c.MarshalYAMLWith(nil) }

// MarshalYAMLWith is MarshalYAML for a type that embeds PoolConfig inline and adds keys of its
// own (which would otherwise be lost: the embedded MarshalYAML is promoted to it): extra is a
// struct value, nil for none, whose fields follow the pool's in the mapping with their yaml tags.
func (c PoolConfig) MarshalYAMLWith(extra any) (any, error) {
	var fields []reflect.StructField
	var values []reflect.Value
	add := func(v reflect.Value) {
		for i := range v.NumField() {
			sf := v.Type().Field(i)
			fields = append(fields, reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag})
			values = append(values, v.Field(i))
		}
	}
	add(reflect.ValueOf(c.head()))
	if c.Params != nil {
		add(reflect.ValueOf(c.Params).Elem())
	}
	if extra != nil {
		v := reflect.ValueOf(extra)
		if v.Kind() != reflect.Struct {
			return nil, fmt.Errorf("service: MarshalYAMLWith(%T): want a struct", extra)
		}
		add(v)
	}
	out := reflect.New(reflect.StructOf(fields)).Elem()
	for i, x := range values {
		out.Field(i).Set(x)
	}
	return out.Interface(), nil
}

// paramString writes the pairs (key, value) whose value is not its zero value, for a kind's
// String: "min_limit 1, smoothing 0.2". Left-out values are the kind's documented defaults.
func paramString(kv ...any) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		if v := reflect.ValueOf(kv[i+1]); !v.IsZero() {
			parts = append(parts, fmt.Sprintf("%v %v", kv[i], kv[i+1]))
		}
	}
	return strings.Join(parts, ", ")
}
