package rundir

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// DependenciesFile holds, per sampling interval and dependency, how the dependency answered as
// the harness measured it on the dependency's side (outcome.Answers).
const DependenciesFile = "dependencies.csv"

// DependencyCSVHeader is the header row of dependencies.csv: one row per metered dependency per
// sample, at the same instants as resources.csv. t_s is the sample's offset from the attack start
// and interval_s the length of the interval (t_s - interval_s, t_s] the row covers; arrived,
// answered, errors (answered with a status >= 500), abandoned (given up by the target before an
// answer), cut (closed or reset on the dependency's side before an answer) and refused
// (connections the proxy refused) count that interval, closed_s is how long in it the
// dependency refused every connection (a down fault); in_flight and oldest_s are the requests
// still waiting at t_s and the age of the oldest. p50_ms and p99_ms are read from times, the
// answer times' histogram (outcome.Histogram, "bucket:count ..."), for reading the file by eye;
// max_ms is exact. unanswered is the histogram of how long abandoned and cut requests waited;
// opaque counts connections that did not read as HTTP/1.1.
var DependencyCSVHeader = []string{"t_s", "dependency", "interval_s", "arrived", "answered", "errors",
	"abandoned", "cut", "refused", "closed_s", "in_flight", "oldest_s", "p50_ms", "p99_ms", "max_ms", "opaque",
	"times", "unanswered"}

// dependencyCSVHeaderV1 is the header of the first dependencies.csv files, before closed_s.
var dependencyCSVHeaderV1 = slices.Delete(slices.Clone(DependencyCSVHeader), 9, 10)

// DependencySample is one row of dependencies.csv.
type DependencySample struct {
	T time.Duration // offset from the attack start
	outcome.Answers
}

// Meter is the manifest's account of how one dependency's answers were timed.
type Meter struct {
	Dependency string `json:"dependency"`
	// Listen is where the target called the dependency: the meter's address, in front of Proxy,
	// the Toxiproxy proxy's.
	Listen string `json:"listen,omitempty"`
	Proxy  string `json:"proxy,omitempty"`
	// Unmetered says why the dependency was not timed ("" when it was): its rows are then
	// absent from dependencies.csv.
	Unmetered string `json:"unmetered,omitempty"`
}

// DependencyWriter streams dependency samples as CSV. It is not safe for concurrent use.
type DependencyWriter struct {
	w   *csv.Writer
	row []string
}

// NewDependencyWriter writes the header row to w and returns a writer for the samples.
func NewDependencyWriter(w io.Writer) (*DependencyWriter, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(DependencyCSVHeader); err != nil {
		return nil, err
	}
	return &DependencyWriter{w: cw, row: make([]string, len(DependencyCSVHeader))}, nil
}

