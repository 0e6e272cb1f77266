package rundir

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ErrExists is returned by Create when the run folder already exists.
var ErrExists = errors.New("run folder already exists")

// Create makes a new run folder under root named <UTC timestamp>-<scenario> and returns its path
// and run id. It never reuses a folder: when the name is taken (two runs in the same second) it
// appends -2, -3, ... The folder is created with os.Mkdir, so a concurrent run cannot share it.
func Create(root, scenario string, now time.Time) (dir, id string, err error) {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", "", fmt.Errorf("create results folder %s: %w", root, err)
	}
	base := now.UTC().Format("20060102T150405Z") + "-" + scenario
	for i := 1; i < 1000; i++ {
		id = base
		if i > 1 {
			id = fmt.Sprintf("%s-%d", base, i)
		}
		dir = filepath.Join(root, id)
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", "", fmt.Errorf("create run folder %s: %w", dir, err)
		}
	}
	return "", "", fmt.Errorf("create run folder %s: %w", dir, ErrExists)
}

// WriteJSON writes v as indented JSON to path atomically: it writes a temporary file in the same
// folder, syncs it and renames it over path, so a reader never sees half a file.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return WriteFile(path, append(b, '\n'))
}

// WriteFile writes data to path atomically (temp file + rename).
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	// CreateTemp makes the file 0600; results are for sharing.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ReadJSON decodes the JSON file at path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}

// ResourceSample is one row of resources.csv.
type ResourceSample struct {
	T        time.Duration // offset from the attack start
	Resource string
	Capacity int
	InUse    int
	Rejected uint64
}

// ResourceWriter streams resource samples as CSV. It is not safe for concurrent use.
type ResourceWriter struct {
	w   *csv.Writer
	row []string
}

// NewResourceWriter writes the header row to w and returns a writer for the samples.
func NewResourceWriter(w io.Writer) (*ResourceWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(ResourceCSVHeader); err != nil {
		return nil, err
	}
	return &ResourceWriter{w: cw, row: make([]string, len(ResourceCSVHeader))}, nil
}

// Write appends one row per resource, all at offset t.
func (rw *ResourceWriter) Write(t time.Duration, rs []outcome.Resource) error {
	ts := strconv.FormatFloat(t.Seconds(), 'f', 3, 64)
	for _, r := range rs {
		rw.row[0] = ts
		rw.row[1] = r.Name
		rw.row[2] = strconv.Itoa(r.Capacity)
		rw.row[3] = strconv.Itoa(r.InUse)
		rw.row[4] = strconv.FormatUint(r.Rejected, 10)
		if err := rw.w.Write(rw.row); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes buffered rows to the underlying writer and reports any write error.
func (rw *ResourceWriter) Flush() error {
	rw.w.Flush()
	return rw.w.Error()
}

// ReadResources reads a resources.csv file.
func ReadResources(path string) ([]ResourceSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.FieldsPerRecord = len(ResourceCSVHeader)
	r.ReuseRecord = true
	var out []ResourceSample
	line := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			continue // header
		}
		t, err1 := strconv.ParseFloat(rec[0], 64)
		c, err2 := strconv.Atoi(rec[2])
		u, err3 := strconv.Atoi(rec[3])
		rj, err4 := strconv.ParseUint(rec[4], 10, 64)
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		out = append(out, ResourceSample{
			T: time.Duration(t * float64(time.Second)), Resource: rec[1],
			Capacity: c, InUse: u, Rejected: rj,
		})
	}
}

// ReadRaw streams the vegeta results in the file at path (JSON lines, gob or CSV, detected like
// the vegeta CLI does) to fn, stopping at the first error fn returns. The *Result passed to fn is
// reused between calls: copy what you keep.
func ReadRaw(path string, fn func(*vegeta.Result) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		return nil // an attack that sent nothing (interrupted at once)
	}
	dec := vegeta.DecoderFor(bufio.NewReaderSize(f, 1<<16))
	if dec == nil {
		return fmt.Errorf("%s: not a vegeta results file", path)
	}
	var r vegeta.Result
	for n := 0; ; n++ {
		r = vegeta.Result{}
		if err := dec.Decode(&r); err != nil {
			if err == io.EOF {
				return nil
			}
			return fmt.Errorf("%s: result %d: %w", path, n, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
}

// RawFileName turns an endpoint path into the raw file name: "/a" -> "a.json",
// "/orders/new" -> "orders_new.json", "/" -> "root.json".
func RawFileName(path string) string {
	b := []byte{}
	for _, c := range []byte(path) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '.':
			b = append(b, c)
		default:
			if len(b) > 0 && b[len(b)-1] != '_' {
				b = append(b, '_')
			}
		}
	}
	for len(b) > 0 && b[len(b)-1] == '_' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 {
		return "root.json"
	}
	return string(b) + ".json"
}
