package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// Every registered pool kind has every part a kind needs; this is the test that fails when one
// lacks a part (see kindProblems). Adding a kind is its file and its test: nothing else in the
// module names a kind.
func TestEveryPoolKindHasEveryPart(t *testing.T) {
	if len(PoolKinds()) < 5 {
		t.Fatalf("kinds %v: want at least semaphore, workers, aimd, gradient2 and vegas", PoolKinds())
	}
	decls := kindDeclarations(t)
	for _, kind := range PoolKinds() {
		t.Run(string(kind), func(t *testing.T) {
			p, _ := NewPoolParams(kind)
			for _, problem := range kindProblems(p, decls) {
				t.Error(problem)
			}
		})
	}
}

// The parts check can fail: a kind without its file and test, without documented zero values,
// whose zero parameters do not validate, without metrics and whose pool reports another kind
// shows each of those problems.
func TestKindProblemsFindsMissingParts(t *testing.T) {
	got := strings.Join(kindProblems(&brokenParams{}, kindDeclarations(t)), "\n")
	for _, want := range []string{
		"declared in no file of this package",
		"no test file broken_test.go",
		"zero parameters do not validate",
		"no metric family",
		"its pool reports kind",
		"owns 1 goroutines, declares 0",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems of a broken kind:\n%s\nwant one containing %q", got, want)
		}
	}
}

// brokenParams is a kind lacking parts, for TestKindProblemsFindsMissingParts (not registered).
type brokenParams struct {
	Level int `json:"level" yaml:"level"`
}

func (*brokenParams) Kind() PoolKind { return "broken" }
func (*brokenParams) Check(PoolConfig) []FieldError {
	return []FieldError{{Path: "level", Reason: "always wrong"}}
}
func (*brokenParams) New(cfg PoolConfig) Pool {
	l := &leakyPool{NewSemaphore(cfg), make(chan struct{})}
	go func() { <-l.quit }()
	return l
}
func (*brokenParams) Goroutines(PoolConfig) int { return 0 }
func (*brokenParams) Metrics() []PoolMetric     { return nil }
func (*brokenParams) String() string            { return "" }

// leakyPool reports a semaphore's account (kind semaphore, not broken) and starts a goroutine
// it does not declare.
type leakyPool struct {
	*Semaphore
	quit chan struct{}
}

func (l *leakyPool) Close() { l.Semaphore.Close(); close(l.quit) }

// kindProblems lists what kind p lacks: decls maps the type names declared in this package's
// files to their file and declaration.
func kindProblems(p PoolParams, decls map[string]typeDecl) []string {
	var out []string
	bad := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	kind := p.Kind()
	st := reflect.TypeOf(p).Elem()

	// One file per kind, named after it, with its test beside it.
	d, ok := decls[st.Name()]
	switch {
	case !ok:
		bad("%s: type %s declared in no file of this package", kind, st.Name())
	case filepath.Base(d.file) != string(kind)+".go":
		bad("%s: declared in %s, want %s.go", kind, filepath.Base(d.file), kind)
	}
	if _, err := os.Stat(string(kind) + "_test.go"); err != nil {
		bad("%s: no test file %s_test.go", kind, kind)
	}
	// Every parameter documents its zero value.
	if ok {
		for _, f := range d.fields {
			if !strings.Contains(f.doc, "0 means") {
				bad("%s: field %s does not document its zero value (\"0 means ...\")", kind, f.name)
			}
		}
	}
	// The zero parameters are valid for a pool that passes the common checks.
	cfg := PoolConfig{Name: "p", Kind: kind, Size: 10, Dependencies: []string{"A"}}
	if fe := p.Check(cfg); len(fe) > 0 {
		bad("%s: zero parameters do not validate: %v", kind, fe)
	}
	// A metric family, each metric registered with its descriptor.
	if len(p.Metrics()) == 0 {
		bad("%s: no metric family", kind)
	}
	for _, m := range p.Metrics() {
		if _, ok := poolMetricDescs[m.Name]; !ok {
			bad("%s: metric %s has no descriptor (not registered?)", kind, m.Name)
		}
	}
	// The constructor builds a pool of this kind that admits a call, owns the goroutines it
	// declares, and reads back in its account.
	before := goroutines()
	cfg.Params = p
	pool := p.New(cfg)
	owned := len(startedSince(before))
	st2 := pool.Account(Now(), false)
	if st2.Kind != kind || st2.Name != "p" || st2.Capacity < 1 || st2.Capacity > cfg.Size {
		bad("%s: its pool reports kind %q, name %q, capacity %d", kind, st2.Kind, st2.Name, st2.Capacity)
	}
	if err := pool.Do(context.Background(), func(context.Context) error { return nil }); err != nil {
		bad("%s: Do of a free pool: %v", kind, err)
	}
	if got := pool.Account(Now(), false).Admitted; got != 1 {
		bad("%s: admitted %d after one call, want 1", kind, got)
	}
	if d := p.Goroutines(cfg); owned != d {
		bad("%s: owns %d goroutines, declares %d", kind, owned, d)
	}
	for _, m := range p.Metrics() {
		_ = m.Value(st2)
	}
	pool.Close()
	// Its parameters round-trip through a manifest's JSON, every field set.
	full := reflect.New(st)
	for i := range st.NumField() {
		switch f := full.Elem().Field(i); f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(0.5)
		case reflect.String:
			f.SetString("x")
		}
	}
	in := PoolConfig{Name: "p", Kind: kind, Size: 10, Dependencies: []string{"A"}, Params: full.Interface().(PoolParams)}
	b, err := json.Marshal(in)
	var back PoolConfig
	if err == nil {
		err = json.Unmarshal(b, &back)
	}
	if err != nil || (st.NumField() > 0 && !reflect.DeepEqual(back, in)) {
		bad("%s: JSON round trip %s gave %+v (%v), want %+v", kind, b, back, err, in)
	}
	return out
}