// Write appends one row per dependency, all at offset t.
func (dw *DependencyWriter) Write(t time.Duration, as []outcome.Answers) error {
	ts := strconv.FormatFloat(t.Seconds(), 'f', 3, 64)
	for _, a := range as {
		ms := func(d time.Duration, ok bool) string {
			if !ok {
				return ""
			}
			return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 3, 64)
		}
		// A bucket's middle may lie above the exact longest answer: never show a quantile above it.
		p50, ok50 := a.Times.Quantile(0.5)
		p99, ok99 := a.Times.Quantile(0.99)
		p50, p99 = min(p50, a.Max), min(p99, a.Max)
		r := dw.row
		r[0], r[1], r[2] = ts, a.Dependency, seconds(a.Interval)
		r[3], r[4], r[5] = strconv.Itoa(a.Arrived), strconv.Itoa(a.Answered), strconv.Itoa(a.Errors)
		r[6], r[7], r[8] = strconv.Itoa(a.Abandoned), strconv.Itoa(a.Cut), strconv.Itoa(a.Refused)
		r[9], r[10], r[11] = seconds(a.Closed), strconv.Itoa(a.InFlight), seconds(a.Oldest)
		r[12], r[13], r[14] = ms(p50, ok50), ms(p99, ok99), ms(a.Max, a.Answered > 0)
		r[15], r[16], r[17] = strconv.Itoa(a.Opaque), a.Times.String(), a.Unanswered.String()
		if err := dw.w.Write(r); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes buffered rows to the underlying writer and reports any write error.
func (dw *DependencyWriter) Flush() error {
	dw.w.Flush()
	return dw.w.Error()
}

// ReadDependencies reads a dependencies.csv file. A folder written before the file existed has
// none: the error then satisfies errors.Is(err, fs.ErrNotExist). Errors name the file, line and
// column.
func ReadDependencies(path string) ([]DependencySample, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReader(f))
	r.ReuseRecord = true
	var out []DependencySample
	names := map[string]string{}
	v1 := false
	for line := 1; ; line++ {
		rec, err := r.Read()
		if err == io.EOF {
			if line == 1 {
				return nil, fmt.Errorf("%s: empty file, want the header %s", path, strings.Join(DependencyCSVHeader, ","))
			}
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if line == 1 {
			v1 = slices.Equal(rec, dependencyCSVHeaderV1)
			if !v1 && !slices.Equal(rec, DependencyCSVHeader) {
				return nil, fmt.Errorf("%s:1: header %q, want %q", path, strings.Join(rec, ","), strings.Join(DependencyCSVHeader, ","))
			}
			r.FieldsPerRecord = len(rec)
			continue
		}
		if v1 {
			rec = slices.Insert(rec, 9, "0") // never closed: the file predates the column
		}
		s, err := parseDependencyRow(rec)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		name, ok := names[s.Dependency]
		if !ok {
			name = strings.Clone(s.Dependency)
			names[name] = name
		}
		s.Dependency = name
		out = append(out, s)
	}
}

func parseDependencyRow(rec []string) (DependencySample, error) {
	var errs []string
	col := func(i int, err error) {
		if err != nil {
			errs = append(errs, fmt.Sprintf("column %s: %v", DependencyCSVHeader[i], err))
		}
	}
	dur := func(i int, d *time.Duration, unit time.Duration) {
		if rec[i] == "" {
			return
		}
		x, err := strconv.ParseFloat(rec[i], 64)
		if err == nil && x < 0 {
			err = fmt.Errorf("%s is negative", rec[i])
		}
		*d = time.Duration(x*float64(unit) + 0.5)
		col(i, err)
	}
	count := func(i int, n *int) {
		v, err := strconv.Atoi(rec[i])
		if err == nil && v < 0 {
			err = fmt.Errorf("%s is negative", rec[i])
		}
		*n = v
		col(i, err)
	}
	hist := func(i int, h *outcome.Histogram) {
		v, err := outcome.ParseHistogram(rec[i])
		*h = v
		col(i, err)
	}
	var s DependencySample
	s.Dependency = rec[1]
	dur(0, &s.T, time.Second)
	dur(2, &s.Interval, time.Second)
	count(3, &s.Arrived)
	count(4, &s.Answered)
	count(5, &s.Errors)
	count(6, &s.Abandoned)
	count(7, &s.Cut)
	count(8, &s.Refused)
	dur(9, &s.Closed, time.Second)
	count(10, &s.InFlight)
	dur(11, &s.Oldest, time.Second)
	dur(14, &s.Max, time.Millisecond)
	count(15, &s.Opaque)
	hist(16, &s.Times)
	hist(17, &s.Unanswered)
	if len(errs) == 0 && s.Times.Count() != uint64(s.Answered) {
		errs = append(errs, fmt.Sprintf("column times: %d answer times for %d answered", s.Times.Count(), s.Answered))
	}
	if len(errs) == 0 && s.Unanswered.Count() != uint64(s.Abandoned+s.Cut) {
		errs = append(errs, fmt.Sprintf("column unanswered: %d waits for %d abandoned and cut", s.Unanswered.Count(), s.Abandoned+s.Cut))
	}
	if len(errs) > 0 {
		return s, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return s, nil
}
