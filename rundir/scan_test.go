package rundir

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/outcome"
)

// ScanRaw reads what vegeta's decoder reads, for every field Sent keeps.
func TestScanRawAgreesWithVegeta(t *testing.T) {
	ts := time.Date(2026, 11, 30, 9, 38, 52, 934148816, time.UTC)
	results := []vegeta.Result{
		{Attack: "/a", Seq: 0, Code: 200, Timestamp: ts, Latency: 7170648, URL: "http://127.0.0.1:1/a", Method: "GET",
			Headers: http.Header{outcome.HeaderOutcome: {"ok"}, outcome.HeaderScheduled: {"20000000"}, outcome.HeaderClass: {"ok"}}},
		{Attack: "/a", Seq: 1, Code: 503, Timestamp: ts.Add(20 * time.Millisecond), Latency: 900000, Body: []byte("rejected A full\n"),
			Headers: http.Header{outcome.HeaderOutcome: {"rejected"}, outcome.HeaderPool: {"A"}, outcome.HeaderReason: {"full"},
				outcome.HeaderDependency: {"A"}, outcome.HeaderClass: {"rejected:full"}, "Content-Type": {"text/plain"}}},
		{Attack: "/a", Seq: 2, Code: 0, Timestamp: ts.Add(time.Second), Latency: 2 * time.Second,
			Error:   "Get \"http://127.0.0.1:1/a\": context deadline exceeded (Client.Timeout exceeded \\ \"quoted\")",
			Headers: http.Header{outcome.HeaderClass: {"timeout:client"}}},
		{Attack: "/a", Seq: 3, Code: 200, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Latency: 1}, // no fraction
		{Attack: "/a", Seq: 4, Code: 200, Timestamp: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), Latency: 1},
	}
	for _, enc := range []struct {
		name string
		new  func(w *bytes.Buffer) vegeta.Encoder
	}{
		{"json", func(w *bytes.Buffer) vegeta.Encoder { return vegeta.NewJSONEncoder(w) }},
		{"gob", func(w *bytes.Buffer) vegeta.Encoder { return vegeta.NewEncoder(w) }},
	} {
		t.Run(enc.name, func(t *testing.T) {
			var buf bytes.Buffer
			e := enc.new(&buf)
			for i := range results {
				if err := e.Encode(&results[i]); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(t.TempDir(), "a.json")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var got []Sent
			err := ScanRaw(path, func(s *Sent) error {
				c := *s
				for _, f := range []*string{&c.Error, &c.Outcome, &c.Pool, &c.Reason, &c.Dependency, &c.Scheduled, &c.Class} {
					*f = strings.Clone(*f)
				}
				got = append(got, c)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(results) {
				t.Fatalf("%d results, want %d", len(got), len(results))
			}
			for i, r := range results {
				g := got[i]
				if !g.Timestamp.Equal(r.Timestamp) || g.Latency != r.Latency || g.Code != int(r.Code) || g.Error != r.Error {
					t.Errorf("result %d = %+v, want %+v", i, g, r)
				}
				for _, h := range append([]string{outcome.HeaderScheduled, outcome.HeaderClass}, outcome.KeptHeaders...) {
					if g.Header().Get(h) != r.Headers.Get(h) {
						t.Errorf("result %d header %s = %q, want %q", i, h, g.Header().Get(h), r.Headers.Get(h))
					}
				}
				if g.Header().Get("Content-Type") != "" {
					t.Errorf("result %d kept a header outside the contract", i)
				}
			}
		})
	}
}

func TestScanRawReportsCorruptLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.json")
	good := `{"attack":"/a","seq":0,"code":200,"timestamp":"2026-11-30T09:38:52.934148816Z","latency":7170648,"headers":{}}`
	if err := os.WriteFile(path, []byte(good+"\n"+`{"code": "x"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := ScanRaw(path, func(*Sent) error { n++; return nil })
	if err == nil || !strings.Contains(err.Error(), "result 1") {
		t.Errorf("ScanRaw = %v after %d results; want an error naming result 1", err, n)
	}
}

// The example run's raw files read the same both ways.
func TestScanRawExample(t *testing.T) {
	files, _ := filepath.Glob("../results/example/*/raw/*.json")
	if len(files) == 0 {
		testenv.SkipOrFail(t, "no example run under results/example")
	}
	for _, f := range files {
		var want []vegeta.Result
		if err := ReadRaw(f, func(r *vegeta.Result) error { want = append(want, *r); return nil }); err != nil {
			t.Fatal(err)
		}
		i := 0
		err := ScanRaw(f, func(s *Sent) error {
			r := want[i]
			if !s.Timestamp.Equal(r.Timestamp) || s.Latency != r.Latency || s.Code != int(r.Code) || s.Error != r.Error ||
				s.Class != r.Headers.Get(outcome.HeaderClass) {
				t.Fatalf("%s result %d differs", f, i)
			}
			i++
			return nil
		})
		if err != nil || i != len(want) {
			t.Fatalf("%s: %v, %d of %d", f, err, i, len(want))
		}
	}
}
