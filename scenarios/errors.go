package scenarios

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// ErrInvalid is matched (errors.Is) by every error Load, Parse and Validate return for a scenario
// that cannot run: syntax, unknown fields, wrong types, missing fields, bad values. The error
// itself lists every problem found, one *FieldError per line.
var ErrInvalid = errors.New("invalid scenario")

// ErrNotFound is returned by Open when the argument is neither an existing file nor the name of a
// built-in scenario.
var ErrNotFound = errors.New("scenario not found")

// ErrNoURL is returned by ServiceConfig when a dependency has no URL in the map it was given.
var ErrNoURL = errors.New("no url for dependency")

// FieldError is one problem in a scenario, located by file, line and field path
// ("phases[2].faults[0].dependency"). Line is 0 when unknown (a scenario built or changed in Go
// rather than loaded), File is "" when the scenario was not loaded from anywhere.
// It matches ErrInvalid with errors.Is.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats the problem as "file:line: field: message", dropping the parts that are unknown.
func (e *FieldError) Error() string {
	var s string
	switch {
	case e.File != "" && e.Line > 0:
		s = fmt.Sprintf("%s:%d: ", e.File, e.Line)
	case e.File != "":
		s = e.File + ": "
	case e.Line > 0:
		s = fmt.Sprintf("line %d: ", e.Line)
	}
	if e.Field != "" {
		s += e.Field + ": "
	}
	return s + e.Msg
}

// Unwrap makes every FieldError match ErrInvalid.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// problems collects FieldErrors so that a load reports all of them, not only the first.
type problems struct {
	file  string
	lines map[string]int // field path -> line, from the YAML nodes; may be nil
	list  []*FieldError
}

// add records a problem at a field path, taking the line from the nearest recorded ancestor.
func (p *problems) add(field, format string, args ...any) {
	p.list = append(p.list, &FieldError{File: p.file, Line: lineOf(p.lines, field), Field: field, Msg: fmt.Sprintf(format, args...)})
}

// addAt records a problem at an explicit line.
func (p *problems) addAt(line int, field, format string, args ...any) {
	p.list = append(p.list, &FieldError{File: p.file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// fieldSet answers, in time proportional to a path's depth, whether a problem was recorded at a
// field or at one of its ancestors or descendants, so that a missing or mistyped field is not
// reported a second time by Validate.
type fieldSet struct {
	at     map[string]bool // fields with a problem
	parent map[string]bool // proper ancestors of those fields
}

// fields returns the fields p has problems at.
func (p *problems) fields() fieldSet {
	fs := fieldSet{at: map[string]bool{}, parent: map[string]bool{}}
	for _, e := range p.list {
		fs.at[e.Field] = true
		for f := parentPath(e.Field); f != ""; f = parentPath(f) {
			fs.parent[f] = true
		}
	}
	return fs
}

// covers reports whether field, one of its ancestors or one of its descendants has a problem.
func (fs fieldSet) covers(field string) bool {
	if fs.at[field] || fs.parent[field] {
		return true
	}
	for f := parentPath(field); f != ""; f = parentPath(f) {
		if fs.at[f] {
			return true
		}
	}
	return false
}

// MaxProblems bounds the problems one error lists; the rest are counted on a last line.
const MaxProblems = 200

// err returns nil or every problem joined, one per line, in line order (positionless ones
// last), at most MaxProblems of them and then a line counting the others.
func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	list := slices.Clone(p.list)
	slices.SortStableFunc(list, func(a, b *FieldError) int {
		la, lb := a.Line, b.Line
		if la == 0 {
			la = int(^uint(0) >> 1)
		}
		if lb == 0 {
			lb = int(^uint(0) >> 1)
		}
		return cmp.Compare(la, lb)
	})
	more := len(list) - MaxProblems
	if more > 0 {
		list = append(list[:MaxProblems], &FieldError{File: p.file, Msg: fmt.Sprintf("... and %d more problems", more)})
	}
	errs := make([]error, len(list))
	for i, e := range list {
		errs[i] = e
	}
	return errors.Join(errs...)
}

// lineOf returns the line recorded for field or for its nearest recorded ancestor, or 0.
func lineOf(lines map[string]int, field string) int {
	for f := field; f != ""; f = parentPath(f) {
		if l, ok := lines[f]; ok {
			return l
		}
	}
	return 0
}

// parentPath drops the last segment of a field path: "a[1].b" -> "a[1]" -> "a" -> "".
func parentPath(f string) string {
	for i := len(f) - 1; i >= 0; i-- {
		switch f[i] {
		case '.':
			return f[:i]
		case '[':
			return f[:i]
		}
	}
	return ""
}
