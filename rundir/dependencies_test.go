package rundir

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

func TestDependenciesRoundTrip(t *testing.T) {
	var times, waits outcome.Histogram
	for _, d := range []time.Duration{5 * time.Millisecond, 6 * time.Millisecond, 455 * time.Millisecond} {
		times.Add(d)
	}
	waits.Add(500 * time.Millisecond)
	in := []outcome.Answers{
		{Dependency: "A", Interval: 100 * time.Millisecond, Arrived: 4, Answered: 3, Times: times, Max: 455 * time.Millisecond,
			Errors: 1, Abandoned: 1, Unanswered: waits, InFlight: 2, Oldest: 320 * time.Millisecond},
		{Dependency: "B", Interval: 100 * time.Millisecond, Refused: 2, Closed: 40 * time.Millisecond, Opaque: 1},
	}
	var buf bytes.Buffer
	w, err := NewDependencyWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(1200*time.Millisecond, in); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], "1.200,A,0.100000,4,3,1,1,0,0,0.000000,2,0.320000,") {
		t.Fatalf("file:\n%s", buf.String())
	}
	path := filepath.Join(t.TempDir(), DependenciesFile)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDependencies(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("read %d rows, want 2", len(got))
	}
	a := got[0]
	if a.T != 1200*time.Millisecond || a.Dependency != "A" || a.Interval != 100*time.Millisecond || a.Arrived != 4 ||
		a.Answered != 3 || a.Errors != 1 || a.Abandoned != 1 || a.InFlight != 2 || a.Oldest != 320*time.Millisecond ||
		a.Max != 455*time.Millisecond || a.Times.String() != times.String() || a.Unanswered.String() != waits.String() {
		t.Errorf("row A = %+v", a)
	}
	if b := got[1]; b.Refused != 2 || b.Closed != 40*time.Millisecond || b.Opaque != 1 || b.Answered != 0 || b.Times.Count() != 0 {
		t.Errorf("row B = %+v", b)
	}
}

func TestReadDependenciesErrors(t *testing.T) {
	header := strings.Join(DependencyCSVHeader, ",") + "\n"
	row := "1.000,A,0.100000,1,1,0,0,0,0,0,0,0.000000,5.000,5.000,5.000,0,"
	cases := []struct{ name, file, want string }{
		{"empty", "", "empty file"},
		{"an older header", "t_s,dependency\n", ":1: header"},
		{"a negative count", header + "1.000,A,0.100000,-1,0,0,0,0,0,0,0,0,,,,0,,\n", ":2: column arrived: -1 is negative"},
		{"times that do not add up", header + row + "104:2,\n", ":2: column times: 2 answer times for 1 answered"},
		{"a bad histogram", header + row + "x,\n", ":2: column times: histogram bucket"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), DependenciesFile)
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadDependencies(path)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
				t.Errorf("err = %v, want it to name the file and say %q", err, c.want)
			}
		})
	}
	if _, err := ReadDependencies(filepath.Join(t.TempDir(), "none.csv")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
}

// The first files, written before closed_s, read with the dependency never closed.
func TestReadDependenciesV1(t *testing.T) {
	path := filepath.Join(t.TempDir(), DependenciesFile)
	file := strings.Join(dependencyCSVHeaderV1, ",") + "\n1.000,A,0.100000,1,1,0,0,0,0,0,0.000000,5.000,5.000,5.000,0,104:1,\n"
	if err := os.WriteFile(path, []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadDependencies(path)
	if err != nil || len(got) != 1 || got[0].Answered != 1 || got[0].Closed != 0 || got[0].Times.Count() != 1 {
		t.Fatalf("ReadDependencies = %+v, %v", got, err)
	}
}
