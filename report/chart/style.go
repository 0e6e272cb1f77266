package chart

import (
	"hash/fnv"
	"image/color"
	"slices"
	"strings"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// The Okabe-Ito palette: distinguishable with the common forms of colour blindness. Yellow is
// left out: it is unreadable as a line on white.
var (
	black      = color.NRGBA{0x00, 0x00, 0x00, 0xff}
	orange     = color.NRGBA{0xe6, 0x9f, 0x00, 0xff}
	skyBlue    = color.NRGBA{0x56, 0xb4, 0xe9, 0xff}
	green      = color.NRGBA{0x00, 0x9e, 0x73, 0xff}
	blue       = color.NRGBA{0x00, 0x72, 0xb2, 0xff}
	vermillion = color.NRGBA{0xd5, 0x5e, 0x00, 0xff}
	purple     = color.NRGBA{0xcc, 0x79, 0xa7, 0xff}
	grey       = color.NRGBA{0x99, 0x99, 0x99, 0xff}
)

// fallback holds the colours for names without a fixed colour, picked by a hash of the name.
var fallback = []color.NRGBA{blue, vermillion, green, purple, orange, skyBlue, black, grey}

// known fixes the colour of the names the report uses, so they look the same in every chart.
var known = map[string]color.NRGBA{
	// outcomes
	"ok": green, "success": green, "successes": green, "2xx": green,
	"timeout": orange, "timeouts": orange,
	"rejected": blue, "rejection": blue, "rejections": blue,
	"upstream": vermillion, "error": vermillion, "errors": vermillion,
	"connection": grey, "conn": grey,
	"other": black,
	// endpoints
	"/a": blue, "/b": vermillion, "/c": green, "/d": purple,
	// configurations (bulkhead modes)
	"shared": purple, "split": green, "none": orange,
	// reference lines and totals
	"capacity": black, "sent": grey,
}

// ColorFor returns the colour a series called name gets in every chart, unless two different
// names in one chart would share it (then the later one takes the next free colour). Names are
// matched without case, first whole, then by their first word ("/a p99" -> "/a"), then by that
// word's part before '-' or '_' ("shared-latency" -> "shared"), then by the part after a colon
// ("pool:shared" -> "shared", "pool:A" -> "/a"); other names get a colour from a hash of their
// first word, so "conn:X" and "conn:X capacity" match.
func ColorFor(name string) color.Color {
	c, _ := lookup(name)
	return c
}

// colorKey returns the word of name that selects its colour.
func colorKey(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	if _, ok := known[n]; ok {
		return n
	}
	if f := strings.Fields(n); len(f) > 0 {
		n = f[0]
	}
	return n
}

// How directly a name matched its colour; more direct matches claim colours first.
const (
	rankDirect  = iota // the name or its first word is a known name
	rankDerived        // a part of the first word is
	rankHashed         // no known name: a colour from the hash
)

// lookup returns name's colour and how it was found.
func lookup(name string) (color.NRGBA, int) {
	k := colorKey(name)
	if c, ok := known[k]; ok {
		return c, rankDirect
	}
	if i := strings.IndexAny(k, "-_/"); i > 0 {
		if c, ok := known[k[:i]]; ok {
			return c, rankDerived
		}
	}
	// Resources are named kind:target ("pool:shared", "pool:A"): colour them as their target,
	// the configuration or the endpoint of that dependency.
	if i := strings.LastIndexByte(k, ':'); i >= 0 && i < len(k)-1 {
		t := k[i+1:]
		for _, cand := range []string{t, "/" + t} {
			if c, ok := known[cand]; ok {
				return c, rankDerived
			}
		}
	}
	h := fnv.New32a()
	h.Write([]byte(k))
	return fallback[h.Sum32()%uint32(len(fallback))], rankHashed
}

// palette assigns colours within one figure: a name always gets the same colour as its key's
// other names, and two different keys never share a colour while a free one remains. Keys claim
// colours by how directly they match (rank), then in order of appearance: "/a" keeps its blue
// even after "pool:A", and a second key whose colour is taken, such as "conn:A" after "pool:A",
// gets the next free one.
type palette struct {
	byKey  map[string]color.NRGBA
	byName map[string]color.NRGBA // the colours callers chose (Series.Color), by whole name
}

func newPalette(names []string, fixed map[string]color.NRGBA) *palette {
	p := &palette{byKey: map[string]color.NRGBA{}, byName: fixed}
	used := map[color.NRGBA]bool{}
	for _, c := range fixed {
		used[c] = true
	}
	for rank := rankDirect; rank <= rankHashed; rank++ {
		for _, n := range names {
			if _, ok := fixed[n]; ok {
				continue
			}
			k := colorKey(n)
			c, r := lookup(n)
			if _, done := p.byKey[k]; done || r != rank {
				continue
			}
			if used[c] {
				start := slices.Index(fallback, c)
				for i := range fallback {
					if f := fallback[(max(start, 0)+i)%len(fallback)]; !used[f] {
						c = f
						break
					}
				}
			}
			p.byKey[k] = c
			used[c] = true
		}
	}
	return p
}

func (p *palette) color(name string) color.NRGBA {
	if c, ok := p.byName[name]; ok {
		return c
	}
	if c, ok := p.byKey[colorKey(name)]; ok {
		return c
	}
	c, _ := lookup(name)
	return c
}

// dashesFor returns the dash pattern selected by a word after the first in name: the tail
// percentiles solid, the median dashed, p90 and the mean dotted.
func dashesFor(name string) []vg.Length {
	f := strings.Fields(strings.ToLower(name))
	for _, w := range f[min(1, len(f)):] {
		switch w {
		case "p50", "median":
			return []vg.Length{vg.Points(7), vg.Points(4)}
		case "p90", "mean", "avg":
			return []vg.Length{vg.Points(2), vg.Points(3)}
		case "p99.9", "p999":
			return []vg.Length{vg.Points(10), vg.Points(3), vg.Points(2), vg.Points(3)}
		case "max", "min":
			return []vg.Length{vg.Points(1), vg.Points(2)}
		}
	}
	return nil
}

// withAlpha returns c with alpha a (non-premultiplied, so it blends in PNG and SVG alike).
func withAlpha(c color.NRGBA, a uint8) color.NRGBA {
	c.A = a
	return c
}

// Text and line sizes, chosen to read at 1200x600 px.
var (
	sans              = font.Font{Typeface: "Liberation", Variant: "Sans"}
	titleSize         = vg.Points(17)
	panelSize         = vg.Points(14)
	labelSize         = vg.Points(13)
	tickSize          = vg.Points(11)
	legendSize        = vg.Points(12)
	windowSize        = vg.Points(11)
	lineWidth         = vg.Points(2.25)
	widthStep         = vg.Points(0.5)
	refLineWidth      = vg.Points(1.5)
	refDashes         = []vg.Length{vg.Points(9), vg.Points(5)}
	gridColor         = color.NRGBA{0xdd, 0xdd, 0xdd, 0xff}
	windowFill        = color.NRGBA{0xd5, 0x5e, 0x00, 0x24} // translucent vermillion
	windowOverlayEdge = color.NRGBA{0x33, 0x33, 0x33, 0xb0}
	labelBacking      = color.NRGBA{0xff, 0xff, 0xff, 0xc8}
	bandAlpha         = uint8(0xe6)
	bandEdgeColor     = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// Palette is the palette of the charts (Okabe-Ito, yellow left out) in a fixed order, for a
// caller that colours series by their place in a list rather than by name (Series.Color), such
// as the phases of a time line: the same phase gets the same colour in every figure.
var Palette = []color.Color{black, orange, skyBlue, vermillion, blue, green, purple, grey}
