package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// exampleDir is the run folder committed as the README's example (its main figure, report.md).
const exampleDir = "../results/example"

// The committed example is what today's code makes of it: re-reported from its raw files, its
// verdict block equals the one its summary.json holds, so the example cannot go stale unseen
// (issue 22: it once said "The scenario states no claims" and passed). When the engine changes
// a verdict on purpose, `bulkhead report results/example --plots` brings the folder up to date; a
// change of the run folder's format needs a new run (results/example/README.md says which).
// The folder is one repetition, about 14,000 requests: the analysis takes well under a second.
func TestExampleIsCurrent(t *testing.T) {
	s, err := Analyze(exampleDir)
	if err != nil {
		t.Fatalf("results/example no longer reads with today's code (run it again: results/example/README.md): %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(exampleDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var committed struct {
		Verdict json.RawMessage `json:"verdict"`
	}
	if err := json.Unmarshal(raw, &committed); err != nil {
		t.Fatal(err)
	}
	if len(committed.Verdict) == 0 {
		t.Fatal("results/example/summary.json has no verdict block")
	}
	var want model.VerdictBlock
	if err := json.Unmarshal(committed.Verdict, &want); err != nil {
		t.Fatal(err)
	}
	// It states seed 004's test: the isolation test's eleven claims (three of which one
	// repetition leaves undecided, as its report says).
	if !valid(want) || len(want.Claims) != 11 {
		t.Errorf("the committed example is %s with %d claims: want a valid run judged on seed 004's eleven", want.Outcome, len(want.Claims))
	}
	// Both sides through the same encoder, so that only what the verdicts say can differ; where
	// the folder was read from is not a verdict.
	s.Verdict.RunDir, want.RunDir = "", ""
	got, err := json.MarshalIndent(s.Verdict, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	again, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, again) {
		t.Errorf("results/example is stale: re-reported with today's code its verdict block differs from its summary.json's (bulkhead report results/example --plots updates it):\n%s", firstDiff(string(got), string(again)))
	}
}

func valid(v model.VerdictBlock) bool { return v.Valid && v.Outcome != model.OutcomeInvalid }
