package chart

import (
	"bytes"
	"image/color"
	"math"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot"
)

func labels(ticks []plot.Tick) []string {
	var out []string
	for _, t := range ticks {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

func TestLogTicksLabelPlainDecades(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		want   []string
	}{
		{"latencies from 1 ms to 2 s", 1, 2000, []string{"1", "10", "100", "1000"}},
		{"sub-millisecond floor", 0.1, 600, []string{"0.1", "1", "10", "100"}},
		{"two decades also label 2 and 5", 10, 1000, []string{"10", "20", "50", "100", "200", "500", "1000"}},
		{"under one decade labels every multiple", 10, 45, []string{"10", "20", "30", "40"}},
		{"invalid range has no ticks", 0, 10, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(logTicks{}.Ticks(tt.lo, tt.hi)); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLinearTicksAreRound(t *testing.T) {
	tests := []struct {
		name   string
		lo, hi float64
		n      int
		want   []string
	}{
		{"a 60 s run", 0, 59, 10, []string{"0", "10", "20", "30", "40", "50"}},
		{"requests per second", 0, 112, 7, []string{"0", "20", "40", "60", "80", "100"}},
		{"fractions without float noise", 0, 0.95, 7, []string{"0", "0.2", "0.4", "0.6", "0.8"}},
		{"a run not starting at zero", 2.5, 3.5, 10, []string{"2.5", "2.6", "2.7", "2.8", "2.9", "3", "3.1", "3.2", "3.3", "3.4", "3.5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := labels(linearTicks{labels: tt.n}.Ticks(tt.lo, tt.hi)); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNinesAxis(t *testing.T) {
	for _, tt := range []struct {
		p, want float64
	}{{0, 0}, {90, 1}, {99, 2}, {99.9, 3}, {99.99, 4}} {
		if got := nines(tt.p); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("nines(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	got := labels(ninesTicks{}.Ticks(0, 4))
	if want := []string{"0", "50", "90", "99", "99.9", "99.99"}; !slices.Equal(got, want) {
		t.Errorf("ticks up to p99.99: got %q, want %q", got, want)
	}
}

func TestRanges(t *testing.T) {
	prep := func(t *testing.T, s Spec, kind Kind) prepared {
		t.Helper()
		pr, err := prepare(s, kind)
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	line := func(ys ...float64) Series {
		x := make([]float64, len(ys))
		for i := range x {
			x[i] = float64(i)
		}
		return Series{Name: "/a", X: x, Y: ys}
	}
	tests := []struct {
		name       string
		specs      []Spec
		kind       Kind
		ymin, ymax float64 // want; ymax is checked as a lower bound (headroom is added)
		logY       bool
	}{
		{"log floor is the decade below the smallest positive value", []Spec{{LogY: true, Series: []Series{line(0, 3, 450)}}}, KindLines, 1, 450, true},
		{"log without positive values still has a valid range", []Spec{{LogY: true, Series: []Series{line(0, -1)}}}, KindLines, 1, 10, true},
		{"log with a fixed range from 0 keeps the automatic floor", []Spec{{LogY: true, YMin: 0, YMax: 1000, Series: []Series{line(0.5, 20)}}}, KindLines, 0.1, 1000, true},
		{"linear starts at 0", []Spec{{Series: []Series{line(40, 60)}}}, KindLines, 0, 60, false},
		{"a fixed range wins", []Spec{{YMin: 0, YMax: 1, Series: []Series{line(0.2, 5)}}}, KindLines, 0, 1, false},
		{"panels share the union of their data", []Spec{{Series: []Series{line(5)}}, {Series: []Series{line(80)}}}, KindLines, 0, 80, false},
		{"stacked range covers the total", []Spec{{Series: []Series{line(10, 10), line(30, 5)}}}, KindStacked, 0, 40, false},
		{"stacked ignores LogY", []Spec{{LogY: true, Series: []Series{line(0, 10)}}}, KindStacked, 0, 10, false},
		{"percentiles are always log", []Spec{{Series: []Series{{Name: "/a", X: []float64{50, 99}, Y: []float64{20, 400}}}}}, KindPercentiles, 10, 400, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prs []prepared
			for _, s := range tt.specs {
				prs = append(prs, prep(t, s, tt.kind))
			}
			r := ranges(prs, tt.kind)
			if r.logY != tt.logY {
				t.Errorf("logY = %v, want %v", r.logY, tt.logY)
			}
			if r.ymin != tt.ymin || r.ymax < tt.ymax || r.ymax > tt.ymax*1.5 {
				t.Errorf("Y range [%v, %v], want [%v, %v + headroom]", r.ymin, r.ymax, tt.ymin, tt.ymax)
			}
		})
	}
	t.Run("percentile X runs to the next whole nine", func(t *testing.T) {
		pr := prep(t, Spec{Series: []Series{{Name: "/a", X: []float64{0, 99.9, 100}, Y: []float64{1, 2, 3}}}}, KindPercentiles)
		if r := ranges([]prepared{pr}, KindPercentiles); r.xmin != 0 || math.Abs(r.xmax-3) > 1e-9 {
			t.Errorf("X range [%v, %v], want [0, 3] (p100 skipped)", r.xmin, r.xmax)
		}
	})
	t.Run("windows widen the time axis", func(t *testing.T) {
		pr := prep(t, Spec{Series: []Series{line(1, 2)}, Windows: []Window{{Start: 0, End: 10}}}, KindLines)
		if r := ranges([]prepared{pr}, KindLines); r.xmin != 0 || r.xmax != 10 {
			t.Errorf("X range [%v, %v], want [0, 10]", r.xmin, r.xmax)
		}
	})
}

func TestStackAlignsOnTheUnionOfX(t *testing.T) {
	ext := newExtent()
	bands := stack([]Series{
		{Name: "ok", X: []float64{0, 1, 2}, Y: []float64{10, 10, 10}},
		{Name: "timeout", X: []float64{1, 2, 3}, Y: []float64{5, math.NaN(), 7}},
	}, &ext)
	wantX := []float64{0, 1, 2, 3}
	tests := []struct {
		name   string
		got    []float64
		wanted []float64
	}{
		{"x", bands[1].xs, wantX},
		{"ok bottom", bands[0].lo, []float64{0, 0, 0, 0}},
		{"ok top (missing x counts 0)", bands[0].hi, []float64{10, 10, 10, 0}},
		{"timeout bottom is ok's top", bands[1].lo, []float64{10, 10, 10, 0}},
		{"timeout top (NaN counts 0)", bands[1].hi, []float64{10, 15, 10, 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.wanted) {
				t.Errorf("got %v, want %v", tt.got, tt.wanted)
			}
		})
	}
}

func TestSegmentsBreakAtNaN(t *testing.T) {
	ext := newExtent()
	l := segments(Series{Name: "/a", X: []float64{0, 1, 2, 3, 4, math.Inf(1)}, Y: []float64{1, 2, math.NaN(), 4, 5, 6}},
		func(x float64) (float64, bool) { return x, finite(x) }, &ext)
	want := [][]xy{{{0, 1}, {1, 2}}, {{3, 4}, {4, 5}}}
	if len(l.segs) != len(want) {
		t.Fatalf("got %d segments %v, want %v", len(l.segs), l.segs, want)
	}
	for i := range want {
		if !slices.Equal(l.segs[i], want[i]) {
			t.Errorf("segment %d: got %v, want %v", i, l.segs[i], want[i])
		}
	}
}

func TestColorsAreStableByName(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"/a", "/a p99", true},
		{"/a p50", "/a p99", true},
		{"/a", "/b", false},
		{"shared", "shared-latency", true},
		{"shared", "split", false},
		{"pool:shared", "shared", true},
		{"pool:A", "/a", true},
		{"ok", "Successes", true},
		{"timeout", "timeouts", true},
		{"rejected", "rejections", true},
		{"upstream errors", "upstream", true},
		{"connection errors", "connection", true},
		{"conn:X", "conn:X capacity", true},
	}
	for _, tt := range tests {
		t.Run(tt.a+" vs "+tt.b, func(t *testing.T) {
			if got := ColorFor(tt.a) == ColorFor(tt.b); got != tt.same {
				t.Errorf("same colour = %v, want %v (%v, %v)", got, tt.same, ColorFor(tt.a), ColorFor(tt.b))
			}
		})
	}
	t.Run("outcomes have distinct colours", func(t *testing.T) {
		seen := map[color.Color]string{}
		for _, n := range []string{"ok", "timeout", "rejected", "upstream", "connection", "other"} {
			c := ColorFor(n)
			if prev, ok := seen[c]; ok {
				t.Errorf("%s and %s share %v", n, prev, c)
			}
			seen[c] = n
		}
	})
}

func TestPaletteKeepsKeysApart(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		fixed map[string]color.NRGBA // names that must keep their own colour
	}{
		{"a derived colour yields to the direct name", []string{"pool:A", "conn:A", "/a", "pool:A capacity"},
			map[string]color.NRGBA{"/a": blue}},
		{"hashed names never take a fixed colour", []string{"alpha", "beta", "gamma", "delta", "/a", "/b", "shared", "split"},
			map[string]color.NRGBA{"/a": blue, "/b": vermillion, "shared": purple, "split": green}},
		{"outcomes keep their colours", []string{"ok", "timeout", "rejected", "upstream", "connection", "other"},
			map[string]color.NRGBA{"ok": green, "timeout": orange, "rejected": blue, "upstream": vermillion, "connection": grey, "other": black}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPalette(tt.names, nil)
			owner := map[color.NRGBA]string{}
			for _, n := range tt.names {
				c, k := p.color(n), colorKey(n)
				if prev, ok := owner[c]; ok && prev != k {
					t.Errorf("%q and %q share %v", prev, k, c)
				}
				owner[c] = k
			}
			for n, want := range tt.fixed {
				if got := p.color(n); got != want {
					t.Errorf("%s: got %v, want %v", n, got, want)
				}
			}
			if p.color("pool:A capacity") != p.color("pool:A") {
				t.Errorf("pool:A and its capacity differ")
			}
		})
	}
}

func TestKindString(t *testing.T) {
	for k, want := range map[Kind]string{KindLines: "lines", KindStacked: "stacked", KindPercentiles: "percentiles", Kind(9): "Kind(9)"} {
		if got := k.String(); got != want {
			t.Errorf("%d: got %q, want %q", int(k), got, want)
		}
	}
}

// A series whose caller fixed its colour keeps it in every figure, whatever else the figure
// holds, and names without one avoid it.
func TestFixedColors(t *testing.T) {
	latency := color.NRGBA{0x12, 0x34, 0x56, 0xff}
	for _, others := range [][]string{{"errors"}, {"errors", "busy", "latency"}, nil} {
		p := newPalette(append(others, "latency"), map[string]color.NRGBA{"latency": latency})
		if got := p.color("latency"); got != latency {
			t.Errorf("with %v: latency %v, want the fixed %v", others, got, latency)
		}
		for _, o := range others {
			if o != "latency" && p.color(o) == latency {
				t.Errorf("with %v: %s took the fixed colour", others, o)
			}
		}
	}
}

// A window too narrow for its name is drawn by its Short and explained in the key; without a
// Short its name is cut short.
func TestWindowAbbreviations(t *testing.T) {
	a := &abbreviations{names: map[string]string{}}
	a.add("3", "calm")
	a.add("5", "recovery")
	a.add("3", "calm")
	if got := a.text(); got != "too narrow to name: 3 = calm, 5 = recovery" {
		t.Errorf("key %q", got)
	}
	spec := Spec{Series: []Series{{Name: "x", X: []float64{0, 100}, Y: []float64{1, 2}}},
		Windows: []Window{{Start: 0, End: 90, Label: "baseline", Short: "1", Plain: true}, {Start: 90, End: 93, Label: "recovery-2", Short: "2", Plain: true}, {Start: 93, End: 100, Label: "end"}}}
	fig, err := buildGrid("t", [][]Spec{{spec}}, KindLines, false)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := renderSVG(&buf, DefaultWidthPx, DefaultHeightPx, fig, false); err != nil {
		t.Fatal(err)
	}
	if got := fig.abbrev.text(); got != "too narrow to name: 2 = recovery-2" {
		t.Errorf("key %q, want only the narrow window", got)
	}
	if !strings.Contains(buf.String(), "too narrow to name: 2 = recovery-2") || strings.Contains(buf.String(), "recov…") {
		t.Errorf("the SVG does not show the key, or cuts the name")
	}
}
