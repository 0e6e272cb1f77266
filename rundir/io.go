package rundir

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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

// ResourceSample is one row of resources.csv. Interval and the fields after it are the exact
// figures of the interval (T-Interval, T] (see outcome.Resource); Interval 0 marks a point sample.
type ResourceSample struct {
	T        time.Duration // offset from the attack start
	Resource string
	// Capacity, InUse and MaxInUse are float64, as in outcome.Resource: whole counts for the
	// built-in service, what the exporter reports for a scraped resource.
	Capacity float64
	InUse    float64
	Rejected uint64
	// RejectedUnknown: the rejected column was empty, no count is known (outcome.Resource).
	RejectedUnknown bool

	Interval        time.Duration
	MeanInUse       float64
	MaxInUse        float64
	AtCapacity      time.Duration
	FirstAtCapacity time.Duration // -1: not at capacity in the interval (0 in a point sample)
	// MeanCapacity is the time-weighted mean capacity over the interval of a resource whose
	// capacity moves (outcome.Resource.MeanCapacity); 0 when it was fixed (it is Capacity).
	MeanCapacity float64
}

// Exact reports whether the row carries the exact figures of an interval.
func (s ResourceSample) Exact() bool { return s.Interval > 0 }

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
		rw.row[2] = level(r.Capacity)
		rw.row[3] = level(r.InUse)
		rw.row[4] = strconv.FormatUint(r.Rejected, 10)
		if r.RejectedUnknown {
			rw.row[4] = "" // no count known, not a count of 0
		}
		rw.row[5] = seconds(r.Interval)
		for i := 6; i < len(rw.row); i++ {
			rw.row[i] = ""
		}
		if r.Exact() {
			rw.row[6] = strconv.FormatFloat(r.MeanInUse, 'f', 4, 64)
			rw.row[7] = level(r.MaxInUse)
			rw.row[8] = seconds(r.AtCapacity)
			if r.FirstAtCapacity >= 0 {
				rw.row[9] = seconds(r.FirstAtCapacity)
			}
			if r.MeanCapacity != 0 {
				rw.row[10] = strconv.FormatFloat(r.MeanCapacity, 'f', 4, 64)
			}
		}
		if err := rw.w.Write(rw.row); err != nil {
			return err
		}
	}
	return nil
}

// level formats a level or a capacity: a whole value as an integer ("10", as resources.csv has
// always held the built-in service's counts), a fraction in the fewest digits that read back to
// the same float64 ("0.35", "0.012").
func level(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// parseLevel reads a level or a capacity written by level (or an integer, as older files hold):
// a finite number >= 0.
func parseLevel(v string, into *float64) error {
	x, err := strconv.ParseFloat(v, 64)
	switch {
	case err != nil:
		return err
	case math.IsNaN(x) || math.IsInf(x, 0):
		return fmt.Errorf("%s is not a finite number", v)
	case x < 0:
		return fmt.Errorf("%s is negative", v)
	}
	*into = x
	return nil
}

// seconds formats d in seconds to the microsecond.
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 6, 64) }

// Flush writes buffered rows to the underlying writer and reports any write error.
func (rw *ResourceWriter) Flush() error {
	rw.w.Flush()
	return rw.w.Error()
}

