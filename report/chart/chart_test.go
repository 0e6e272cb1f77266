package chart

import (
	"bytes"
	"errors"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// -out keeps the charts the tests draw in a folder, to look at them.
var outDir = flag.String("out", "", "write the test charts into this folder instead of a temp dir")

func dir(t *testing.T) string {
	t.Helper()
	if *outDir != "" {
		d := filepath.Join(*outDir, strings.ReplaceAll(t.Name(), "/", "_"))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// The data below mimics one configuration of the seed-004 experiment: 60 s, a latency fault on A
// from 20 s to 40 s, 1 s buckets.

func timeline(n int, f func(t float64) float64) ([]float64, []float64) {
	x, y := make([]float64, n), make([]float64, n)
	for i := range n {
		x[i] = float64(i)
		y[i] = f(x[i])
	}
	return x, y
}

func inFault(t float64) bool { return t >= 20 && t < 40 }

func latencySpec() Spec {
	var s Spec
	s.Title = "shared pool: latency over time"
	s.YLabel = "latency (ms)"
	s.LogY = true
	add := func(name string, f func(float64) float64) {
		x, y := timeline(60, f)
		s.Series = append(s.Series, Series{Name: name, X: x, Y: y})
	}
	add("/a p50", func(t float64) float64 {
		if inFault(t) {
			return 450
		}
		return 20 + math.Mod(t, 3)
	})
	add("/a p99", func(t float64) float64 {
		if inFault(t) {
			return 498
		}
		return 26 + math.Mod(t, 5)
	})
	add("/b p50", func(t float64) float64 {
		if inFault(t) {
			return 2 + 3*(t-20)
		}
		return 20 + math.Mod(t, 2)
	})
	add("/b p99", func(t float64) float64 {
		switch {
		case inFault(t):
			return 500
		case t == 45:
			return 0 // an empty bucket: must sit on the floor, not panic
		case t == 50:
			return math.NaN() // no data: the line breaks
		}
		return 24 + math.Mod(t, 4)
	})
	s.Windows = []Window{{Start: 20, End: 40, Label: "latency on A: 450 ms"}}
	s.HLines = []Series{{Name: "client timeout", Y: []float64{500}}}
	return s
}

func outcomesSpec(title string, rejected bool) Spec {
	s := Spec{Title: title, YLabel: "requests/s"}
	add := func(name string, f func(float64) float64) {
		x, y := timeline(60, f)
		s.Series = append(s.Series, Series{Name: name, X: x, Y: y})
	}
	add("ok", func(t float64) float64 {
		if inFault(t) {
			return 40
		}
		return 100
	})
	add("timeout", func(t float64) float64 {
		if inFault(t) && !rejected {
			return 55
		}
		return 0
	})
	add("rejected", func(t float64) float64 {
		if inFault(t) && rejected {
			return 60
		}
		if inFault(t) {
			return 5
		}
		return 0
	})
	add("upstream", func(t float64) float64 { return math.NaN() })
	add("connection", func(t float64) float64 {
		if t == 21 {
			return 3
		}
		return 0
	})
	s.Windows = []Window{{Start: 20, End: 40, Label: "latency on A"}}
	return s
}

func percentileSpec(title string) Spec {
	s := Spec{Title: title}
	ps := []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100}
	add := func(name string, f func(p float64) float64) {
		y := make([]float64, len(ps))
		for i, p := range ps {
			y[i] = f(p)
		}
		s.Series = append(s.Series, Series{Name: name, X: ps, Y: y})
	}
	add("/a", func(p float64) float64 { return 20 + 480*math.Min(1, p/60) })
	add("/b", func(p float64) float64 { return 18 + 0.2*p + math.Max(0, p-99)*300 })
	return s
}

// readPNG decodes path and returns its size.
func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is not a PNG: %v", path, err)
	}
	return img
}

