package scenarios

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/scrape"
	"github.com/bulkheadlab/bulkhead/service"
	"github.com/bulkheadlab/bulkhead/target"
)

// What the Go types of a scenario cannot say for themselves (see decode.go): the rules are few,
// and each is named by the type it belongs to.

// decodeFunc decodes the node n at path into v (addressable).
type decodeFunc func(d *decoder, n *yaml.Node, path string, v reflect.Value)

// structRule adjusts the decoding of one struct type.
type structRule struct {
	// keys decode some keys their own way; v is the struct.
	keys map[string]decodeFunc
	// extra returns keys that depend on the mapping's content (a pool kind's parameters).
	extra func(d *decoder, n *yaml.Node, v reflect.Value) []field
	// after checks the struct once its mapping is decoded (what only the written form shows).
	after decodeFunc
}

var (
	// typeRules decode a type entirely their own way: keys that depend on a value, or a value
	// with two forms.
	typeRules map[reflect.Type]decodeFunc
	// structRules adjust a struct type's generic decoding.
	structRules map[reflect.Type]structRule
)

func init() {
	typeRules = map[reflect.Type]decodeFunc{
		// A fault's keys are its type's parameters, asked of the faults registry.
		reflect.TypeFor[faults.Fault](): func(d *decoder, n *yaml.Node, path string, v reflect.Value) {
			d.fault(n, path, v.Addr().Interface().(*faults.Fault))
		},
		// A test is its name, or {name: {parameter: number}}.
		reflect.TypeFor[Test](): func(d *decoder, n *yaml.Node, path string, v reflect.Value) {
			d.test(n, path, v.Addr().Interface().(*Test))
		},
		// A noise floor is "10%" of the figure or a number in the metric's unit.
		reflect.TypeFor[claim.Floor](): func(d *decoder, n *yaml.Node, path string, v reflect.Value) {
			s, ok := d.scalar(n, path, "a floor (10% or a number)")
			if !ok {
				return
			}
			f, err := claim.ParseFloor(s)
			if err != nil {
				d.addAt(deref(n).Line, path, "%v", err)
				return
			}
			v.Set(reflect.ValueOf(f))
		},
	}
	structRules = map[reflect.Type]structRule{
		reflect.TypeFor[Scenario](): {after: func(d *decoder, _ *yaml.Node, _ string, v reflect.Value) {
			// Relative amounts are resolved against the timeout once the file is read; a
			// timeout that did not decode resolves nothing.
			d.timeout = v.Interface().(Scenario).Timeout
			_, written := d.lines["timeout"]
			d.timeoutOK = written && !d.hasProblemAt("timeout")
		}},
		reflect.TypeFor[Configuration](): {
			keys:  map[string]decodeFunc{"pools": decodePools},
			after: afterConfiguration,
		},
		reflect.TypeFor[Pool](): {extra: poolKindFields},
		reflect.TypeFor[claim.Claim](): {after: func(d *decoder, n *yaml.Node, _ string, v reflect.Value) {
			if d.file != "" && n.Line > 0 {
				v.Addr().Interface().(*claim.Claim).Source = fmt.Sprintf("%s:%d", d.file, n.Line)
			}
		}},
		reflect.TypeFor[Target](): {
			keys: map[string]decodeFunc{
				"scrape": func(d *decoder, n *yaml.Node, path string, v reflect.Value) {
					t := v.Addr().Interface().(*Target)
					if d.decodedClean(n, path, v.FieldByName("Scrape")) {
						if err := scrape.Validate(join(path, "resources"), t.Scrape.Resources); err != nil {
							d.addAt(deref(n).Line, path, "%v", err)
						}
						if t.Scrape.Timeout < 0 {
							d.add(join(path, "timeout"), "must not be negative")
						}
					}
				},
				"outcomes": func(d *decoder, n *yaml.Node, path string, v reflect.Value) {
					t := v.Addr().Interface().(*Target)
					if d.decodedClean(n, path, v.FieldByName("Outcomes")) {
						if err := t.Outcomes.Validate(path); err != nil {
							d.addAt(deref(n).Line, path, "%v", err)
						}
					}
				},
			},
			extra: targetKindFields,
			after: func(d *decoder, _ *yaml.Node, path string, v reflect.Value) {
				d.checkTarget(v.Addr().Interface().(*Target), path)
			},
		},
		reflect.TypeFor[Layout](): {after: func(d *decoder, _ *yaml.Node, path string, v reflect.Value) {
			d.checkLayout(v.Addr().Interface().(*Layout), path)
		}},
		reflect.TypeFor[SweepSpec](): {after: func(d *decoder, _ *yaml.Node, path string, v reflect.Value) {
			d.checkSweepSpec(v.Addr().Interface().(*SweepSpec), path)
		}},
	}
}

