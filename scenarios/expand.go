package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bulkheadlab/bulkhead/service"
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
//
// What a file can expand to is bounded before anything is copied: the document with its aliases
// followed (an alias inside its own anchor is refused), and every family and template, must stay
// within MaxNodes YAML nodes, and the families and templates within the service's
// MaxDependencies, MaxEndpoints and MaxPools. An 837-byte file of nested aliases could otherwise
// ask for gigabytes.

// Expansion keys and placeholder.
const (
	keyCount    = "count"
	keyForEach  = "for_each"
	placeholder = "{dep}"
	// maxCount bounds count, so that a typo cannot ask for a billion proxies.
	maxCount = service.MaxDependencies
)

// expand rewrites the families and for_each templates under root in place. Problems go to d;
// a bad template is dropped from the list (so it is not reported a second time as unknown keys).
// It returns false, having expanded nothing, when the document is too large or recursive to be
// decoded at all (see measure).
func (d *decoder) expand(root *yaml.Node) bool {
	if !d.measureNodes(root) {
		return false
	}
	root = deref(root)
	if root == nil || root.Kind != yaml.MappingNode {
		return true
	}
	families := map[string][]string{}
	if deps := mapValue(root, "dependencies"); deps != nil {
		d.expandFamilies(deps, families)
	}
	if eps := mapValue(root, "endpoints"); eps != nil {
		d.expandForEach(eps, "endpoints", families, service.MaxEndpoints, "endpoints")
	}
	if cfgs := deref(mapValue(root, "configurations")); cfgs != nil && cfgs.Kind == yaml.SequenceNode {
		for i, c := range cfgs.Content {
			if pools := mapValue(deref(c), "pools"); pools != nil {
				d.expandForEach(pools, join(index("configurations", i), "pools"), families, service.MaxPools, "pools")
			}
		}
	}
	return true
}

// measureNodes counts the nodes of the document as the decoder will walk it, every alias followed,
// into d.nodes. It reports an alias that occurs inside its own anchor (which no walk could
// finish) and a document of more than MaxNodes nodes, and returns false for either. Each node is
// counted once however often it is referred to, so a file of nested aliases is measured in time
// proportional to its size, not to what it expands to.
func (d *decoder) measureNodes(root *yaml.Node) bool {
	size := map[*yaml.Node]int{}
	open := map[*yaml.Node]bool{} // on the current walk: an alias to one of these is recursive
	var walk func(n *yaml.Node) (int, bool)
	walk = func(n *yaml.Node) (int, bool) {
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if open[n.Alias] {
				d.addAt(n.Line, "", "recursive alias *%s: it occurs inside its own anchor &%s (line %d), so it has no end", n.Value, n.Alias.Anchor, n.Alias.Line)
				return 0, false
			}
			return walk(n.Alias)
		}
		if k, ok := size[n]; ok {
			return k, true
		}
		open[n] = true
		total := 1
		for _, c := range n.Content {
			k, ok := walk(c)
			if !ok {
				return 0, false
			}
			total = min(total+k, MaxNodes+1) // saturate: the exact excess does not matter
		}
		delete(open, n)
		size[n] = total
		return total, true
	}
	n, ok := walk(root)
	if !ok {
		return false
	}
	if n > MaxNodes {
		d.addAt(0, "", "the file expands to more than %d YAML nodes with its aliases followed (the limit is %d)", MaxNodes, MaxNodes)
		return false
	}
	d.nodes = n
	return true
}

// grow accounts for copies nodes more nodes (a family or template of size nodes copied copies
// times, replacing the template), and reports at line and path when that takes the document over
// MaxNodes.
func (d *decoder) grow(line int, path string, copies, nodes int) bool {
	if copies > 0 && nodes > (MaxNodes-d.nodes)/copies {
		d.addAt(line, path, "%d copies of %d YAML nodes would take the file over the %d nodes allowed", copies, nodes, MaxNodes)
		return false
	}
	d.nodes += copies * nodes
	return true
}

// countNodes is the number of nodes of a tree without aliases (a clone).
func countNodes(n *yaml.Node) int {
	total := 1
	for _, c := range n.Content {
		total += countNodes(c)
	}
	return total
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
		if total := len(out) + count; total > service.MaxDependencies {
			d.addAt(cn.Line, join(path, keyCount), "count %d brings the dependencies to %d, more than the %d allowed", count, total, service.MaxDependencies)
			continue
		}
		if !d.grow(cn.Line, join(path, keyCount), count, countNodes(m)) {
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
// {dep} substituted. The list may hold at most limit items once expanded.
func (d *decoder) expandForEach(list *yaml.Node, listPath string, families map[string][]string, limit int, what string) {
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
		if total := len(out) + len(names); total > limit {
			d.addAt(fn.Line, join(path, keyForEach), "for_each %s brings the %s to %d, more than the %d allowed", fn.Value, what, total, limit)
			continue
		}
		if !d.grow(fn.Line, join(path, keyForEach), len(names), countNodes(m)) {
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