// checkFiles asserts that path.png is a PNG of the given size and path.svg an SVG with its fonts
// embedded, and that no temporary files are left beside them.
func checkFiles(t *testing.T, path string, wPx, hPx int) {
	t.Helper()
	img := readPNG(t, path+".png")
	if got := img.Bounds().Size(); got != (image.Point{X: wPx, Y: hPx}) {
		t.Errorf("%s.png is %v px, want %dx%d", path, got, wPx, hPx)
	}
	svg, err := os.ReadFile(path + ".svg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(bytes.TrimSpace(svg), []byte("<?xml")) || !bytes.Contains(svg, []byte("<svg")) {
		t.Errorf("%s.svg does not look like an SVG", path)
	}
	if !bytes.Contains(svg, []byte("@font-face")) {
		t.Errorf("%s.svg does not embed its fonts", path)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestChartsWriteFiles(t *testing.T) {
	one := Spec{Title: "one point", YLabel: "latency (ms)", LogY: true,
		Series: []Series{{Name: "/a p99", X: []float64{3}, Y: []float64{42}}}}
	zeros := Spec{Title: "only zeros on a log axis", YLabel: "latency (ms)", LogY: true,
		Series: []Series{{Name: "/a p99", X: []float64{0, 1, 2}, Y: []float64{0, 0, -1}}}}
	nans := Spec{Title: "only NaN", YLabel: "latency (ms)", LogY: true,
		Series: []Series{{Name: "/a p99", X: []float64{0, 1}, Y: []float64{math.NaN(), math.Inf(1)}}}}
	empty := Spec{Title: "empty series", YLabel: "requests/s",
		Series:  []Series{{Name: "ok"}, {Name: "timeout"}},
		Windows: []Window{{Start: 5, End: 10, Label: "fault"}}}
	nothing := Spec{}
	capacity := Spec{Title: "pool occupancy", YLabel: "slots in use",
		Series: []Series{{Name: "pool:shared", X: []float64{0, 1, 2, 3}, Y: []float64{3, 20, 20, 12}}},
		HLines: []Series{{Name: "pool:shared capacity", Y: []float64{20}}},
	}
	fixedLog := latencySpec()
	fixedLog.YMin, fixedLog.YMax = 0, 1000

	// Drawing a 1200x600 chart costs about 0.8 s under the race detector (against 0.05 s
	// without), and the package starts no goroutines, so under -race (make test's short tier) only
	// the cases marked quick run; the others are long tests, run by the end-to-end tier.
	quick := map[string]bool{"lines/seed004": true, "stacked/outcomes": true, "percentiles/zeros and NaN": true, "panels/stacked": true}
	tests := []struct {
		name string
		draw func(path string) error
	}{
		{"lines/seed004", func(p string) error { return Lines(p, latencySpec()) }},
		{"lines/one point", func(p string) error { return Lines(p, one) }},
		{"lines/log zeros", func(p string) error { return Lines(p, zeros) }},
		{"lines/log NaN only", func(p string) error { return Lines(p, nans) }},
		{"lines/empty series", func(p string) error { return Lines(p, empty) }},
		{"lines/zero spec", func(p string) error { return Lines(p, nothing) }},
		{"lines/capacity line", func(p string) error { return Lines(p, capacity) }},
		{"lines/fixed log range with floor 0", func(p string) error { return Lines(p, fixedLog) }},
		{"lines/narrow windows with long labels", func(p string) error {
			s := latencySpec()
			s.Windows = []Window{
				{Start: 10, End: 12, Label: "latency 450 ms on A"},
				{Start: 12, End: 14, Label: "reset_peer on A"},
				{Start: 14, End: 16, Label: "A disabled"},
				{Start: 55, End: 70, Label: "past the end of the data"},
			}
			return Lines(p, s)
		}},
		{"stacked/outcomes", func(p string) error { return Stacked(p, outcomesSpec("shared pool: outcomes", false)) }},
		{"stacked/one point", func(p string) error {
			return Stacked(p, Spec{Series: []Series{{Name: "ok", X: []float64{1}, Y: []float64{5}}}})
		}},
		{"stacked/empty series", func(p string) error { return Stacked(p, empty) }},
		{"stacked/zero spec", func(p string) error { return Stacked(p, nothing) }},
		{"percentiles/two endpoints", func(p string) error { return Percentiles(p, percentileSpec("latency distribution, fault phase")) }},
		{"percentiles/one point", func(p string) error {
			return Percentiles(p, Spec{Series: []Series{{Name: "/a", X: []float64{50}, Y: []float64{10}}}})
		}},
		{"percentiles/zeros and NaN", func(p string) error {
			return Percentiles(p, Spec{Series: []Series{{Name: "/a", X: []float64{0, 50, math.NaN(), 99}, Y: []float64{0, 1, 5, math.NaN()}}}})
		}},
		{"percentiles/zero spec", func(p string) error { return Percentiles(p, nothing) }},
		{"panels/lines", func(p string) error {
			split := latencySpec()
			split.Title = "split pools"
			split.Series = split.Series[:2]
			shared := latencySpec()
			shared.Title = "shared pool"
			return Panels(p, "/b p99: shared vs split", []Spec{shared, split}, KindLines)
		}},
		{"panels/stacked", func(p string) error {
			return Panels(p, "outcomes of /b", []Spec{outcomesSpec("shared", false), outcomesSpec("split", true)}, KindStacked)
		}},
		{"panels/percentiles", func(p string) error {
			return Panels(p, "latency distribution", []Spec{percentileSpec("baseline"), percentileSpec("fault")}, KindPercentiles)
		}},
		{"panels/one empty panel", func(p string) error {
			return Panels(p, "empty", []Spec{nothing}, KindLines)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !quick[tt.name] {
				testenv.Long(t, "draws a chart (0.8 s each under -race)")
			}
			path := filepath.Join(dir(t), "nested", "chart")
			if err := tt.draw(path); err != nil {
				t.Fatalf("draw: %v", err)
			}
			w := DefaultWidthPx
			if strings.HasPrefix(tt.name, "panels/") && !strings.Contains(tt.name, "one") {
				w = 2 * PanelWidthPx
			}
			checkFiles(t, path, w, DefaultHeightPx)
		})
	}
}

func TestChartsRejectBadInput(t *testing.T) {
	bad := Spec{Series: []Series{{Name: "/a", X: []float64{1, 2}, Y: []float64{1}}}}
	badRef := Spec{HLines: []Series{{Name: "cap", X: []float64{1, 2}, Y: []float64{1}}}}
	tests := []struct {
		name string
		draw func(path string) error
		want error
	}{
		{"lines with X and Y of different lengths", func(p string) error { return Lines(p, bad) }, ErrBadSeries},
		{"stacked with X and Y of different lengths", func(p string) error { return Stacked(p, bad) }, ErrBadSeries},
		{"reference line with X and Y of different lengths", func(p string) error { return Lines(p, badRef) }, ErrBadSeries},
		{"panels with a bad panel", func(p string) error { return Panels(p, "t", []Spec{{}, bad}, KindLines) }, ErrBadSeries},
		{"panels without specs", func(p string) error { return Panels(p, "t", nil, KindLines) }, ErrNoPanels},
		{"panels of an unknown kind", func(p string) error { return Panels(p, "t", []Spec{{}}, Kind(7)) }, ErrBadKind},
		{"grid with rows of different lengths", func(p string) error { return Grid(p, "t", [][]Spec{{{}, {}}, {{}}}, KindLines, false) }, ErrRagged},
		{"grid without rows", func(p string) error { return Grid(p, "t", nil, KindLines, false) }, ErrNoPanels},
		{"density with fewer columns than its edges", func(p string) error {
			return Lines(p, Spec{Density: &Density{XEdges: []float64{0, 1, 2}, YEdges: []float64{1, 10}, Counts: [][]float64{{1}}}})
		}, ErrBadDensity},
		{"density with a short column", func(p string) error {
			return Lines(p, Spec{Density: &Density{XEdges: []float64{0, 1}, YEdges: []float64{1, 10, 100}, Counts: [][]float64{{1}}}})
		}, ErrBadDensity},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "chart")
			err := tt.draw(path)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			for _, ext := range []string{".png", ".svg"} {
				if _, err := os.Stat(path + ext); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s written despite the error (stat: %v)", ext, err)
				}
			}
		})
	}
	t.Run("empty path", func(t *testing.T) {
		if err := Lines("", Spec{}); !errors.Is(err, ErrBadPath) {
			t.Fatalf("got %v, want ErrBadPath", err)
		}
	})
}

func TestRewriteReplacesFiles(t *testing.T) {
	testenv.Long(t, "draws a chart (0.8 s under -race)")
	path := filepath.Join(t.TempDir(), "chart")
	if err := os.WriteFile(path+".png", []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Lines(path, latencySpec()); err != nil {
		t.Fatal(err)
	}
	checkFiles(t, path, DefaultWidthPx, DefaultHeightPx)
}
