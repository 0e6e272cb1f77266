package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"
)

// compiledSchema compiles JSONSchema with a real JSON Schema validator.
func compiledSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(JSONSchema()))
	if err != nil {
		t.Fatalf("the schema is not JSON: %v", err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("scenario.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("scenario.schema.json")
	if err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	return s
}

// instance turns a YAML document into the JSON value an editor's validator sees (anchors
// followed, keys as strings).
func instance(t *testing.T, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatalf("yaml: %v", err)
	}
	b, err := json.Marshal(jsonable(v))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return inst
}

func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
	}
	return v
}

// scenarioFiles are every built-in scenario and every example scenario of the repository.
func scenarioFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	for _, name := range Names() {
		files = append(files, name+".yaml")
	}
	ex, err := filepath.Glob("../examples/*/*.yaml")
	if err != nil || len(ex) < 4 {
		t.Fatalf("examples: %v %v", ex, err)
	}
	return append(files, ex...)
}

// Every built-in and example scenario validates against the schema, and says where the schema
// is (the yaml-language-server modeline), so an editor checks it as it is written.
func TestSchemaAcceptsEveryScenario(t *testing.T) {
	s := compiledSchema(t)
	for _, f := range scenarioFiles(t) {
		t.Run(f, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Parse(f, src); err != nil {
				t.Fatalf("the loader refuses it: %v", err)
			}
			if err := s.Validate(instance(t, src)); err != nil {
				t.Errorf("the schema refuses what the loader accepts:\n%v", err)
			}
			first, _, _ := strings.Cut(string(src), "\n")
			if want := modeline(t, f); first != want {
				t.Errorf("first line %q, want the modeline %q", first, want)
			}
		})
	}
}

// The schema refuses a sample of what the loader refuses: unknown keys, wrong types, missing
// required keys, unreadable durations and rates, unknown kinds and a fault type's foreign keys.
func TestSchemaRejectsWhatTheLoaderRejects(t *testing.T) {
	s := compiledSchema(t)
	fault := "    duration: 1s\n    faults:\n      - "
	cases := []struct{ name, old, new string }{
		{"unknown top-level key", "", "fooo: 1\n"},
		{"unknown nested key", "    duration: 1s\n", "    duration: 1s\n    fualts: []\n"},
		{"missing required key", "timeout: 500ms\n", ""},
		{"missing phase duration", "    duration: 1s\n", ""},
		{"list where a duration belongs", "timeout: 500ms", "timeout: [1]"},
		{"duration without a unit", "timeout: 500ms", "timeout: 500"},
		{"unreadable duration", "duration: 1s", "duration: soon"},
		{"timeout relative to itself", "timeout: 500ms", "timeout: 0.9x"},
		{"mapping where pools belong", "  - name: none\n", "  - name: none\n    pools: {a: 1}\n"},
		{"pools neither list nor default", "  - name: none\n", "  - {name: s, pools: many}\n"},
		{"string where an integer belongs", "", "repetitions: many\n"},
		{"float where an integer belongs", "", "repetitions: 1.5\n"},
		{"not a bool", "  - name: none\n", "  - name: none\n    breakers: maybe\n"},
		{"unreadable rate", "rate: 10/s", "rate: fast"},
		{"negative rate", "rate: 10/s", "rate: -5"},
		{"unknown arrivals", "  rate: 10/s\n", "  rate: 10/s\n  arrivals: bursty\n"},
		{"unknown mode", "  - name: none\n", "  - name: s\n    mode: both\n"},
		{"unknown pool kind", "  - name: none\n", "  - name: s\n    pools: [{name: p, kind: threads, size: 1, dependencies: [A, B]}]\n"},
		{"pool without size", "  - name: none\n", "  - name: s\n    pools: [{name: p, dependencies: [A, B]}]\n"},
		{"unknown fault type", "    duration: 1s\n", fault + "{dependency: A, type: explode}\n"},
		{"a key of another fault type", "    duration: 1s\n", fault + "{dependency: A, type: reset, latency: 1s}\n"},
		{"toxicity above 1", "    duration: 1s\n", fault + "{dependency: A, type: reset, toxicity: 1.5}\n"},
		{"unknown direction", "    duration: 1s\n", fault + "{dependency: A, type: reset, direction: both}\n"},
		{"unknown target key", "  - name: none\n", "  - name: none\n    target: {url: \"http://h:1\", comand: [x]}\n"},
		{"a command key on a url target", "  - name: none\n", "  - name: none\n    target: {url: \"http://h:1\", env: {X: \"1\"}}\n"},
		{"a target naming no kind", "  - name: none\n", "  - name: none\n    target: {ready: \"http://h:1\"}\n"},
		{"unknown test", "", "tests: [isolaton]\n"},
		{"unknown claim operator", "", "claims: [{id: c, says: s, measure: {metric: success_rate, configuration: none, phase: p, endpoint: /a}, op: '=', value: 1}]\n"},
		{"unknown metric", "", "claims: [{id: c, says: s, measure: {metric: succes_rate, configuration: none, phase: p, endpoint: /a}, op: '>', value: 1}]\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := edit(t, c.old, c.new)
			if _, err := Parse("t.yaml", []byte(src)); err == nil {
				t.Fatalf("the loader accepts it: the case is wrong\n%s", src)
			}
			if err := s.Validate(instance(t, []byte(src))); err == nil {
				t.Errorf("the schema accepts what the loader refuses:\n%s", src)
			}
		})
	}
}

// modeline is the first line a scenario file at path (relative to this package's folder) has:
// the yaml-language-server comment pointing at the committed schema, relative to the file.
func modeline(t *testing.T, path string) string {
	t.Helper()
	rel, err := filepath.Rel(filepath.Dir(path), schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return "# yaml-language-server: $schema=" + filepath.ToSlash(rel)
}

// schemaFile is the committed schema, relative to this package's folder.
const schemaFile = "../docs/scenario.schema.json"

// docs/scenario.schema.json is JSONSchema as generated now (go test ./scenarios -run
// TestSchemaPublished -update rewrites it).
func TestSchemaPublished(t *testing.T) {
	got := JSONSchema()
	if *updateDocs {
		if err := os.WriteFile(schemaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(schemaFile)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is stale (%v): run go test ./scenarios -run TestSchemaPublished -update", schemaFile, err)
	}
}

// What bulkhead new writes is valid by the schema too, so the editor agrees with the loader
// from the first keystroke.
func TestSchemaAcceptsScaffolds(t *testing.T) {
	s := compiledSchema(t)
	scaffolds := map[string]Scaffold{
		"command": {Command: []string{"./svc", "--layout", LayoutToken, "--port", "{port}", "--a", "http://{dep.A}"},
			Env: map[string]string{"LAYOUT": LayoutToken}, Ready: "http://127.0.0.1:{port}/healthz", Version: []string{"./svc", "--version"}},
		"url": {URLs: map[string]string{"shared": "http://h:1", "split": "http://h:2"}, Upstreams: map[string]string{"B": "h:9"}},
	}
	for name, sc := range scaffolds {
		src, err := sc.Write(name + ".yaml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := s.Validate(instance(t, src)); err != nil {
			t.Errorf("%s: the schema refuses what bulkhead new writes:\n%v\n%s", name, err, src)
		}
	}
	for _, n := range Names() {
		src, err := FromBuiltin(n, "copy")
		if err != nil {
			t.Fatalf("%s: %v", n, err)
		}
		if first, _, _ := strings.Cut(string(src), "\n"); first != Modeline(SchemaFile) {
			t.Errorf("%s: first line %q", n, first)
		}
	}
}
