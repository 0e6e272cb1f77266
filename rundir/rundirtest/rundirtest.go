// Package rundirtest helps tests that build run folders by hand, as httptest helps tests of HTTP
// handlers: Seal records in such a folder what the runner records in the folders it writes, so
// that the report believes it (rundir.VerifyRun, rundir.VerifyConfiguration).
package rundirtest

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// Seal rewrites the run folder dir's run.json and every configuration's manifest as a runner
// that wrote the folder's files as they are now would have: run.json records its inputs and
// the ids of the claims in claims.json, and every manifest its data files; a manifest without a
// state is given StateComplete, and a folder without scenario.yaml a stand-in one. A manifest saying StateRunning (a configuration cut off) is left
// as it is, and so are missing files. Call it once the folder's files are written, and again
// after changing one. It fails the test on an error.
func Seal(t testing.TB, dir string) {
	t.Helper()
	runPath := filepath.Join(dir, rundir.RunFile)
	var run rundir.Run
	if err := rundir.ReadJSON(runPath, &run); err != nil {
		t.Fatalf("seal %s: %v", dir, err)
	}
	// A runner always writes the scenario as run; a folder built by hand gets a stand-in.
	scen := filepath.Join(dir, rundir.ScenarioFile)
	if _, err := os.Stat(scen); errors.Is(err, fs.ErrNotExist) {
		if err := os.WriteFile(scen, []byte("# built by a test (rundirtest.Seal)\nname: "+run.Scenario+"\n"), 0o644); err != nil {
			t.Fatalf("seal %s: %v", dir, err)
		}
	}
	var err error
	if run.Files, err = rundir.RecordInputs(dir); err != nil {
		t.Fatalf("seal %s: %v", dir, err)
	}
	run.ClaimIDs = nil
	if b, err := os.ReadFile(filepath.Join(dir, rundir.ClaimsFile)); err == nil {
		var cs []struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(b, &cs) == nil {
			for _, c := range cs {
				run.ClaimIDs = append(run.ClaimIDs, c.ID)
			}
		}
	}
	if err := rundir.WriteJSON(runPath, run); err != nil {
		t.Fatalf("seal %s: %v", dir, err)
	}
	for _, name := range run.Configurations {
		cdir := filepath.Join(dir, name)
		path := filepath.Join(cdir, rundir.ManifestFile)
		var m rundir.Manifest
		err := rundir.ReadJSON(path, &m)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatalf("seal %s: %v", cdir, err)
		}
		if m.State == rundir.StateRunning {
			continue
		}
		if m.State == "" {
			m.State = rundir.StateComplete
		}
		if m.Files, err = rundir.RecordData(cdir); err != nil {
			t.Fatalf("seal %s: %v", cdir, err)
		}
		if err := rundir.WriteJSON(path, m); err != nil {
			t.Fatalf("seal %s: %v", cdir, err)
		}
	}
}
