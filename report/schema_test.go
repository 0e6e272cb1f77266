package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

// The published schemas (docs/) are the ones model.JSONSchema makes of the types written: a
// change to summary.json's shape fails here until the schema is regenerated with -update.
var schemas = []struct {
	file        string
	root        any
	title, desc string
}{
	{"summary.schema.json", model.Summary{}, "bulkhead summary.json",
		"What bulkhead report writes into a run folder as summary.json (see docs/report.md); schema_version is model.SchemaVersion."},
	{"verdict.schema.json", model.VerdictBlock{}, "bulkhead verdict block",
		"summary.json's \"verdict\", and what bulkhead run --json and bulkhead report --json print on stdout (see docs/ci.md)."},
}

func TestSchemasPublished(t *testing.T) {
	for _, s := range schemas {
		got, err := model.JSONSchema(s.root, "https://github.com/bulkheadlab/bulkhead/docs/"+s.file, s.title, s.desc)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "docs", s.file)
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./report -run TestSchemasPublished -update writes it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("docs/%s is not the schema of %T: regenerate it with -update after checking the change (and raise model.SchemaVersion if a field went or changed type)", s.file, s.root)
		}
	}
}

// compile loads a published schema.
func compile(t *testing.T, file string) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(file, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(file)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decode(t *testing.T, b []byte) any {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every summary.json written validates against docs/summary.schema.json, and the verdict block
// printed by --json against docs/verdict.schema.json: a run with claims, repetitions, resources
// and a headline, and a grouped hub. A file with a field of the wrong type, a missing field or an
// unknown one does not.
func TestWrittenFilesMatchSchema(t *testing.T) {
	summary, verdictSchema := compile(t, "summary.schema.json"), compile(t, "verdict.schema.json")
	claimsDir := claimsWorld().write(t, t.TempDir())
	writeClaims(t, claimsDir, claimsScenario+claimYAML("shared-starves-b", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n")+
		claimYAML("p99", "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    than: {metric: p99_ms, configuration: shared, phase: slow-a, endpoint: /b}\n"))
	rundirtest.Seal(t, claimsDir)
	for _, dir := range []string{claimsDir, writeHub(t, t.TempDir(), 12, "/p/p03")} {
		var printed bytes.Buffer
		if _, err := GenerateWith(dir, Options{Outputs: []output.Output{output.JSON{}, output.VerdictJSON{W: &printed}}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
		if err != nil {
			t.Fatal(err)
		}
		if err := summary.Validate(decode(t, b)); err != nil {
			t.Errorf("%s: summary.json does not match docs/summary.schema.json: %v", filepath.Base(dir), err)
		}
		if err := verdictSchema.Validate(decode(t, printed.Bytes())); err != nil {
			t.Errorf("%s: the printed verdict block does not match docs/verdict.schema.json: %v", filepath.Base(dir), err)
		}
		if !strings.Contains(string(b), fmt.Sprintf(`"schema_version": %d`, model.SchemaVersion)) || !strings.Contains(printed.String(), fmt.Sprintf(`"schema_version": %d`, model.SchemaVersion)) {
			t.Errorf("schema_version missing")
		}
	}

	b, err := os.ReadFile(filepath.Join(claimsDir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		change func(map[string]any)
	}{
		{"a rate as a string", func(m map[string]any) {
			m["configurations"].([]any)[0].(map[string]any)["phases"].([]any)[0].(map[string]any)["endpoints"].(map[string]any)["/a"].(map[string]any)["success_rate"] = "1"
		}},
		{"no schema_version", func(m map[string]any) { delete(m, "schema_version") }},
		{"a field the schema does not know", func(m map[string]any) { m["verdict"].(map[string]any)["surprise"] = 1 }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			tt.change(m)
			bad, _ := json.Marshal(m)
			if err := summary.Validate(decode(t, bad)); err == nil {
				t.Error("validates; want it rejected")
			}
		})
	}
}
