package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// rawLine is one result line as the load generator writes it; failed ones carry an error.
func rawLine(seq int, failed bool) string {
	code, errText := 200, ""
	if failed {
		code, errText = 0, "connection reset by peer"
	}
	return fmt.Sprintf(`{"attack":"/a","seq":%d,"code":%d,"timestamp":"2026-11-30T09:00:%02d.000000000Z","latency":5000000,"bytes_out":0,"bytes_in":0,"error":%q,"body":null,"method":"GET","url":"http://127.0.0.1:1/a","headers":{}}`+"\n",
		seq, code, seq%60, errText)
}

// completeFolder writes a configuration folder as the runner leaves one, 10 results of which 3
// failed, a resources.csv, a dependencies.csv, an attack log and a target log, records its files
// and returns the folder and its manifest.
func completeFolder(t *testing.T) (string, *Manifest) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, RawDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var raw strings.Builder
	for i := range 10 {
		raw.WriteString(rawLine(i, i%3 == 1))
	}
	files := map[string]string{
		"raw/a.json":          raw.String(),
		ResourcesFile:         "t_s,resource,capacity,in_use,rejected\n0.000,pool:shared,10,0,0\n",
		DependenciesFile:      "t_s,dependency\n0.000,A\n",
		"attack.stdout.jsonl": `{"type":"done"}` + "\n",
		"target.stderr.log":   "listening\n",
	}
	for rel, body := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := &Manifest{Configuration: "shared", State: StateComplete, Valid: true, Started: start, Ended: start.Add(10 * time.Second),
		Endpoints: []Endpoint{{Path: "/a", RawFile: "raw/a.json", Planned: 10, Scheduled: 10, Sent: 10}}}
	recs, err := RecordData(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = recs
	if err := WriteJSON(filepath.Join(dir, ManifestFile), m); err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// The runner records every data file of a configuration folder, and only those: not the
// manifest that holds the records, not a log a target may still be writing.
func TestRecordDataCoversEveryDataFile(t *testing.T) {
	dir, m := completeFolder(t)
	var got []string
	for _, r := range m.Files {
		got = append(got, r.Path)
	}
	want := []string{"attack.stdout.jsonl", DependenciesFile, "raw/a.json", ResourcesFile}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("recorded %v, want %v", got, want)
	}
	if m.Files[2].Lines != 10 || m.Files[2].Bytes == 0 || len(m.Files[2].SHA256) != 64 {
		t.Errorf("raw/a.json record %+v: want 10 lines, its size and a sha256", m.Files[2])
	}
	if errs := VerifyConfiguration(dir, m); len(errs) != 0 {
		t.Errorf("an untouched folder does not verify: %v", errs)
	}
}

