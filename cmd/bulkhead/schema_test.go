package main

import (
	"encoding/json"
	"os"
	"testing"
)

// bulkhead schema prints the committed docs/scenario.schema.json: the schema an editor finds
// through a scenario's modeline is the one this binary's loader reads.
func TestSchemaCommandPrintsTheCommittedSchema(t *testing.T) {
	out, err := executeCommand(t, "schema")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not one JSON document: %v", err)
	}
	if doc["$schema"] == nil || doc["properties"] == nil {
		t.Errorf("no $schema or properties: %.200s", out)
	}
	want, err := os.ReadFile("../../docs/scenario.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("bulkhead schema differs from docs/scenario.schema.json (go test ./scenarios -run TestSchemaPublished -update)")
	}
}
