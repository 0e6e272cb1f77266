package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/loadgen"
)

// Load reads, decodes, completes and validates the scenario file at path. It blocks on reading
// the file only: it opens without waiting for a writer, and refuses anything but a regular file
// (a FIFO, a device such as /dev/zero, a socket) and files over MaxFileSize, with an error
// matching ErrInvalid. Decoding is strict: every problem (syntax, unknown or duplicate fields, wrong
// types, missing required fields, bad values, inconsistent pools) is reported, each as a
// *FieldError naming file, line and field path, joined one per line and matching ErrInvalid.
// On success the returned scenario has its defaults filled, its relative amounts and pool
// shorthands resolved (recorded in Resolved), and Path and Raw set. On failure it returns a nil
// scenario.
func Load(path string) (*Scenario, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// readFile reads at most MaxFileSize bytes of the regular file at path. It opens with
// O_NONBLOCK where the system has it, so that a FIFO is refused rather than waited on.
func readFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, &FieldError{File: path, Msg: fmt.Sprintf("not a regular file (%s); a scenario is a YAML file", fileKind(info.Mode()))}
	}
	if info.Size() > MaxFileSize {
		return nil, tooLarge(path, info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("load scenario: %w", err)
	}
	if len(data) > MaxFileSize { // grew while we read
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

func tooLarge(file string, n int64) error {
	return &FieldError{File: file, Msg: fmt.Sprintf("%d bytes or more, more than the %d (%d MiB) a scenario file may hold", n, MaxFileSize, MaxFileSize>>20)}
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return m.Type().String()
}

// Parse is Load on bytes already read; name is used as the file name in errors and as Path.
// It refuses more than MaxFileSize bytes.
func Parse(name string, data []byte) (*Scenario, error) {
	if len(data) > MaxFileSize {
		return nil, tooLarge(name, int64(len(data)))
	}
	d := &decoder{
		problems: problems{file: name, lines: map[string]int{}},
		resolved: map[string]string{},
	}
	s := &Scenario{Path: name, Raw: bytes.Clone(data), lines: d.lines}

	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.addAt(0, "", "empty file")
		} else {
			d.addAt(yamlErrLine(err), "", "%s", yamlErrMsg(err))
		}
		return nil, d.err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		d.addAt(extra.Line, "", "more than one YAML document; a scenario file holds one")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if !d.expand(root) { // `count` families and `for_each` templates, see expand.go
		return nil, d.err() // recursive or too large: walking it is the danger
	}
	if !d.decodeStruct(root, "", reflect.ValueOf(s).Elem(), false) {
		return nil, d.err() // not a mapping at all: nothing else is worth saying
	}
	d.resolveRelatives()
	s.Resolved = d.resolved
	s.complete(&d.problems, d.defaultPools)
	s.deriveTests(&d.problems)

	v := s.validate()
	decoded := d.fields() // what decoding found: Validate does not repeat it
	for _, e := range v.list {
		if !decoded.covers(e.Field) {
			d.list = append(d.list, e)
		}
	}
	if err := d.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// yamlErrLine pulls the line number out of a yaml.v3 syntax error ("yaml: line 3: ...").
func yamlErrLine(err error) int {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, "line "); ok {
		if n, _, ok := strings.Cut(rest, ":"); ok {
			if l, err := strconv.Atoi(n); err == nil {
				return l
			}
		}
	}
	return 0
}

// yamlErrMsg strips yaml.v3's "yaml: line N: " prefix, since FieldError prints the line itself.
func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(msg, "line ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
	}
	return "yaml syntax: " + msg
}

// decoder walks YAML nodes into a Scenario, collecting problems instead of stopping at the first.
type decoder struct {
	problems
	resolved map[string]string
	// pending are durations written relative to the timeout, resolved once the timeout is known.
	pending []pendingRelative
	// timeout is the client timeout as decoded; timeoutOK is false when absent or unreadable.
	timeout   time.Duration
	timeoutOK bool
	// defaultPools lists the configurations that wrote `pools: default`, by index.
	defaultPools map[int]string
	// nodes counts the YAML nodes of the document with aliases followed and templates expanded
	// (see measureNodes), bounded by MaxNodes.
	nodes int
}

type pendingRelative struct {
	path string
	rel  relative
	dst  *time.Duration
}

// field is one key of a YAML mapping and how to decode its value.
type field struct {
	name     string
	required bool
	decode   func(n *yaml.Node, path string)
	// hidden leaves the key out of the "known:" list of an unknown-field error (a fault key of
	// another fault type, which decode reports itself).
	hidden bool
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// deref follows aliases (anchors are allowed: `faults: *slowA`).
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}

