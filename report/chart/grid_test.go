package chart

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// Step lines share one X, repeated at each bucket edge: they stack point by point, keeping the
// vertical edges, and a NaN in any series is a gap in every band rather than a dip to 0.
func TestStackPointwiseKeepsStepsAndGaps(t *testing.T) {
	nan := math.NaN()
	x := []float64{0, 1, 1, 2, nan, 3, 4}
	ext := newExtent()
	bands := stack([]Series{
		{Name: "success", X: x, Y: []float64{50, 50, 10, 10, nan, 40, 40}},
		{Name: "rejected", X: x, Y: []float64{0, 0, 40, 40, nan, 10, 10}},
	}, &ext)
	same := func(a, b []float64) bool {
		return slices.EqualFunc(a, b, func(p, q float64) bool { return p == q || (math.IsNaN(p) && math.IsNaN(q)) })
	}
	if !same(bands[0].hi, []float64{50, 50, 10, 10, nan, 40, 40}) || !same(bands[1].lo, bands[0].hi) ||
		!same(bands[1].hi, []float64{50, 50, 50, 50, nan, 50, 50}) || !same(bands[1].xs, x) {
		t.Errorf("bands %+v", bands)
	}
	if ext.xmin != 0 || ext.xmax != 4 || ext.ymax != 50 {
		t.Errorf("extent %+v, want x 0..4, y up to 50", ext)
	}
}

// A line drawn over more than a quarter of an earlier one gets a dash pattern, so the earlier one
// shows through; lines that merely cross keep theirs (solid, or their name's).
func TestOverlapDashes(t *testing.T) {
	line := func(name string, ys ...float64) preparedLine {
		var seg []xy
		for i, y := range ys {
			seg = append(seg, xy{float64(i), y})
		}
		return preparedLine{name: name, segs: [][]xy{seg}}
	}
	lines := []preparedLine{
		line("/a", 1, 1, 1, 1),
		line("/b", 1, 1, 1, 0.5),   // over /a for 3 of 4 points
		line("/c", 0, 0.2, 1, 0.3), // crosses /a once: 1 of 4
		line("/c p50", 1, 1, 1, 1), // its name's dashes win
		line("/d", 1, 1, 1, 1),     // over all: the next pattern
	}
	got := overlapDashes(lines)
	want := [][]vg.Length{nil, overlapPatterns[0], nil, dashesFor("/c p50"), overlapPatterns[1]}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("line %s: dashes %v, want %v", lines[i].name, got[i], want[i])
		}
	}
}

func TestFitText(t *testing.T) {
	st := textStyle(windowSize, 0, 0)
	full := "recovery"
	w := st.Width(full)
	tests := []struct {
		name  string
		width vg.Length
		want  string
	}{
		{"fits", w, full},
		{"cut with an ellipsis", st.Width("reco…"), "reco…"},
		{"no room for a letter", st.Width("…") / 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fitText(st, full, tt.width); got != tt.want {
				t.Errorf("fitText = %q, want %q", got, tt.want)
			}
		})
	}
}

// gridSpecs mimics one configuration: step-stacked outcomes over named phases (the faulted one
// shaded, the others outlined), and below it a latency heatmap of the same time line.
func gridSpecs() [][]Spec {
	nan := math.NaN()
	phases := []Window{{Start: 0, End: 4, Label: "baseline", Plain: true}, {Start: 4, End: 8, Label: "latency\nA +450ms"}, {Start: 8, End: 12, Label: "recovery", Plain: true}}
	var x, ok, rej []float64
	for b := range 12 {
		if b == 9 { // an empty bucket
			x, ok, rej = append(x, float64(b)), append(ok, nan), append(rej, nan)
			continue
		}
		s, r := 50.0, 0.0
		if b >= 4 && b < 8 {
			s, r = 12, 38
		}
		x = append(x, float64(b), float64(b+1))
		ok, rej = append(ok, s, s), append(rej, r, r)
	}
	outcomes := Spec{Title: "outcomes", YLabel: "requests per second", Windows: phases,
		Series: []Series{{Name: "success", X: x, Y: ok}, {Name: "rejected", X: x, Y: rej}}}
	edges := []float64{0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000}
	d := &Density{YEdges: edges, Unit: "requests per cell"}
	for b := range 13 {
		d.XEdges = append(d.XEdges, float64(b))
	}
	for b := range 12 {
		col := make([]float64, len(edges)-1)
		if b >= 4 && b < 8 {
			col[7], col[1] = 12, 38
		} else if b != 9 {
			col[3], col[4] = 45, 5
		}
		d.Counts = append(d.Counts, col)
	}
	heat := Spec{Title: "latency heatmap", YLabel: "latency (ms)", LogY: true, Windows: phases, Density: d,
		HLines: []Series{{Name: "client timeout", Y: []float64{500}}}}
	return [][]Spec{{outcomes}, {heat}}
}

// TestGridGolden pins the look of a grid: step-stacked bands with a gap, phase names on plain
// and shaded windows, a density with its colour scale in the legend.
func TestGridGolden(t *testing.T) {
	path := filepath.Join(dir(t), "grid")
	rows := gridSpecs()
	// Rows of different kinds are drawn as two figures' worth of panels in one grid of lines:
	// the stacked row is checked by TestStackPointwiseKeepsStepsAndGaps; here the lines kind
	// draws the outcome series as lines over each other.
	if err := Grid(path, "grid: outcomes and latency heatmap", rows, KindLines, false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, path+".png", "grid")
	stacked := filepath.Join(dir(t), "stacked-steps")
	if err := Grid(stacked, "stacked steps", rows[:1], KindStacked, false); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, stacked+".png", "stacked_steps")
}

// GridSVG draws the figure Grid writes as its .svg, without the embedded font: the same drawing,
// a small fraction of the size.
func TestGridSVG(t *testing.T) {
	rows := [][]Spec{{{Title: "a", YLabel: "ms", Series: []Series{{Name: "/a p99", X: []float64{0, 1, 2}, Y: []float64{1, 2, 3}}}},
		{Title: "b", Series: []Series{{Name: "/b p99", X: []float64{0, 1, 2}, Y: []float64{3, 2, 1}}}}}}
	var buf bytes.Buffer
	if err := GridSVG(&buf, "two panels", rows, KindLines, true); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g")
	if err := Grid(path, "two panels", rows, KindLines, true); err != nil {
		t.Fatal(err)
	}
	full, err := os.ReadFile(path + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	if !strings.Contains(got, "<svg") || strings.Contains(got, "base64") || !strings.Contains(got, "Liberation Sans") || !strings.Contains(got, "two panels") {
		t.Errorf("GridSVG: want an SVG naming its font without embedding it, with the title")
	}
	if len(got)*4 > len(full) {
		t.Errorf("GridSVG is %d bytes, the embedded-font SVG %d: want under a quarter", len(got), len(full))
	}
	if err := GridSVG(&buf, "", [][]Spec{{{}}, {}}, KindLines, false); !errors.Is(err, ErrRagged) {
		t.Errorf("ragged rows: %v, want ErrRagged", err)
	}
}
