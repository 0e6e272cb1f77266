package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/outcome"
)

// Two shard processes started from one spec send the unsharded load between them: one common T0,
// each shard's own raw file kept, and the merged raw file is the unsharded run's, Seq gapless
// and every result at its unsharded scheduled offset; each shard measured its clock against the
// runner's.
func TestShardsSendTheUnshardedLoadFromACommonStart(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, 700*time.Millisecond)
	// Room for two children to start under the race detector on a busy machine.
	defer func(lead time.Duration) { ShardStartLead = lead }(ShardStartLead)
	ShardStartLead = 5 * time.Second
	s, err := StartShards(context.Background(), spec, 2, Options{Name: "configuration shared-r1: load generator", Argv: []string{os.Args[0], "attack"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	checks, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range checks {
		a := spec.Attacks[i]
		pacer, _ := a.Pacer.Pacer()
		if c.Scheduled != pacer.Hits(spec.Duration) || c.Sent != c.Scheduled {
			t.Errorf("%s: merged check %+v; want all %d unsharded hits sent", a.Name, c, pacer.Hits(spec.Duration))
		}
		res := readRaw(t, filepath.Join(dir, a.RawFile))
		for j, r := range res {
			if r.Seq != uint64(j) {
				t.Fatalf("%s: merged result %d has Seq %d; want the unsharded Seq in order", a.Name, j, r.Seq)
			}
			if got, want := r.Headers.Get(outcome.HeaderScheduled), strconv.FormatInt(int64(pacer.Scheduled(r.Seq)), 10); got != want {
				t.Fatalf("%s seq %d: scheduled %s; want the unsharded %s", a.Name, r.Seq, got, want)
			}
		}
		recs := s.ShardRecords()[i]
		if len(recs) != 2 {
			t.Fatalf("%s: %d shard records; want 2", a.Name, len(recs))
		}
		var sent uint64
		for k, r := range recs {
			seg := loadgen.Shard{Index: k, Count: 2}
			if r.Segment != seg.String() || r.RawFile != ShardName(a.RawFile, seg) || !r.T0.Equal(s.T0()) {
				t.Errorf("%s shard %d: record %+v", a.Name, k, r)
			}
			if !r.ClockKnown || r.ClockUncertainty <= 0 || r.ClockOffset.Abs() > r.ClockUncertainty+time.Millisecond {
				t.Errorf("%s shard %d: clock offset %v ± %v (known %v); want one within its uncertainty of 0 on one machine",
					a.Name, k, r.ClockOffset, r.ClockUncertainty, r.ClockKnown)
			}
			if r.StartSlack <= 0 || r.StartSlack > ShardStartLead {
				t.Errorf("%s shard %d: ready %v before T0; want within the %v lead", a.Name, k, r.StartSlack, ShardStartLead)
			}
			if n := len(readRaw(t, filepath.Join(dir, r.RawFile))); uint64(n) != r.Sent {
				t.Errorf("%s shard %d: %d results in its file, %d sent", a.Name, k, n, r.Sent)
			}
			sent += r.Sent
		}
		if sent != uint64(len(res)) {
			t.Errorf("%s: the shards sent %d, the merged file holds %d", a.Name, sent, len(res))
		}
	}
	// (Validity under the race detector on a busy machine is not what is tested: the counts are.)
	if p := s.Pooled(); p.Sent != checks[0].Sent+checks[1].Sent {
		t.Errorf("pooled %+v; want the shards' sends together", p)
	}
	for _, f := range s.SpecFiles() {
		sp, err := ReadSpec(filepath.Join(dir, f))
		if err != nil || !sp.T0.Equal(s.T0()) || !sp.Segment.Sharded() {
			t.Errorf("%s: %+v, %v; want the common T0 and a segment", f, sp, err)
		}
	}
}

// writeShard writes results g = k, k+n, ... of a 1000/s schedule for shard k of n, each sent
// late by lag after t0 + its scheduled offset, leaving out the Seq numbers in skip.
func writeShard(t *testing.T, path string, k, n, hits int, t0 time.Time, lag time.Duration, skip map[int]bool) {
	t.Helper()
	var b bytes.Buffer
	for g := k; g < hits; g += n {
		if skip[g] {
			continue
		}
		sched := time.Duration(g+1) * time.Millisecond
		fmt.Fprintf(&b, `{"attack":"a","seq":%d,"code":200,"timestamp":%q,"latency":1000,"bytes_out":0,"bytes_in":0,"error":"","body":null,"method":"GET","url":"http://x/a","headers":{%q:["%d"]}}`+"\n",
			g, t0.Add(sched+lag).Format(time.RFC3339Nano), outcome.HeaderScheduled, int64(sched))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Merge is exact and judges what no shard can see alone: shards in step merge valid; a shard
// that started 50 ms late, Seq numbers missing, or two shards given the same segment do not.
func TestMergeJudgesTheShardsTogether(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	const hits = 2000
	for _, c := range []struct {
		name    string
		lag1    time.Duration
		skip    map[int]bool
		dup     bool
		results uint64
		want    string // "" for valid
	}{
		{name: "in step", lag1: 100 * time.Microsecond, results: hits},
		{name: "shard 1 started 50ms late", lag1: 50 * time.Millisecond, results: hits, want: "out of step"},
		{name: "results missing", skip: map[int]bool{7: true, 9: true}, results: hits - 2, want: "miss 2 Seq numbers"},
		{name: "the same segment twice", dup: true, results: hits, want: "more than one shard"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			in := []string{filepath.Join(dir, "a.shard-0-of-2.jsonl"), filepath.Join(dir, "a.shard-1-of-2.jsonl")}
			writeShard(t, in[0], 0, 2, hits, t0, 0, c.skip)
			k1 := 1
			if c.dup {
				k1 = 0
			}
			writeShard(t, in[1], k1, 2, hits+1, t0, c.lag1, c.skip)
			if c.dup {
				// shard "1" sent the even hits again: the odd ones are missing too
				c.want = "more than one shard"
			}
			m, err := Merge(filepath.Join(dir, "a.jsonl"), in, t0)
			if err != nil {
				t.Fatal(err)
			}
			reasons := judgeMerged(m, 10*time.Millisecond)
			if c.want == "" {
				if len(reasons) != 0 || m.Results != c.results || m.Gaps != 0 {
					t.Fatalf("merge %+v, reasons %q; want valid with %d results", m, reasons, c.results)
				}
				if m.LagP99 != 100*time.Microsecond {
					t.Fatalf("merged lag p99 %v; want the late shard's 100µs", m.LagP99)
				}
				res := readRaw(t, filepath.Join(dir, "a.jsonl"))
				for j, r := range res {
					if r.Seq != uint64(j) {
						t.Fatalf("merged result %d has Seq %d", j, r.Seq)
					}
				}
				return
			}
			if !strings.Contains(strings.Join(reasons, "; "), c.want) {
				t.Fatalf("merge %+v, reasons %q; want one saying %q", m, reasons, c.want)
			}
		})
	}
}

// A shard on a cluster streams its raw files over its stdout; Gather rebuilds them exactly,
// and a stream cut short (a truncated log) is an error, not a shorter file taken for the truth.
func TestGatherRebuildsStreamedResults(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, 300*time.Millisecond)
	specFile := filepath.Join(dir, SpecFile)
	b, _ := jsonIndent(spec)
	if err := os.WriteFile(specFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var events, log bytes.Buffer
	seg := loadgen.Shard{Index: 1, Count: 2}
	if err := ServeWith(context.Background(), specFile, ServeOptions{Segment: &seg, StreamResults: true}, &events, &log); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	paths := []string{filepath.Join(out, "a"), filepath.Join(out, "b")}
	got, err := Gather(bytes.NewReader(events.Bytes()), paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[0].Type != EventStarted || got[0].Segment != seg || got[len(got)-1].Type != EventDone {
		t.Fatalf("events %+v; want started (segment 1/2) ... done", got)
	}
	for i, a := range spec.Attacks {
		want, err := os.ReadFile(filepath.Join(dir, ShardName(a.RawFile, seg)))
		if err != nil {
			t.Fatal(err)
		}
		if g, _ := os.ReadFile(paths[i]); !bytes.Equal(g, want) || len(want) == 0 {
			t.Fatalf("%s: gathered %d bytes, the shard wrote %d", a.Name, len(g), len(want))
		}
	}
	cut := events.Bytes()[:bytes.LastIndex(events.Bytes(), []byte(`"type":"results_end"`))]
	out2 := t.TempDir()
	_, err = Gather(bytes.NewReader(cut), []string{filepath.Join(out2, "a"), filepath.Join(out2, "b")})
	if !errors.Is(err, ErrIncomplete) {
		t.Fatalf("Gather of a cut stream: %v; want ErrIncomplete", err)
	}
}

func jsonIndent(s Spec) ([]byte, error) { return json.MarshalIndent(s, "", "  ") }

// The merge is exact: an unsharded raw file split into its stripes (as N shards write them, each
// in its own order) merges back into the same bytes, ordered by Seq, so every statistic of the
// merged file is the unsharded file's.
func TestMergeOfStripesIsTheUnshardedFile(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	whole := filepath.Join(dir, "whole.jsonl")
	writeShard(t, whole, 0, 1, 3001, t0, 37*time.Microsecond, nil)
	b, err := os.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
	const n = 3
	var in []string
	for k := range n {
		var part []string
		for g := len(lines) - 1; g >= 0; g-- { // each shard's file in an order of its own
			if g%n == k {
				part = append(part, strings.TrimSuffix(lines[g], "\n")+"\n")
			}
		}
		p := filepath.Join(dir, fmt.Sprintf("a.shard-%d-of-%d.jsonl", k, n))
		if err := os.WriteFile(p, []byte(strings.Join(part, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		in = append(in, p)
	}
	m, err := Merge(filepath.Join(dir, "merged.jsonl"), in, t0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "merged.jsonl"))
	if !bytes.Equal(got, b) {
		t.Fatalf("the merged file (%d bytes) is not the unsharded one (%d bytes)", len(got), len(b))
	}
	if m.Results != 3001 || m.Gaps != 0 || m.Duplicates != 0 || m.LagP99 != 37*time.Microsecond {
		t.Fatalf("merge %+v; want 3001 results, gapless, lag 37µs", m)
	}
}