// decodedClean decodes n into v generically and reports whether it added no problem.
func (d *decoder) decodedClean(n *yaml.Node, path string, v reflect.Value) bool {
	before := len(d.list)
	d.valueOf(v, fieldOpts{})(n, path)
	return len(d.list) == before
}

// hasProblemAt reports whether a problem was recorded at exactly path.
func (d *decoder) hasProblemAt(path string) bool {
	return slices.ContainsFunc(d.list, func(e *FieldError) bool { return e.Field == path })
}

// decodePools decodes a configuration's pools: a list of pools, or "default" (DefaultPools of
// the configuration's mode and size, expanded by complete once the whole file is read).
func decodePools(d *decoder, n *yaml.Node, path string, v reflect.Value) {
	n = deref(n)
	if n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		if n.Value != "default" {
			d.addAt(n.Line, path, "expected a list of pools or \"default\", got %s", describe(n))
			return
		}
		if d.defaultPools == nil {
			d.defaultPools = map[int]string{}
		}
		d.defaultPools[lastIndex(parentPath(path))] = path
		return
	}
	if n.Kind != yaml.SequenceNode && !isNull(n) {
		d.addAt(n.Line, path, "expected a list of pools or \"default\", got %s", describe(n))
		return
	}
	d.valueOf(v.FieldByName("Pools"), fieldOpts{})(n, path)
}

// afterConfiguration refuses a size beside explicit pools: size is P of `pools: default` only.
func afterConfiguration(d *decoder, _ *yaml.Node, path string, _ reflect.Value) {
	if _, ok := d.lines[join(path, "size")]; ok {
		if _, isDefault := d.defaultPools[lastIndex(path)]; !isDefault {
			d.add(join(path, "size"), "size is P for `pools: default`; with explicit pools give each pool its size")
		}
	}
}

// lastIndex returns n of a path ending in "[n]", or -1.
func lastIndex(path string) int {
	i := strings.LastIndexByte(path, '[')
	if i < 0 || !strings.HasSuffix(path, "]") {
		return -1
	}
	n, err := strconv.Atoi(path[i+1 : len(path)-1])
	if err != nil {
		return -1
	}
	return n
}

// poolKindFields returns the keys of the pool's kind's parameters, asked of the pool kinds
// registry (a new kind needs no change here), as fault does for fault types, and the keys only
// other kinds take, reported as such. An unknown kind is reported by Validate.
func poolKindFields(d *decoder, n *yaml.Node, v reflect.Value) []field {
	p := v.Addr().Interface().(*Pool)
	var fields []field
	kind := service.PoolKind(mappingValue(n, "kind"))
	params, known := service.NewPoolParams(kind)
	if known {
		pfs := service.PoolParamFields(params)
		if len(pfs) > 0 {
			p.Params = params // a kind without parameters keeps nil, its zero parameters
		}
		for _, pf := range pfs {
			fields = append(fields, field{name: pf.Key, decode: d.param(pf.Ptr)})
		}
	}
	common := structFields(v.Type())
	for _, other := range service.PoolKinds() {
		op, _ := service.NewPoolParams(other)
		for _, pf := range service.PoolParamFields(op) {
			key := pf.Key
			if slices.ContainsFunc(fields, func(x field) bool { return x.name == key }) ||
				slices.ContainsFunc(common, func(x structField) bool { return x.key == key }) {
				continue
			}
			fields = append(fields, field{name: key, hidden: true, decode: func(n *yaml.Node, path string) {
				if !known {
					return // with an unknown kind, its error is enough
				}
				var takers []string
				for _, k := range service.PoolKindsTaking(key) {
					takers = append(takers, string(k))
				}
				if kind == "" {
					kind = service.DefaultPoolKind
				}
				if len(takers) == 1 {
					d.add(path, "only a %s pool takes %s (kind is %s)", takers[0], key, kind)
				} else {
					d.add(path, "only %s pools take %s (kind is %s)", strings.Join(takers, " and "), key, kind)
				}
			}})
		}
	}
	return fields
}

