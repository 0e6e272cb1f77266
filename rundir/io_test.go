package rundir

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/bulkheadlab/bulkhead/outcome"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

func TestCreateNeverReusesAFolder(t *testing.T) {
	root := filepath.Join(t.TempDir(), "results")
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		dir, id, err := Create(root, "hypothesis", now)
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] {
			t.Fatalf("run %d reused %s", i, dir)
		}
		seen[dir] = true
		if filepath.Base(dir) != id || !strings.HasPrefix(id, "20261130T090000Z-hypothesis") {
			t.Errorf("dir %s, id %s", dir, id)
		}
	}
}

func TestWriteJSONIsAtomicAndRoundTrips(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	in := Manifest{Scenario: "x", Configuration: "shared", Valid: true, Phases: []Phase{{Name: "baseline", End: time.Second}}}
	if err := WriteJSON(path, in); err != nil {
		t.Fatal(err)
	}
	var out Manifest
	if err := ReadJSON(path, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip: got %+v, want %+v", out, in)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644 like any other result file", fi.Mode().Perm(), err)
	}
}

func TestResourcesRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResourcesFile)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewResourceWriter(f)
	if err != nil {
		t.Fatal(err)
	}
	rs := []outcome.Resource{
		{Name: "pool:shared", Capacity: 10, InUse: 10, Rejected: 3, Interval: 100 * time.Millisecond,
			MeanInUse: 9.25, MaxInUse: 10, AtCapacity: 62500 * time.Microsecond, FirstAtCapacity: 37500 * time.Microsecond},
		{Name: "calls:B", Capacity: 2, InUse: 1, Interval: 100 * time.Millisecond, MeanInUse: 0.5, MaxInUse: 1, FirstAtCapacity: -1},
		// An adaptive pool: limit 6 at the sample, 7.5 on average over the interval.
		{Name: "pool:A", Capacity: 6, InUse: 6, Interval: 100 * time.Millisecond, MeanInUse: 5.5, MaxInUse: 7,
			AtCapacity: 25 * time.Millisecond, FirstAtCapacity: 75 * time.Millisecond, MeanCapacity: 7.5},
		{Name: "goroutines", InUse: 42},
	}
	if err := w.Write(1500*time.Millisecond, rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := ReadResources(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []ResourceSample{
		{T: 1500 * time.Millisecond, Resource: "pool:shared", Capacity: 10, InUse: 10, Rejected: 3, Interval: 100 * time.Millisecond,
			MeanInUse: 9.25, MaxInUse: 10, AtCapacity: 62500 * time.Microsecond, FirstAtCapacity: 37500 * time.Microsecond},
		{T: 1500 * time.Millisecond, Resource: "calls:B", Capacity: 2, InUse: 1, Interval: 100 * time.Millisecond,
			MeanInUse: 0.5, MaxInUse: 1, FirstAtCapacity: -1},
		{T: 1500 * time.Millisecond, Resource: "pool:A", Capacity: 6, InUse: 6, Interval: 100 * time.Millisecond,
			MeanInUse: 5.5, MaxInUse: 7, AtCapacity: 25 * time.Millisecond, FirstAtCapacity: 75 * time.Millisecond, MeanCapacity: 7.5},
		{T: 1500 * time.Millisecond, Resource: "goroutines", InUse: 42},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

// Levels and capacities are floats (issue 20 item 7): a scraped resource's fractions survive
// resources.csv exactly, while whole values (every count of the built-in service) are written
// as the integers they always were, byte for byte.
func TestResourcesKeepFractionsAndWriteCountsAsBefore(t *testing.T) {
	var b strings.Builder
	w, err := NewResourceWriter(&b)
	if err != nil {
		t.Fatal(err)
	}
	rs := []outcome.Resource{
		{Name: "pool:shared", Capacity: 10, InUse: 7, Rejected: 3, Interval: 100 * time.Millisecond,
			MeanInUse: 6.5, MaxInUse: 10, AtCapacity: 5 * time.Millisecond, FirstAtCapacity: 20 * time.Millisecond},
		{Name: "heap-bytes", InUse: 123456789012},
		{Name: "cpu:api", Capacity: 1.5, InUse: 0.375, RejectedUnknown: true},
		{Name: "eventloop:main", Capacity: 0.05, InUse: 0.0123, RejectedUnknown: true},
		{Name: "queue:web", InUse: 1.0 / 3, Interval: 100 * time.Millisecond, MeanInUse: 0.25, MaxInUse: 2.75, FirstAtCapacity: -1},
	}
	if err := w.Write(time.Second, rs); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(ResourceCSVHeader, ",") + "\n" +
		"1.000,pool:shared,10,7,3,0.100000,6.5000,10,0.005000,0.020000,\n" + // as before floats
		"1.000,heap-bytes,0,123456789012,0,0.000000,,,,,\n" +
		"1.000,cpu:api,1.5,0.375,,0.000000,,,,,\n" +
		"1.000,eventloop:main,0.05,0.0123,,0.000000,,,,,\n" +
		"1.000,queue:web,0,0.3333333333333333,0,0.100000,0.2500,2.75,0.000000,,\n"
	if b.String() != want {
		t.Errorf("resources.csv =\n%s\nwant\n%s", b.String(), want)
	}
	path := filepath.Join(t.TempDir(), ResourcesFile)
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadResources(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if g := got[i]; g.Capacity != r.Capacity || g.InUse != r.InUse || g.MaxInUse != r.MaxInUse {
			t.Errorf("%s read back as capacity %v in use %v max %v; written %v %v %v", r.Name, g.Capacity, g.InUse, g.MaxInUse, r.Capacity, r.InUse, r.MaxInUse)
		}
	}
}

// A folder written before the interval columns still reads: its rows are point samples.
func TestReadResourcesOldFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResourcesFile)
	os.WriteFile(path, []byte("t_s,resource,capacity,in_use,rejected\n0.100,pool:A,5,5,7\n"), 0o644)
	got, err := ReadResources(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []ResourceSample{{T: 100 * time.Millisecond, Resource: "pool:A", Capacity: 5, InUse: 5, Rejected: 7}}
	if !reflect.DeepEqual(got, want) || got[0].Exact() {
		t.Errorf("got %+v (exact %v), want the point sample %+v", got, got[0].Exact(), want)
	}
}

// A folder written before mean_capacity still reads: every capacity in it was fixed.
func TestReadResourcesTenColumns(t *testing.T) {
	path := filepath.Join(t.TempDir(), ResourcesFile)
	os.WriteFile(path, []byte("t_s,resource,capacity,in_use,rejected,interval_s,mean_in_use,max_in_use,at_capacity_s,first_at_capacity_s\n"+
		"0.100,pool:A,5,5,7,0.1,2.5,5,0.05,0.05\n"), 0o644)
	got, err := ReadResources(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []ResourceSample{{T: 100 * time.Millisecond, Resource: "pool:A", Capacity: 5, InUse: 5, Rejected: 7,
		Interval: 100 * time.Millisecond, MeanInUse: 2.5, MaxInUse: 5, AtCapacity: 50 * time.Millisecond, FirstAtCapacity: 50 * time.Millisecond}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestReadResourcesNamesTheBadLine(t *testing.T) {
	const newHeader = "t_s,resource,capacity,in_use,rejected,interval_s,mean_in_use,max_in_use,at_capacity_s,first_at_capacity_s\n"
	for _, tc := range []struct{ name, file, want string }{
		{"old format, bad capacity", "t_s,resource,capacity,in_use,rejected\n0.1,pool:a,x,1,0\n", ResourcesFile + ":2: column capacity"},
		{"new format, bad mean", newHeader + "0.1,pool:a,5,1,0,0.1,x,1,0,\n", ResourcesFile + ":2: column mean_in_use"},
		{"bad mean capacity", strings.TrimSuffix(newHeader, "\n") + ",mean_capacity\n0.1,pool:a,5,1,0,0.1,1,1,0,,x\n", ResourcesFile + ":2: column mean_capacity"},
		{"at capacity longer than the interval", newHeader + "0.1,pool:a,5,5,0,0.1,5,5,0.2,0\n", ResourcesFile + ":2: column at_capacity_s"},
		{"row narrower than the header", newHeader + "0.1,pool:a,5,1,0\n", "line 2: wrong number of fields"},
		{"NaN level", "t_s,resource,capacity,in_use,rejected\n0.1,cpu:a,1,NaN,0\n", ResourcesFile + ":2: column in_use: NaN is not a finite number"},
		{"infinite capacity", "t_s,resource,capacity,in_use,rejected\n0.1,cpu:a,+Inf,0.5,0\n", ResourcesFile + ":2: column capacity: +Inf is not a finite number"},
		{"negative level", "t_s,resource,capacity,in_use,rejected\n0.1,pool:a,5,-1,0\n", ResourcesFile + ":2: column in_use: -1 is negative"},
		{"negative peak", newHeader + "0.1,pool:a,5,1,0,0.1,1,-0.5,0,\n", ResourcesFile + ":2: column max_in_use: -0.5 is negative"},
		{"unknown header", "t,resource\n", ResourcesFile + ":1: header"},
		{"empty file", "", "empty file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), ResourcesFile)
			os.WriteFile(path, []byte(tc.file), 0o644)
			_, err := ReadResources(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestReadRaw(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	os.WriteFile(empty, nil, 0o644)
	n := 0
	if err := ReadRaw(empty, func(*vegeta.Result) error { n++; return nil }); err != nil || n != 0 {
		t.Fatalf("empty file: n=%d err=%v; want 0 results, no error", n, err)
	}
	path := filepath.Join(dir, "a.json")
	f, _ := os.Create(path)
	enc := vegeta.NewJSONEncoder(f)
	for i := 0; i < 3; i++ {
		enc.Encode(&vegeta.Result{Attack: "/a", Seq: uint64(i), Code: 200, Timestamp: time.Unix(0, int64(i))})
	}
	f.Close()
	var seqs []uint64
	if err := ReadRaw(path, func(r *vegeta.Result) error { seqs = append(seqs, r.Seq); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []uint64{0, 1, 2}) {
		t.Errorf("seqs %v", seqs)
	}
}

func TestRawFileName(t *testing.T) {
	for in, want := range map[string]string{
		"/a": "a.json", "/orders/new": "orders_new.json", "/": "root.json", "/p/partner-001": "p_partner-001.json",
	} {
		if got := RawFileName(in); got != want {
			t.Errorf("RawFileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCountLines(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     int
	}{
		{"empty", "", 0},
		{"one line with its newline", "a\n", 1},
		{"one line without a newline", "a", 1},
		{"two lines, the last without a newline", "a\nb", 2},
		{"a blank line counts", "a\n\nb\n", 3},
		{"longer than one read buffer", strings.Repeat("0.1,pool:a,5,1,0\n", 10000), 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := countLines(strings.NewReader(tc.in))
			if err != nil || got != tc.want {
				t.Errorf("countLines = %d, %v, want %d", got, err, tc.want)
			}
		})
	}
}

// A resource's name is held once, whatever the number of its rows, and not as a substring of a
// line (which would keep the whole line alive); the samples keep their order and values.
func TestReadResourcesSharesNames(t *testing.T) {
	const header = "t_s,resource,capacity,in_use,rejected,interval_s,mean_in_use,max_in_use,at_capacity_s,first_at_capacity_s\n"
	path := filepath.Join(t.TempDir(), ResourcesFile)
	var b strings.Builder
	b.WriteString(header)
	for i := range 3 {
		fmt.Fprintf(&b, "0.%d,pool:a,5,%d,0,0.1,1,1,0,\n0.%d,pool:b,5,%d,0,0.1,1,1,0,\n", i+1, i, i+1, i+1)
	}
	os.WriteFile(path, []byte(b.String()), 0o644)
	got, err := ReadResources(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 6 || cap(got) != 6 {
		t.Fatalf("got %d samples in a slice of capacity %d, want 6 in 6", len(got), cap(got))
	}
	for i, s := range got {
		wantName, wantInUse := "pool:a", float64(i/2)
		if i%2 == 1 {
			wantName, wantInUse = "pool:b", float64(i/2+1)
		}
		if s.Resource != wantName || s.InUse != wantInUse {
			t.Errorf("sample %d = %s in use %v, want %s in use %v", i, s.Resource, s.InUse, wantName, wantInUse)
		}
		if first := got[i%2].Resource; unsafe.StringData(s.Resource) != unsafe.StringData(first) {
			t.Errorf("sample %d's name %q is a copy of its own, want the one string of sample %d", i, s.Resource, i%2)
		}
	}
}

// A rejection count that is not known is written empty and read back as unknown, not as 0.
func TestResourcesRejectedUnknown(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewResourceWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(time.Second, []outcome.Resource{{Name: "pool:a", Capacity: 5, InUse: 2, RejectedUnknown: true}, {Name: "pool:b", Capacity: 5, InUse: 2}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ResourcesFile)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := ReadResources(path)
	if err != nil || len(rs) != 2 || !rs[0].RejectedUnknown || rs[1].RejectedUnknown {
		t.Fatalf("ReadResources = %+v, %v; want pool:a unknown, pool:b a count of 0", rs, err)
	}
}
