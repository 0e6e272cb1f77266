package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"testing"
)

// sweepP99 mimics a sizing sweep: /b's p99 in ms for pool sizes (rows) x fault delay as a
// fraction of a 500 ms timeout (columns), shared pool and split pools.
func sweepP99(split bool) HeatmapSpec {
	rows := []string{"4", "10", "20"}
	cols := []string{"0.5x", "0.7x", "0.9x", "1.0x"}
	vals := make([][]float64, len(rows))
	for r := range rows {
		vals[r] = make([]float64, len(cols))
		for c := range cols {
			switch {
			case split:
				vals[r][c] = 7 + float64(c)
			case r == 2 && c < 2:
				vals[r][c] = 9
			default:
				vals[r][c] = 200 + 300*float64(c)/3 + 100*float64(2-r)
			}
		}
	}
	name := "shared"
	if split {
		name = "split"
	}
	return HeatmapSpec{
		Title: name, XLabel: "fault delay (x timeout)", YLabel: "pool size P",
		Columns: cols, Rows: rows, Values: vals, Unit: "/b p99 (ms)", Log: true, Reverse: true,
		Scale: "p99", Format: func(v float64) string { return fmt.Sprintf("%.0f", v) },
	}
}

func TestHeatmapWritesFiles(t *testing.T) {
	nan := math.NaN()
	withGaps := sweepP99(false)
	withGaps.Values[0][1] = nan
	withGaps.Values[1][3] = math.Inf(1)
	withGaps.Values[2][0] = 0 // on a log scale: the bottom colour, not a panic
	withGaps.Marked = [][]bool{{false, false, true, false}, {false, false, false, false}, {true, false, false, false}}
	withGaps.MarkedLabel = "run invalid (send lag above its limit)"
	allNaN := HeatmapSpec{Title: "no data", Columns: []string{"a", "b"}, Rows: []string{"x"},
		Values: [][]float64{{nan, nan}}, Log: true}
	oneCell := HeatmapSpec{Title: "one cell", Columns: []string{"a"}, Rows: []string{"x"},
		Values: [][]float64{{42}}}
	diverging := HeatmapSpec{Title: "split - shared", Columns: []string{"0.5x", "1.0x"}, Rows: []string{"4", "20"},
		Values: [][]float64{{0.5, 0.9}, {0, -0.2}}, Scheme: SchemeDiverging, Unit: "success (points)"}
	ratio := HeatmapSpec{Title: "split / shared", Columns: []string{"0.5x", "1.0x"}, Rows: []string{"4", "20"},
		Values: [][]float64{{0.02, 0.5}, {1, 1.3}}, Scheme: SchemeDiverging, Log: true, Reverse: true, Unit: "p99 ratio"}

	tests := []struct {
		name  string
		draw  func(path string) error
		width int
	}{
		{"single", func(p string) error { return Heatmap(p, sweepP99(false)) }, DefaultWidthPx},
		{"NaN, Inf, zero and marked cells", func(p string) error { return Heatmap(p, withGaps) }, DefaultWidthPx},
		{"only NaN", func(p string) error { return Heatmap(p, allNaN) }, DefaultWidthPx},
		{"one cell", func(p string) error { return Heatmap(p, oneCell) }, DefaultWidthPx},
		{"diverging", func(p string) error { return Heatmap(p, diverging) }, DefaultWidthPx},
		{"diverging log", func(p string) error { return Heatmap(p, ratio) }, DefaultWidthPx},
		{"three panels", func(p string) error {
			return HeatmapPanels(p, "/b p99 in the fault phase, 20/s", []HeatmapSpec{sweepP99(false), sweepP99(true), ratio})
		}, 3 * HeatmapPanelPx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir(t), "heatmap")
			if err := tt.draw(path); err != nil {
				t.Fatal(err)
			}
			checkFiles(t, path, tt.width, HeatmapHeightPx)
		})
	}
}