// Every way of talking a configuration folder into lying is refused, and the reason names the
// file: a raw file removed, emptied, halved, its failures filtered out, a line duplicated, one
// byte edited; resources.csv or dependencies.csv deleted; a file added; a manifest edited to
// complete without an end, without a state, without its records; counts above the plan.
func TestVerifyConfigurationRefusesTampering(t *testing.T) {
	edit := func(rel string, f func([]byte) []byte) func(*testing.T, string, *Manifest) {
		return func(t *testing.T, dir string, _ *Manifest) {
			p := filepath.Join(dir, rel)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	remove := func(rel string) func(*testing.T, string, *Manifest) {
		return func(t *testing.T, dir string, _ *Manifest) {
			if err := os.Remove(filepath.Join(dir, rel)); err != nil {
				t.Fatal(err)
			}
		}
	}
	lines := func(b []byte) [][]byte { return bytes.SplitAfter(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) }
	cases := []struct {
		name   string
		tamper func(*testing.T, string, *Manifest)
		want   string // in one of the errors
	}{
		{"raw file removed", remove("raw/a.json"), "raw/a.json: missing; the runner wrote 10 lines"},
		{"raw file emptied", edit("raw/a.json", func([]byte) []byte { return nil }), "raw/a.json: 0 lines"},
		{"raw file halved", edit("raw/a.json", func(b []byte) []byte { return bytes.Join(lines(b)[:5], nil) }), "raw/a.json: 5 lines"},
		{"failures filtered out", edit("raw/a.json", func(b []byte) []byte {
			var out []byte
			for _, l := range lines(b) {
				if !bytes.Contains(l, []byte("reset")) {
					out = append(out, l...)
				}
			}
			return out
		}), "raw/a.json: 7 lines"},
		{"a line duplicated", edit("raw/a.json", func(b []byte) []byte { return append(b, lines(b)[3]...) }), "raw/a.json: 11 lines"},
		{"one byte edited", edit("raw/a.json", func(b []byte) []byte { return bytes.Replace(b, []byte(`"code":0`), []byte(`"code":2`), 1) }),
			"raw/a.json: 10 lines"},
		{"resources.csv deleted", remove(ResourcesFile), ResourcesFile + ": missing"},
		{"dependencies.csv deleted", remove(DependenciesFile), DependenciesFile + ": missing"},
		{"a raw file added", func(t *testing.T, dir string, _ *Manifest) {
			os.WriteFile(filepath.Join(dir, "raw", "b.json"), []byte(rawLine(0, false)), 0o644)
		}, "raw/b.json: not written by the runner"},
		{"no state", func(_ *testing.T, _ string, m *Manifest) { m.State = "" }, "no state: a manifest that never said how its configuration ended is not complete"},
		{"complete, never ended", func(_ *testing.T, _ string, m *Manifest) { m.Ended = time.Time{} }, "no end after its start"},
		{"no records", func(_ *testing.T, _ string, m *Manifest) { m.Files = nil }, "records none of the configuration's files"},
		{"sent above scheduled", func(_ *testing.T, _ string, m *Manifest) { m.Endpoints[0].Sent = 11 }, "endpoint /a: 11 sent, more than the 10 scheduled"},
		{"scheduled above the plan", func(_ *testing.T, _ string, m *Manifest) { m.Endpoints[0].Scheduled, m.Endpoints[0].Sent = 12, 10 },
			"endpoint /a: 12 scheduled, more than the plan's 10"},
		{"complete with part of the plan (a cut-off run edited to complete)", func(_ *testing.T, _ string, m *Manifest) {
			m.Endpoints[0].Planned = 400
		}, "endpoint /a: 10 scheduled of the plan's 400, yet its whole time line ran"},
		{"fewer sent than results written", func(_ *testing.T, _ string, m *Manifest) { m.Endpoints[0].Sent = 9 }, "raw/a.json: holds 10 results; the manifest says 9 were sent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, m := completeFolder(t)
			c.tamper(t, dir, m)
			errs := VerifyConfiguration(dir, m)
			var all []string
			for _, err := range errs {
				if !errors.Is(err, ErrIntegrity) {
					t.Errorf("%v does not wrap ErrIntegrity", err)
				}
				all = append(all, err.Error())
			}
			if !strings.Contains(strings.Join(all, "\n"), c.want) {
				t.Errorf("errors:\n%s\nwant one saying %q", strings.Join(all, "\n"), c.want)
			}
		})
	}
}

// An interrupted configuration scheduled only part of its plan; that is no lie.
func TestVerifyConfigurationInterrupted(t *testing.T) {
	dir, m := completeFolder(t)
	m.State, m.Partial, m.Endpoints[0].Planned = StateInterrupted, true, 400
	if errs := VerifyConfiguration(dir, m); len(errs) != 0 {
		t.Errorf("an interrupted folder as written does not verify: %v", errs)
	}
}

// runFolder writes a run folder's inputs as the runner does, with claims when ids are given, and
// returns the folder and its run.json.
func runFolder(t *testing.T, ids ...string) (string, *Run) {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ScenarioFile), []byte("name: x\n"), 0o644)
	if len(ids) > 0 {
		var cs []map[string]string
		for _, id := range ids {
			cs = append(cs, map[string]string{"id": id})
		}
		if err := WriteJSON(filepath.Join(dir, ClaimsFile), cs); err != nil {
			t.Fatal(err)
		}
	}
	run := &Run{Scenario: "x", ClaimIDs: ids}
	for _, f := range []string{ScenarioFile, ClaimsFile} {
		if r, err := RecordFile(dir, f); err == nil {
			run.Files = append(run.Files, r)
		}
	}
	return dir, run
}