// goroutines returns the IDs of the goroutines running now, each with its stack.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if id, _, ok := strings.Cut(strings.TrimPrefix(g, "goroutine "), " "); ok {
			out[id] = g
		}
	}
	return out
}

// startedSince returns the stacks of the goroutines running now that were not in before and run
// code of this package: the ones a pool's constructor started. Counting by identity, not by
// runtime.NumGoroutine, keeps a goroutine of an earlier test that exits meanwhile from hiding
// one the pool started.
func startedSince(before map[string]string) []string {
	var out []string
	for id, stack := range goroutines() {
		if _, old := before[id]; !old && strings.Contains(stack, "bulkhead/service.") {
			out = append(out, stack)
		}
	}
	return out
}

// typeDecl is a type declared in one of this package's files, with its fields' doc comments.
type typeDecl struct {
	file   string
	fields []fieldDoc
}

type fieldDoc struct{ name, doc string }

// kindDeclarations parses this package's non-test files and returns every struct type declared
// in them.
func kindDeclarations(t *testing.T) map[string]typeDecl {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]typeDecl{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			s, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			d := typeDecl{file: name}
			for _, fl := range s.Fields.List {
				for _, id := range fl.Names {
					d.fields = append(d.fields, fieldDoc{name: id.Name, doc: fl.Doc.Text()})
				}
			}
			out[ts.Name.Name] = d
			return true
		})
	}
	return out
}

// kindCheck is one case of a kind's Check table: parameters (nil: the zero ones) and the keys
// Validate must report under pools[0], nil for none.
type kindCheck struct {
	name   string
	params PoolParams
	want   []string
}

// checkKindTable validates a two-pool split config whose first pool is of kind kind (size 10)
// with each case's parameters, and checks the keys of the problems reported under pools[0].
func checkKindTable(t *testing.T, kind PoolKind, cases []kindCheck) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := validConfig()
			cfg.Pools[0] = PoolConfig{Name: "A", Kind: kind, Size: 10, Dependencies: []string{"A"}, Params: c.params}
			var got []string
			if err := cfg.Validate(); err != nil {
				for _, p := range err.(*ValidationError).Problems {
					key, ok := strings.CutPrefix(p.Path, "pools[0].")
					if !ok {
						t.Fatalf("problem outside pools[0]: %v", p)
					}
					got = append(got, key)
				}
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("%s %+v: problems at %v, want %v (%v)", kind, c.params, got, c.want, cfg.Validate())
			}
		})
	}
}