func TestHeatmapRejectsBadInput(t *testing.T) {
	good := sweepP99(false)
	short := sweepP99(false)
	short.Values = short.Values[:2]
	ragged := sweepP99(false)
	ragged.Values[1] = ragged.Values[1][:3]
	badMarked := sweepP99(false)
	badMarked.Marked = [][]bool{{true}}
	tests := []struct {
		name string
		draw func(path string) error
		want error
	}{
		{"empty path", func(string) error { return Heatmap("", good) }, ErrBadPath},
		{"no panels", func(p string) error { return HeatmapPanels(p, "t", nil) }, ErrNoPanels},
		{"fewer rows of values than labels", func(p string) error { return Heatmap(p, short) }, ErrBadGrid},
		{"a row too short", func(p string) error { return Heatmap(p, ragged) }, ErrBadGrid},
		{"marked of the wrong shape", func(p string) error {
			return HeatmapPanels(p, "t", []HeatmapSpec{good, badMarked})
		}, ErrBadGrid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.draw(filepath.Join(t.TempDir(), "x")); !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
}

// TestHeatmapColourScale pins how values map to colours: the ends of the range take the ends of
// the scheme, Reverse swaps them, a log scale places the geometric mean in the middle, panels
// sharing a Scale get one range, and a diverging scheme puts Center in the middle.
func TestHeatmapColourScale(t *testing.T) {
	first, last := viridis[0], viridis[len(viridis)-1]
	mk := func(s HeatmapSpec) *heat {
		t.Helper()
		h, err := newHeat(s)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	grid := func(vs ...float64) HeatmapSpec {
		return HeatmapSpec{Columns: make([]string, len(vs)), Rows: []string{"r"}, Values: [][]float64{vs}}
	}
	lin := mk(grid(10, 20, 30))
	rev := grid(10, 20, 30)
	rev.Reverse = true
	logS := grid(1, 10, 100)
	logS.Log = true
	div := grid(-0.2, 0.5)
	div.Scheme = SchemeDiverging
	fixed := grid(10, 20, 30)
	fixed.Min, fixed.Max = 0, 100

	type want struct {
		v float64
		c color.NRGBA
	}
	tests := []struct {
		name string
		h    *heat
		want []want
	}{
		{"linear ends", lin, []want{{10, first}, {30, last}, {5, first}, {99, last}}},
		{"reversed", mk(rev), []want{{10, last}, {30, first}}},
		{"log middle is the geometric mean", mk(logS), []want{{1, first}, {10, ramp(viridis, 0.5)}, {100, last}, {0, first}}},
		{"diverging is symmetric around the centre", mk(div), []want{{0, puOr[4]}, {0.5, puOr[8]}, {-0.5, puOr[0]}}},
		{"fixed range", mk(fixed), []want{{0, first}, {50, ramp(viridis, 0.5)}, {100, last}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.want {
				if got, _ := tt.h.color(w.v); got != w.c {
					t.Errorf("color(%v) = %v, want %v", w.v, got, w.c)
				}
			}
		})
	}
	t.Run("no data is grey", func(t *testing.T) {
		if c, ok := lin.color(math.NaN()); ok || c != noDataFill {
			t.Errorf("color(NaN) = %v, %v; want %v, false", c, ok, noDataFill)
		}
	})
	t.Run("shared scale is the union", func(t *testing.T) {
		a, b := grid(10, 20), grid(50, 100)
		a.Scale, b.Scale = "s", "s"
		hs := []*heat{mk(a), mk(b)}
		shareScales(hs)
		for i, h := range hs {
			if h.lo != 10 || h.hi != 100 {
				t.Errorf("panel %d range [%v, %v], want [10, 100]", i, h.lo, h.hi)
			}
		}
	})
	t.Run("text contrasts with the fill", func(t *testing.T) {
		if textOn(first) != color.White || textOn(last) != color.Black {
			t.Error("want white text on dark purple and black on yellow")
		}
	})
}

func TestNice125(t *testing.T) {
	tests := []struct {
		v    float64
		up   bool
		want float64
	}{
		{499.8, true, 500}, {500, true, 500}, {501, true, 1000}, {7.36, false, 5},
		{7.36, true, 10}, {0.03, false, 0.02}, {1, false, 1}, {150, true, 200}, {150, false, 100},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v up=%v", tt.v, tt.up), func(t *testing.T) {
			if got := nice125(tt.v, tt.up); math.Abs(got-tt.want) > 1e-9*tt.want {
				t.Errorf("nice125(%v, %v) = %v, want %v", tt.v, tt.up, got, tt.want)
			}
		})
	}
}