// run.json's records hold the run's inputs to what was written: claims.json deleted is not "no
// claims", garbage in it or a claims.json added to a run without claims is not believed, and a
// run.json without records cannot vouch for anything.
func TestVerifyRun(t *testing.T) {
	cases := []struct {
		name   string
		ids    []string
		tamper func(dir string, run *Run)
		want   string // "" for no error
	}{
		{"as written", []string{"P1", "P2"}, func(string, *Run) {}, ""},
		{"without claims, as written", nil, func(string, *Run) {}, ""},
		{"claims.json deleted", []string{"P1", "P2"}, func(dir string, _ *Run) { os.Remove(filepath.Join(dir, ClaimsFile)) },
			"claims.json: missing, yet the run was judged by 2 claim(s) (P1, P2)"},
		{"claims.json garbage", []string{"P1"}, func(dir string, _ *Run) { os.WriteFile(filepath.Join(dir, ClaimsFile), []byte("{{{"), 0o644) },
			"claims.json: 1 lines, 3 bytes"},
		{"claims.json added", nil, func(dir string, _ *Run) { os.WriteFile(filepath.Join(dir, ClaimsFile), []byte("[]"), 0o644) },
			"claims.json: not written by the runner"},
		{"scenario.yaml edited", nil, func(dir string, _ *Run) { os.WriteFile(filepath.Join(dir, ScenarioFile), []byte("name: y\n"), 0o644) },
			"scenario.yaml: 1 lines"},
		{"no records", nil, func(_ string, run *Run) { run.Files = nil }, "run.json: records none of the run's files"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, run := runFolder(t, c.ids...)
			c.tamper(dir, run)
			errs := VerifyRun(dir, run)
			got := fmt.Sprint(errs)
			if c.want == "" && len(errs) > 0 || c.want != "" && !strings.Contains(got, c.want) {
				t.Errorf("VerifyRun = %s, want %q", got, c.want)
			}
		})
	}
}

// A result no measurement gives is refused when read, naming the file and the result.
func TestScanRawRefusesImpossibleResults(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	line := strings.Replace(rawLine(0, false), `"latency":5000000`, `"latency":-5`, 1)
	os.WriteFile(p, []byte(rawLine(1, false)+line), 0o644)
	err := ScanRaw(p, func(*Sent) error { return nil })
	if !errors.Is(err, ErrIntegrity) || !strings.Contains(err.Error(), "a.json: result 1: latency -5ns is negative") {
		t.Errorf("ScanRaw = %v, want ErrIntegrity naming the file, the result and the latency", err)
	}
}

// The lock says a run is in progress while its runner holds it, and not once released (as the
// kernel does when the runner dies, however).
func TestLockRun(t *testing.T) {
	dir := t.TempDir()
	if InProgress(dir) {
		t.Fatal("an unlocked folder is in progress")
	}
	l, err := LockRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !InProgress(dir) {
		t.Error("a locked folder is not in progress")
	}
	if _, err := LockRun(dir); err == nil {
		t.Error("a second runner could lock a locked folder")
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	if InProgress(dir) {
		t.Error("a released folder is still in progress")
	}
	if err := l.Unlock(); err != nil {
		t.Errorf("second Unlock = %v", err)
	}
}

// A file that is not what the runner wrote is ErrChanged (nothing of the folder is believed);
// a manifest that says what cannot be is an integrity error only.
func TestChangedOrOnlyInconsistent(t *testing.T) {
	dir, m := completeFolder(t)
	os.Remove(filepath.Join(dir, ResourcesFile))
	errs := VerifyConfiguration(dir, m)
	if len(errs) != 1 || !errors.Is(errs[0], ErrChanged) || !errors.Is(errs[0], ErrIntegrity) {
		t.Errorf("a deleted resources.csv: %v; want one error, ErrChanged and ErrIntegrity", errs)
	}
	dir, m = completeFolder(t)
	m.State = ""
	errs = VerifyConfiguration(dir, m)
	if len(errs) != 1 || errors.Is(errs[0], ErrChanged) || !errors.Is(errs[0], ErrIntegrity) {
		t.Errorf("a manifest without a state: %v; want one ErrIntegrity, not ErrChanged", errs)
	}
}