// mapping decodes a YAML mapping whose keys must be among fields; it reports unknown, duplicate
// and missing required keys. It records the line of the mapping at path and of each key at
// path.key.
func (d *decoder) mapping(n *yaml.Node, path string, fields []field) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		if n == nil {
			d.add(path, "expected a mapping")
		} else {
			d.addAt(n.Line, path, "expected a mapping, got %s", describe(n))
		}
		return false
	}
	if _, ok := d.lines[path]; !ok {
		d.lines[path] = n.Line
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.addAt(k.Line, path, "a key must be a plain name, got %s", describe(k))
			continue
		}
		fp := join(path, k.Value)
		var f *field
		for j := range fields {
			if fields[j].name == k.Value {
				f = &fields[j]
			}
		}
		if f == nil && path == "" && strings.HasPrefix(k.Value, "x-") {
			continue // extension key: a place for YAML anchors, ignored (as in compose files)
		}
		if f == nil {
			d.addAt(k.Line, fp, "unknown field %q (known: %s)", k.Value, fieldNames(fields))
			continue
		}
		if seen[k.Value] {
			d.addAt(k.Line, fp, "duplicate field %q", k.Value)
			continue
		}
		seen[k.Value] = true
		d.lines[fp] = k.Line
		if f.required && isNull(deref(v)) {
			d.addAt(k.Line, fp, "missing value (required)")
			continue
		}
		f.decode(v, fp)
	}
	for _, f := range fields {
		if f.required && !seen[f.name] {
			line := lineOf(d.lines, path) // the key that holds this mapping, if any
			if line == 0 {
				line = n.Line
			}
			d.addAt(line, join(path, f.name), "missing required field %q", f.name)
		}
	}
	return true
}

func fieldNames(fields []field) string {
	var names []string
	for _, f := range fields {
		if !f.hidden {
			names = append(names, f.name)
		}
	}
	return strings.Join(names, ", ")
}

// sequence decodes a YAML list, calling item for each element with its path. A null value is an
// empty list.
func (d *decoder) sequence(n *yaml.Node, path string, item func(i int, n *yaml.Node, path string)) int {
	n = deref(n)
	if isNull(n) {
		return 0
	}
	if n.Kind != yaml.SequenceNode {
		d.addAt(n.Line, path, "expected a list, got %s", describe(n))
		return 0
	}
	d.lines[path] = n.Line
	for i, c := range n.Content {
		p := index(path, i)
		d.lines[p] = deref(c).Line
		item(i, c, p)
	}
	return len(n.Content)
}

// scalar returns the text of a scalar value, reporting anything else.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.addAt(n.Line, path, "expected %s, got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *decoder) str(dst *string) func(*yaml.Node, string) { return strOf(d, dst) }

// strOf decodes a string into any string type (service.PoolKind, service.Deadline).
func strOf[T ~string](d *decoder, dst *T) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := d.scalar(n, path, "a string"); ok {
			*dst = T(v)
		}
	}
}

func (d *decoder) integer(n *yaml.Node, path string, bits int) (int64, bool) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		d.addAt(n.Line, path, "expected an integer, got %s", describe(n))
		return 0, false
	}
	v, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
	if err != nil {
		d.addAt(n.Line, path, "expected an integer that fits %d bits, got %s", bits, describe(n))
		return 0, false
	}
	return v, true
}

func (d *decoder) intField(dst *int) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := d.integer(n, path, 32); ok {
			*dst = int(v)
		}
	}
}

func (d *decoder) int64Field(dst *int64) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		if v, ok := d.integer(n, path, 64); ok {
			*dst = v
		}
	}
}

func (d *decoder) floatField(dst *float64) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		n = deref(n)
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			d.addAt(n.Line, path, "expected a number, got %s", describe(n))
			return
		}
		v, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			d.addAt(n.Line, path, "expected a finite number, got %s", describe(n))
			return
		}
		*dst = v
	}
}

// duration decodes "250ms" (or 0); when relativeOK it also takes "0.9x timeout" / "0.9x",
// resolved after the whole file is read.
func (d *decoder) duration(dst *time.Duration, relativeOK bool) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		n = deref(n)
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.addAt(n.Line, path, "expected a duration like \"250ms\", got %s", describe(n))
			return
		}
		if n.Tag == "!!int" || n.Tag == "!!float" {
			if v, err := strconv.ParseFloat(n.Value, 64); err == nil && v == 0 {
				*dst = 0
				return
			}
			d.addAt(n.Line, path, "expected a duration with a unit like \"250ms\", got %s", describe(n))
			return
		}
		if rel, ok, err := parseRelative(n.Value); ok {
			switch {
			case !relativeOK:
				d.addAt(n.Line, path, "cannot be written relative to the timeout (%q); write a duration like \"500ms\"", n.Value)
			case err != nil:
				d.addAt(n.Line, path, "%v", err)
			default:
				d.pending = append(d.pending, pendingRelative{path: path, rel: rel, dst: dst})
			}
			return
		}
		v, err := time.ParseDuration(strings.TrimSpace(n.Value))
		if err != nil {
			d.addAt(n.Line, path, "expected a duration like \"250ms\" or \"0.9x timeout\", got %s", describe(n))
			return
		}
		*dst = v
	}
}

