package rundir

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/mailru/easyjson/jlexer"
	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// Sent is what the report needs of one stored result: when it was sent, how long it took, and
// how it ended. Its strings may point into the reader's buffer: they are valid only during the
// callback that receives them (copy what you keep, e.g. with strings.Clone).
type Sent struct {
	Timestamp time.Time
	Latency   time.Duration
	Code      int
	Error     string
	// The first value of each kept header: the outcome contract's (outcome.KeptHeaders) and the
	// load generator's two.
	Outcome, Pool, Reason, Dependency string
	Scheduled, Class                  string
}

// Header returns the stored headers as an http.Header (allocating; for outcome.Classify).
func (s *Sent) Header() http.Header {
	h := http.Header{}
	for name, v := range map[string]string{outcome.HeaderOutcome: s.Outcome, outcome.HeaderPool: s.Pool,
		outcome.HeaderReason: s.Reason, outcome.HeaderDependency: s.Dependency,
		outcome.HeaderScheduled: s.Scheduled, outcome.HeaderClass: s.Class} {
		if v != "" {
			h.Set(name, v)
		}
	}
	return h
}

// field returns where header name's value goes in s, or nil for a header Sent does not keep.
func (s *Sent) field(name string) *string {
	switch name {
	case outcome.HeaderOutcome:
		return &s.Outcome
	case outcome.HeaderPool:
		return &s.Pool
	case outcome.HeaderReason:
		return &s.Reason
	case outcome.HeaderDependency:
		return &s.Dependency
	case outcome.HeaderScheduled:
		return &s.Scheduled
	case outcome.HeaderClass:
		return &s.Class
	}
	return nil
}

// set fills s's kept headers from h.
func (s *Sent) set(h http.Header) {
	for name, vals := range h {
		if f := s.field(http.CanonicalHeaderKey(name)); f != nil && len(vals) > 0 {
			*f = vals[0]
		}
	}
}

// ScanRaw streams the results of one raw file to fn, in file order, reading only the fields Sent
// keeps. JSON-lines files (what the load generator writes) are read with a decoder that skips
// bodies, URLs and unknown headers; any other vegeta encoding (gob, CSV) goes through vegeta's
// own decoder. It blocks until the file is read or fn returns an error, which it returns. An
// empty file has no results.
func ScanRaw(path string, fn func(*Sent) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	first, err := br.Peek(1)
	if err == io.EOF {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if first[0] != '{' {
		return readRawDecoder(path, br, fn)
	}
	var s Sent
	for n := 0; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull { // a line longer than the buffer: gather it
			long := append([]byte(nil), line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if len(bytes.TrimSpace(line)) > 0 {
			if derr := decodeSent(line, &s); derr != nil {
				return fmt.Errorf("%s: result %d: %w", path, n, derr)
			}
			if berr := s.check(); berr != nil {
				return fmt.Errorf("%w: %s: result %d: %w", ErrIntegrity, path, n, berr)
			}
			if ferr := fn(&s); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: result %d: %w", path, n, err)
		}
	}
}

// decodeSent decodes one JSON line into s; its strings point into line.
func decodeSent(line []byte, s *Sent) error {
	in := jlexer.Lexer{Data: line}
	*s = Sent{}
	in.Delim('{')
	for !in.IsDelim('}') {
		key := in.UnsafeFieldName(false)
		in.WantColon()
		switch key {
		case "timestamp":
			s.Timestamp = parseTime(in.UnsafeBytes(), &in)
		case "latency":
			s.Latency = time.Duration(in.Int64())
		case "code":
			s.Code = int(in.Uint16())
		case "error":
			s.Error = in.UnsafeString()
		case "headers":
			decodeHeaders(&in, s)
		default:
			in.SkipRecursive()
		}
		in.WantComma()
	}
	in.Delim('}')
	return in.Error()
}

func decodeHeaders(in *jlexer.Lexer, s *Sent) {
	if in.IsNull() {
		in.Skip()
		return
	}
	in.Delim('{')
	for !in.IsDelim('}') {
		f := s.field(in.UnsafeFieldName(false))
		in.WantColon()
		if f == nil || in.IsNull() {
			in.SkipRecursive()
			in.WantComma()
			continue
		}
		in.Delim('[')
		for first := true; !in.IsDelim(']'); first = false {
			v := in.UnsafeString()
			if first {
				*f = v
			}
			in.WantComma()
		}
		in.Delim(']')
		in.WantComma()
	}
	in.Delim('}')
}

// parseTime reads an RFC 3339 timestamp, fast for the "2006-01-02T15:04:05.999999999Z" form the
// load generator writes, through time.Parse otherwise.
func parseTime(b []byte, in *jlexer.Lexer) time.Time {
	if t, ok := parseUTC(b); ok {
		return t
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		in.AddError(fmt.Errorf("timestamp %q: %w", b, err))
	}
	return t
}

// parseUTC parses "YYYY-MM-DDTHH:MM:SS[.fraction]Z".
func parseUTC(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return time.Time{}, false
	}
	num := func(s []byte) (int, bool) {
		n := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, ok1 := num(b[0:4])
	mo, ok2 := num(b[5:7])
	d, ok3 := num(b[8:10])
	h, ok4 := num(b[11:13])
	mi, ok5 := num(b[14:16])
	s, ok6 := num(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59 {
		return time.Time{}, false
	}
	ns := 0
	if rest := b[19 : len(b)-1]; len(rest) > 0 {
		if rest[0] != '.' || len(rest) < 2 || len(rest) > 10 {
			return time.Time{}, false
		}
		frac, ok := num(rest[1:])
		if !ok {
			return time.Time{}, false
		}
		for range 10 - len(rest) {
			frac *= 10
		}
		ns = frac
	}
	return time.Date(y, time.Month(mo), d, h, mi, s, ns, time.UTC), true
}

// readRawDecoder reads a non-JSON raw file with vegeta's decoder.
func readRawDecoder(path string, br *bufio.Reader, fn func(*Sent) error) error {
	n := 0
	return decodeResults(path, br, func(r *vegeta.Result) error {
		s := Sent{Timestamp: r.Timestamp, Latency: r.Latency, Code: int(r.Code), Error: r.Error}
		s.set(r.Headers)
		if err := s.check(); err != nil {
			return fmt.Errorf("%w: %s: result %d: %w", ErrIntegrity, path, n, err)
		}
		n++
		return fn(&s)
	})
}

// check returns an error for a result no measurement can give: a negative latency, a status
// code outside 0-999 (0 is a transport error), no send time.
func (s *Sent) check() error {
	switch {
	case s.Latency < 0:
		return fmt.Errorf("latency %s is negative", s.Latency)
	case s.Code < 0 || s.Code > 999:
		return fmt.Errorf("status code %d is not one", s.Code)
	case s.Timestamp.IsZero():
		return errors.New("no send time")
	}
	return nil
}