// A pool's kind and parameters go through a manifest's JSON and a scenario's YAML as one flat
// mapping, and a kind this build does not know keeps its name.
func TestPoolConfigFlatEncoding(t *testing.T) {
	in := PoolConfig{Name: "A", Kind: KindGradient2, Size: 10, Dependencies: []string{"A"},
		Params: &Gradient2Params{MinLimit: 2, Smoothing: 0.3}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"name":"A","kind":"gradient2","size":10,"queue_capacity":0,"max_wait":0,"dependencies":["A"],` +
		`"initial_limit":0,"min_limit":2,"smoothing":0.3,"queue_size":0,"long_window":0,"rtt_tolerance":0}`
	if string(b) != want {
		t.Errorf("JSON\n%s\nwant\n%s", b, want)
	}
	var unknown PoolConfig
	if err := json.Unmarshal([]byte(`{"name":"X","kind":"fractal","size":3,"depth":9}`), &unknown); err != nil {
		t.Fatal(err)
	}
	if unknown.Kind != "fractal" || unknown.Size != 3 || unknown.Params != nil {
		t.Errorf("unknown kind decoded as %+v, want its name kept and nil Params", unknown)
	}
	y, err := in.MarshalYAMLWith(struct {
		Inbound []string `yaml:"inbound"`
	}{[]string{"/in"}})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for i := range reflect.TypeOf(y).NumField() {
		keys = append(keys, strings.Split(reflect.TypeOf(y).Field(i).Tag.Get("yaml"), ",")[0])
	}
	if want := []string{"name", "kind", "size", "queue", "max_wait", "dependencies", "initial_limit", "min_limit",
		"smoothing", "queue_size", "long_window", "rtt_tolerance", "inbound"}; !slices.Equal(keys, want) {
		t.Errorf("YAML keys %v, want %v", keys, want)
	}
}

// /metrics publishes each pool's kind family: Resilience4j's names for a semaphore and a workers
// pool, the limit's state for an adaptive one, and nothing of one kind for a pool of another.
func TestPoolMetricFamilies(t *testing.T) {
	cfg := validConfig()
	cfg.Pools = []PoolConfig{
		{Name: "A", Kind: KindGradient2, Size: 10, Dependencies: []string{"A"}, Params: &Gradient2Params{InitialLimit: 7}},
		{Name: "B", Kind: KindWorkers, Size: 3, Dependencies: []string{"B"}},
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	for _, c := range []struct {
		metric, pool string
		want         float64
		present      bool
	}{
		{"bulkhead_pool_limit", "A", 7, true},
		{"resilience4j_bulkhead_max_allowed_concurrent_calls", "A", 7, true},
		{"bulkhead_pool_limit_max", "A", 10, true},
		{"resilience4j_bulkhead_thread_pool_size", "B", 3, true},
		{"resilience4j_bulkhead_thread_pool_size", "A", 0, false},
		{"bulkhead_pool_limit", "B", 0, false},
	} {
		got, ok := gatherGauge(t, s.registry, c.metric, c.pool)
		if ok != c.present || got != c.want {
			t.Errorf("%s{name=%q} = %v (present %v), want %v (present %v)", c.metric, c.pool, got, ok, c.want, c.present)
		}
	}
	_, infoA := gatherGauge(t, s.registry, "bulkhead_pool_info", "A")
	_, infoB := gatherGauge(t, s.registry, "bulkhead_pool_info", "B")
	if !infoA || !infoB {
		t.Errorf("bulkhead_pool_info for A %v, for B %v: want both", infoA, infoB)
	}
}

// gatherGauge returns the value of metric{name=pool} in r and whether it is there.
func gatherGauge(t *testing.T, r *prometheus.Registry, metric, pool string) (float64, bool) {
	t.Helper()
	mfs, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != metric {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == pool {
					if g := m.GetGauge(); g != nil {
						return g.GetValue(), true
					}
					return m.GetCounter().GetValue(), true
				}
			}
		}
	}
	return 0, false
}

// RegisterPoolKind refuses, by panicking at init, a kind that could not be decoded, named or
// published: every case here panics before anything is registered.
func TestRegisterPoolKindRefusesMisuse(t *testing.T) {
	for _, c := range []struct {
		name  string
		proto PoolParams
		want  string
	}{
		{"nil", nil, "want a pointer to a struct"},
		{"not a pointer", refused[plainMetric]{}, "want a pointer to a struct"},
		{"empty kind", &refused[emptyName]{}, "empty kind"},
		{"registered twice", &refused[twice]{}, `"semaphore" registered twice`},
		{"field without tags", &untagged{}, "needs a yaml and a json name"},
		{"a key every pool has", &usesSize{}, `uses the key "size" every pool has`},
		{"a metric another kind publishes differently", &refused[otherHelp]{}, "another help or type"},
		{"a metric without help", &refused[noHelp]{}, "needs a name, a help and a value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if r == nil || !strings.Contains(fmt.Sprint(r), c.want) {
					t.Errorf("panic %v, want one containing %q", r, c.want)
				}
				if _, ok := NewPoolParams("m"); ok {
					t.Error("a refused kind was registered")
				}
			}()
			RegisterPoolKind(c.proto)
		})
	}
}

// refused[K] is a kind RegisterPoolKind must refuse (never registered): no fields, its name and
// metrics from K. untagged and usesSize have fields it must refuse.
type refused[K interface {
	kind() PoolKind
	metrics() []PoolMetric
}] struct{}

func (refused[K]) Kind() PoolKind                { var k K; return k.kind() }
func (refused[K]) Check(PoolConfig) []FieldError { return nil }
func (refused[K]) New(cfg PoolConfig) Pool       { return NewSemaphore(cfg) }
func (refused[K]) Goroutines(PoolConfig) int     { return 0 }
func (refused[K]) Metrics() []PoolMetric         { var k K; return k.metrics() }
func (refused[K]) String() string                { return "" }

type (
	emptyName   struct{}
	twice       struct{}
	otherHelp   struct{}
	noHelp      struct{}
	plainMetric struct{}
)

func (emptyName) kind() PoolKind   { return "" }
func (twice) kind() PoolKind       { return KindSemaphore }
func (otherHelp) kind() PoolKind   { return "m" }
func (noHelp) kind() PoolKind      { return "m" }
func (plainMetric) kind() PoolKind { return "m" }

func (emptyName) metrics() []PoolMetric   { return nil }
func (twice) metrics() []PoolMetric       { return nil }
func (plainMetric) metrics() []PoolMetric { return nil }
func (otherHelp) metrics() []PoolMetric {
	return []PoolMetric{{Name: metricMaxAllowed.Name, Help: "other", Value: metricMaxAllowed.Value}}
}
func (noHelp) metrics() []PoolMetric { return []PoolMetric{{Name: "x", Value: metricMaxAllowed.Value}} }

type untagged struct {
	refused[plainMetric]
	Level int
}

type usesSize struct {
	Size int `json:"size" yaml:"size"`
}

func (*usesSize) Kind() PoolKind                { return "m" }
func (*usesSize) Check(PoolConfig) []FieldError { return nil }
func (*usesSize) New(cfg PoolConfig) Pool       { return NewSemaphore(cfg) }
func (*usesSize) Goroutines(PoolConfig) int     { return 0 }
func (*usesSize) Metrics() []PoolMetric         { return nil }
func (*usesSize) String() string                { return "" }

// NewPool builds a pool with its kind's constructor and refuses a kind that is not registered,
// rather than falling back to a semaphore.
func TestNewPoolByKind(t *testing.T) {
	for _, kind := range PoolKinds() {
		p, err := NewPool(PoolConfig{Name: "p", Kind: kind, Size: 4})
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		if got := p.Account(Now(), false).Kind; got != kind {
			t.Errorf("NewPool(kind %s) built a pool of kind %s", kind, got)
		}
		p.Close()
	}
	if p, err := NewPool(PoolConfig{Name: "p", Size: 4}); err != nil || p.Account(Now(), false).Kind != DefaultPoolKind {
		t.Errorf("no kind: %v, %v; want a %s", p, err, DefaultPoolKind)
	}
	_, err := NewPool(PoolConfig{Name: "p", Kind: "threads", Size: 4})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), `unknown pool kind "threads"`) {
		t.Errorf("unknown kind: %v, want the validation error naming it", err)
	}
}