// rate decodes "50/s", "3000/1m" or a number per second.
func (d *decoder) rate(dst *float64) func(*yaml.Node, string) {
	return func(n *yaml.Node, path string) {
		n = deref(n)
		if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
			d.addAt(n.Line, path, "expected a rate like \"50/s\", got %s", describe(n))
			return
		}
		v, err := loadgen.ParseRate(n.Value)
		if err != nil {
			d.addAt(n.Line, path, "%s", strings.TrimSuffix(err.Error(), ": "+loadgen.ErrInvalid.Error()))
			return
		}
		*dst = v
	}
}

// resolveRelatives turns every "0.9x timeout" into a duration, now that the timeout is known.
func (d *decoder) resolveRelatives() {
	for _, p := range d.pending {
		if !d.timeoutOK || d.timeout <= 0 {
			d.add(p.path, "cannot resolve %q: timeout is missing or invalid", p.rel.text)
			continue
		}
		if p.rel.factor*float64(d.timeout) >= math.MaxInt64 {
			d.add(p.path, "%q resolves to more than %v", p.rel.text, time.Duration(math.MaxInt64))
			continue
		}
		v := p.rel.resolve(d.timeout)
		if v <= 0 {
			d.add(p.path, "%q resolves to %v; must be > 0", p.rel.text, v)
			continue
		}
		*p.dst = v
		d.resolved[p.path] = fmt.Sprintf("%s = %v (timeout %v)", p.rel.text, v, d.timeout)
	}
}

// fault decodes one fault: the keys every fault has, then the keys its type declares, asked of
// the faults registry (a new fault type needs no change here). A key that only other types take is
// reported as such; an unknown type is reported by Validate.
func (d *decoder) fault(n *yaml.Node, path string, f *faults.Fault) {
	fields := []field{
		{name: "dependency", required: true, decode: d.str(&f.Dependency)},
		{name: "type", required: true, decode: d.str(&f.Type)},
		{name: "toxicity", decode: func(n *yaml.Node, path string) {
			before := len(d.list)
			d.floatField(&f.Toxicity)(n, path)
			if len(d.list) == before && f.Toxicity == 0 {
				// Written explicitly: 0 would silently mean every connection, so say so.
				d.add(path, "must be more than 0 and at most 1 (omit it for every connection), got 0")
			}
		}},
		{name: "direction", decode: func(n *yaml.Node, path string) {
			var s string
			d.str(&s)(n, path)
			f.Direction = faults.Direction(s)
		}},
	}
	typ := mappingValue(n, "type")
	p, known := faults.NewParams(typ)
	if known {
		f.Params = p
		for _, pf := range faults.Fields(p) {
			fields = append(fields, field{name: pf.Key, decode: d.param(pf.Ptr)})
		}
	}
	for _, other := range faults.Types() {
		op, _ := faults.NewParams(other)
		for _, pf := range faults.Fields(op) {
			if slices.ContainsFunc(fields, func(x field) bool { return x.name == pf.Key }) {
				continue
			}
			key := pf.Key
			fields = append(fields, field{name: key, hidden: true, decode: func(n *yaml.Node, path string) {
				if !known {
					return // with an unknown type, its error is enough
				}
				if takers := faults.TypesTaking(key); len(takers) == 1 {
					d.add(path, "only a %s fault takes %s (type is %s)", takers[0], key, typ)
				} else {
					d.add(path, "only %s faults take %s (type is %s)", strings.Join(takers, " and "), key, typ)
				}
			}})
		}
	}
	d.mapping(n, path, fields)
}

// param decodes one parameter of a fault or a pool kind by its Go type (faults.Fields and
// service.PoolParamFields list the types there are). Durations may be written relative to the
// timeout.
func (d *decoder) param(ptr any) func(*yaml.Node, string) {
	switch p := ptr.(type) {
	case *time.Duration:
		return d.duration(p, true)
	case *int:
		return d.intField(p)
	case *int64:
		return d.int64Field(p)
	case *float64:
		return d.floatField(p)
	case *string:
		return d.str(p)
	}
	panic(fmt.Sprintf("scenarios: parameter of type %T", ptr)) // faults.Register and service.RegisterPoolKind refuse these
}

// mappingValue returns the scalar value of key in the mapping n, or "" when n is not a mapping or
// key is absent or not a scalar.
func mappingValue(n *yaml.Node, key string) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := deref(n.Content[i]), deref(n.Content[i+1]); k.Kind == yaml.ScalarNode && k.Value == key && v != nil && v.Kind == yaml.ScalarNode {
			return v.Value
		}
	}
	return ""
}