// ReadResources reads a resources.csv file, in the current format (ResourceCSVHeader), the older
// one of ten columns (no mean_capacity: every capacity fixed) or of five (its rows are point
// samples). Errors name the file, line and column.
//
// The file holds one row per resource every sampling interval (600,000 rows for the partners
// scenario's 1,000 pools and 500 dependencies over 30 s), so the samples are read into a slice
// sized once from the file's line count, and each resource name is held once however many rows
// carry it.
func ReadResources(path string) ([]ResourceSample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := countLines(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r := csv.NewReader(bufio.NewReader(f))
	r.ReuseRecord = true
	out := make([]ResourceSample, 0, max(rows-1, 0))
	// A field of a csv record is a substring of the whole line's string: keeping it would keep
	// every line alive. names holds one copy of each resource name.
	names := map[string]string{}
	line := 0
	for {
		rec, err := r.Read()
		if err == io.EOF {
			if line == 0 {
				return nil, fmt.Errorf("%s: empty file, want the header %s", path, strings.Join(ResourceCSVHeader, ","))
			}
			return out, nil
		}
		line++
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			if !slices.Equal(rec, ResourceCSVHeader) && !slices.Equal(rec, resourceCSVHeaderV2) && !slices.Equal(rec, resourceCSVHeaderV1) {
				return nil, fmt.Errorf("%s:1: header %q is neither %q nor an older %q or %q", path,
					strings.Join(rec, ","), strings.Join(ResourceCSVHeader, ","),
					strings.Join(resourceCSVHeaderV2, ","), strings.Join(resourceCSVHeaderV1, ","))
			}
			r.FieldsPerRecord = len(rec) // every row as wide as the header
			continue
		}
		s, err := parseResourceRow(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		name, ok := names[s.Resource]
		if !ok {
			name = strings.Clone(s.Resource)
			names[name] = name
		}
		s.Resource = name
		out = append(out, s)
	}
}

// countLines returns the number of newline-terminated lines in r, plus one for a last line
// without a newline, reading r to its end.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n, last := 0, byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += bytes.Count(buf[:k], []byte{'\n'})
			last = buf[k-1]
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// parseResourceRow parses one row of either format.
func parseResourceRow(rec []string) (ResourceSample, error) {
	var errs []error
	field := func(i int, parse func(string) error) {
		if err := parse(rec[i]); err != nil {
			errs = append(errs, fmt.Errorf("column %s: %w", ResourceCSVHeader[i], err))
		}
	}
	dur := func(d *time.Duration) func(string) error {
		return func(v string) error {
			x, err := strconv.ParseFloat(v, 64)
			*d = time.Duration(math.Round(x * float64(time.Second)))
			return err
		}
	}
	s := ResourceSample{Resource: rec[1]}
	field(0, dur(&s.T))
	field(2, func(v string) error { return parseLevel(v, &s.Capacity) })
	field(3, func(v string) error { return parseLevel(v, &s.InUse) })
	field(4, func(v string) (err error) {
		if v == "" {
			s.RejectedUnknown = true
			return nil
		}
		s.Rejected, err = strconv.ParseUint(v, 10, 64)
		return
	})
	if len(rec) > 5 {
		field(5, dur(&s.Interval))
		if s.Interval < 0 {
			errs = append(errs, fmt.Errorf("column interval_s: %s is negative", rec[5]))
		}
	}
	if s.Interval > 0 {
		field(6, func(v string) (err error) { s.MeanInUse, err = strconv.ParseFloat(v, 64); return })
		field(7, func(v string) error { return parseLevel(v, &s.MaxInUse) })
		field(8, dur(&s.AtCapacity))
		s.FirstAtCapacity = -1
		if rec[9] != "" {
			field(9, dur(&s.FirstAtCapacity))
		}
		if len(rec) > 10 && rec[10] != "" {
			field(10, func(v string) (err error) { s.MeanCapacity, err = strconv.ParseFloat(v, 64); return })
		}
		if s.AtCapacity < 0 || s.AtCapacity > s.Interval+time.Microsecond {
			errs = append(errs, fmt.Errorf("column at_capacity_s: %s is outside [0, interval_s %s]", rec[8], rec[5]))
		}
	}
	return s, errors.Join(errs...)
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
	return decodeResults(path, bufio.NewReaderSize(f, 1<<16), fn)
}

// decodeResults decodes the results read from br with vegeta's decoder (its encoding sniffed),
// passing each to fn; path names the file in errors.
func decodeResults(path string, br *bufio.Reader, fn func(*vegeta.Result) error) error {
	dec := vegeta.DecoderFor(br)
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
