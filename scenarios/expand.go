package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Many dependencies in a few lines. A hub with 500 partners is written as one family of
// dependencies and one template per endpoint and pool:
//
//	dependencies:
//	  - {name: partner, count: 500, latency: 5ms}     # partner-001 .. partner-500
//	endpoints:
//	  - {path: "/p/{dep}", calls: ["{dep}"], for_each: partner}
//	configurations:
//	  - name: semaphores
//	    pools:
//	      - {name: "{dep}", kind: semaphore, size: 20, dependencies: ["{dep}"], for_each: partner}
//
// A dependency with `count: N` stands for N dependencies named <name>-<i>, i = 1..N zero-padded
// to the width of N (count 500: partner-001 .. partner-500; count 20: partner-01 .. partner-20),
// each with the template's other fields. An endpoint or pool with `for_each: <family>` stands for
// one copy per member of the family, in order, with every "{dep}" in its values replaced by the
// member's name (quote it: an unquoted {dep} is a YAML mapping). Faults name members directly (`dependency: partner-001`).
//
// Expansion rewrites the YAML nodes before they are decoded, so everything after it (strict
// decoding, defaults, validation) sees an ordinary scenario; a copy keeps the line of its
// template, so a problem in a copy points at the template's line, with the copy's index in the
// field path ("endpoints[41].path"). Each expansion is recorded in Scenario.Resolved.

// Expansion keys and placeholder.
const (
	keyCount    = "count"
	keyForEach  = "for_each"
	placeholder = "{dep}"
	// maxCount bounds count, so that a typo cannot ask for a billion proxies.
	maxCount = 10000
)

// expand rewrites the families and for_each templates under root in place. Problems go to d;
// a bad template is dropped from the list (so it is not reported a second time as unknown keys).
func (d *decoder) expand(root *yaml.Node) {
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return
	}
	families := map[string][]string{}
	if deps := mapValue(root, "dependencies"); deps != nil {
		d.expandFamilies(deps, families)
	}
	if eps := mapValue(root, "endpoints"); eps != nil {
		d.expandForEach(eps, "endpoints", families)
	}
	if cfgs := deref(mapValue(root, "configurations")); cfgs != nil && cfgs.Kind == yaml.SequenceNode {
		for i, c := range cfgs.Content {
			if pools := mapValue(deref(c), "pools"); pools != nil {
				d.expandForEach(pools, join(index("configurations", i), "pools"), families)
			}
		}
	}
}

// mapValue returns the value of key in mapping n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// takeKey removes key from mapping n and returns its value (nil when absent).
func takeKey(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := deref(n.Content[i]); k.Kind == yaml.ScalarNode && k.Value == key {
			v := n.Content[i+1]
			n.Content = append(n.Content[:i:i], n.Content[i+2:]...)
			return v
		}
	}
	return nil
}

// expandFamilies replaces every dependency with a count by its members.
func (d *decoder) expandFamilies(list *yaml.Node, families map[string][]string) {
	list = deref(list)
	if list.Kind != yaml.SequenceNode {
		return // decoding reports it
	}
	var out []*yaml.Node
	for i, item := range list.Content {
		path := index("dependencies", i)
		m := deref(item)
		if m.Kind != yaml.MappingNode || mapValue(m, keyCount) == nil {
			out = append(out, item)
			continue
		}
		m = clone(m)
		cn := deref(takeKey(m, keyCount))
		count, err := strconv.Atoi(strings.ReplaceAll(cn.Value, "_", ""))
		if cn.Kind != yaml.ScalarNode || cn.Tag != "!!int" || err != nil || count < 1 || count > maxCount {
			d.addAt(cn.Line, join(path, keyCount), "expected a whole number of dependencies from 1 to %d, got %s", maxCount, describe(cn))
			continue
		}
		nn := deref(mapValue(m, "name"))
		if nn == nil || nn.Kind != yaml.ScalarNode || nn.Value == "" {
			out = append(out, m) // decoding reports the missing name
			continue
		}
		family := nn.Value
		if _, dup := families[family]; dup {
			d.addAt(nn.Line, join(path, "name"), "duplicate dependency family %q", family)
			continue
		}
		width := len(strconv.Itoa(count))
		names := make([]string, count)
		for k := range count {
			names[k] = fmt.Sprintf("%s-%0*d", family, width, k+1)
			c := clone(m)
			deref(mapValue(c, "name")).Value = names[k]
			out = append(out, c)
		}
		families[family] = names
		d.resolved[path] = fmt.Sprintf("count %d = %s .. %s", count, names[0], names[count-1])
	}
	list.Content = out
}

// expandForEach replaces every item with for_each by one copy per member of its family, with
// {dep} substituted.
func (d *decoder) expandForEach(list *yaml.Node, listPath string, families map[string][]string) {
	list = deref(list)
	if list.Kind != yaml.SequenceNode {
		return // decoding reports it (or it is the `pools: default` shorthand)
	}
	var out []*yaml.Node
	for i, item := range list.Content {
		path := index(listPath, i)
		m := deref(item)
		if m.Kind != yaml.MappingNode || mapValue(m, keyForEach) == nil {
			out = append(out, item)
			continue
		}
		m = clone(m)
		fn := deref(takeKey(m, keyForEach))
		if fn.Kind != yaml.ScalarNode || fn.Tag == "!!null" {
			d.addAt(fn.Line, join(path, keyForEach), "expected the name of a dependency family, got %s", describe(fn))
			continue
		}
		names, ok := families[fn.Value]
		if !ok {
			d.addAt(fn.Line, join(path, keyForEach), "unknown dependency family %q (%s)", fn.Value, familyList(families))
			continue
		}
		if !mentions(m, placeholder) {
			d.addAt(fn.Line, join(path, keyForEach), "the template never uses %s, so its %d copies would be identical", placeholder, len(names))
			continue
		}
		for _, name := range names {
			c := clone(m)
			substitute(c, placeholder, name)
			out = append(out, c)
		}
		d.resolved[path] = fmt.Sprintf("for_each %s = %d copies, %s .. %s", fn.Value, len(names), names[0], names[len(names)-1])
	}
	list.Content = out
}

func familyList(families map[string][]string) string {
	if len(families) == 0 {
		return "no dependency has a count"
	}
	var names []string
	for f := range families {
		names = append(names, f)
	}
	slices.Sort(names)
	return "families: " + strings.Join(names, ", ")
}

// clone deep-copies n, resolving aliases, so that copies can be changed independently.
func clone(n *yaml.Node) *yaml.Node {
	n = deref(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Anchor = ""
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, ch := range n.Content {
			c.Content[i] = clone(ch)
		}
	}
	return &c
}

// mentions reports whether any scalar value under n contains s.
func mentions(n *yaml.Node, s string) bool {
	if n.Kind == yaml.ScalarNode {
		return strings.Contains(n.Value, s)
	}
	for _, c := range n.Content {
		if mentions(c, s) {
			return true
		}
	}
	return false
}

// substitute replaces s by v in every scalar value under n (mapping keys included, which holds
// no placeholder in a valid file).
func substitute(n *yaml.Node, s, v string) {
	if n.Kind == yaml.ScalarNode {
		n.Value = strings.ReplaceAll(n.Value, s, v)
		return
	}
	for _, c := range n.Content {
		substitute(c, s, v)
	}
}