// targetKindFields picks the target's kind (its kind: key, else the kind a written key selects,
// see target.Infer), sets it and the kind's parameters on the target, and returns the keys of
// those parameters, then the keys only other kinds take, reported as such.
func targetKindFields(d *decoder, n *yaml.Node, v reflect.Value) []field {
	t := v.Addr().Interface().(*Target)
	name := mappingValue(n, "kind")
	var k target.Kind
	known := false
	if name != "" {
		k, known = target.Lookup(name)
	} else {
		k, known = target.Infer(func(key string) bool { return hasKey(n, key) })
	}
	var fields []field
	if known {
		t.Kind = k.Name()
		if params := k.NewParams(); params != nil {
			t.Params = params
			fields = d.fieldsOf(n, reflect.ValueOf(params).Elem(), false)
		}
	}
	common := structFields(v.Type())
	for _, other := range target.Kinds() {
		ok, _ := target.Lookup(other)
		for _, key := range target.ParamKeys(ok.NewParams()) {
			if slices.ContainsFunc(fields, func(x field) bool { return x.name == key }) ||
				slices.ContainsFunc(common, func(x structField) bool { return x.key == key }) {
				continue
			}
			fields = append(fields, field{name: key, hidden: true, decode: func(n *yaml.Node, path string) {
				if !known {
					return // the kind's error is enough
				}
				takers := target.KindsTaking(key)
				kind := t.Kind
				if name == "" && slices.Contains(target.ParamKeys(k.NewParams()), k.Key()) {
					kind += ", inferred from " + k.Key() + ": write kind: to choose another"
				}
				if len(takers) == 1 {
					d.add(path, "only %s %s target takes %s (kind is %s)", article(takers[0]), takers[0], key, kind)
				} else {
					d.add(path, "only %s targets take %s (kind is %s)", strings.Join(takers, " and "), key, kind)
				}
			}})
		}
	}
	return fields
}

// article is "an" before a word that starts with a vowel, else "a".
func article(word string) string {
	if word != "" && strings.ContainsRune("aeiou", rune(word[0])) {
		return "an"
	}
	return "a"
}

// hasKey reports whether the mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return true
		}
	}
	return false
}

// checkTarget checks a decoded target: a kind that is known (or a key that names one), the
// kind's own checks, and http(s) URLs.
func (d *decoder) checkTarget(t *Target, path string) {
	if t.Kind == "" {
		var keys []string
		for _, name := range target.Kinds() {
			if k, _ := target.Lookup(name); k.Key() != "" {
				keys = append(keys, fmt.Sprintf("%s (%s)", k.Key(), k.Doc()))
			}
		}
		d.add(path, "needs %s, or kind: naming one of %s", strings.Join(keys, " or "), strings.Join(target.Kinds(), ", "))
		return
	}
	k, err := target.Of(&t.Config)
	if err != nil {
		d.add(join(path, "kind"), "%v", err)
		return
	}
	for _, pr := range k.Check(&t.Config) {
		d.add(join(path, pr.Field), "%s", pr.Msg)
	}
	for _, f := range []struct{ key, val string }{{"url", t.URL}, {"ready", t.Ready}, {"metrics", t.Metrics}} {
		if f.val == "" {
			continue
		}
		if u, err := url.Parse(target.Probe(f.val)); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.add(join(path, f.key), "%q is not an http(s) URL", f.val)
		}
	}
}

// checkSweepSpec reports sizes < 1, fractions outside (0, 2] and rates <= 0 with their line (the
// sweep package checks the grid again, with duplicates, when it runs). Elements that did not
// decode are reported already.
func (d *decoder) checkSweepSpec(sp *SweepSpec, path string) {
	for i, x := range sp.Sizes {
		if p := index(join(path, "sizes"), i); x < 1 && !d.hasProblemAt(p) {
			d.add(p, "a pool size must be >= 1, got %d", x)
		}
	}
	for i, f := range sp.Fractions {
		if p := index(join(path, "fractions"), i); (f <= 0 || f > 2) && !d.hasProblemAt(p) {
			d.add(p, "a fault delay fraction must be in (0, 2], got %g", f)
		}
	}
	for i, r := range sp.Rates {
		if p := index(join(path, "rates"), i); r <= 0 && !d.hasProblemAt(p) {
			d.add(p, "a rate must be > 0, got %g", r)
		}
	}
}
