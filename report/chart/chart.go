package chart

import (
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"sort"
)

// Series is one named line (or one band of a stacked chart). X holds seconds on the run's time
// line, or percentiles (0 to 100, exclusive of 100) for Percentiles; Y holds the values. X and Y
// must have the same length. NaN and ±Inf points are skipped.
type Series struct {
	Name string
	X, Y []float64
	// Color fixes the series' colour; nil picks it by name (see ColorFor). Series of one name
	// share one colour either way.
	Color color.Color
}

// Window is a span of the X axis, such as a phase, with its label at the top (a label may hold
// several lines). It is shaded, as a fault, unless Plain: a plain window only marks its edges
// and writes its label.
type Window struct {
	Start, End float64
	Label      string
	Plain      bool
	// Short abbreviates the label's first line ("3" for the third phase): where the window is
	// too narrow for the name it is drawn instead, and the figure explains it in a key under the
	// legend ("3 = calm"), so a narrow window is never named by a cut-off word. Empty: the name
	// is cut short with an ellipsis instead.
	Short string
}

// Density is a grid of counts drawn as coloured cells, such as a latency heatmap over time:
// cell (i, j) spans [XEdges[i], XEdges[i+1]) x [YEdges[j], YEdges[j+1]) and holds Counts[i][j].
// Cells of count <= 0 (or NaN) are left empty. Colours run along viridis on a log scale from 1
// to the largest count of the whole figure (every panel shares it); the legend shows the scale
// under Unit, such as "requests per cell".
type Density struct {
	XEdges, YEdges []float64
	Counts         [][]float64
	Unit           string
}

// Spec describes one chart (or one panel of Panels).
type Spec struct {
	// Title is drawn above the chart. XLabel and YLabel name the axes with their units, e.g.
	// "latency (ms)". An empty XLabel defaults to "time (s)", or "percentile (%)" for Percentiles;
	// an empty YLabel defaults to "latency (ms)" for Percentiles.
	Title, XLabel, YLabel string
	// LogY draws Y on a log scale; values <= 0 are drawn on the floor of the axis (YMin, or the
	// decade below the smallest positive value). Percentiles always use a log Y; Stacked ignores
	// LogY, since stacked areas on a log scale misstate their shares.
	LogY bool
	// Series are the data, drawn (or stacked, bottom first) in order.
	Series []Series
	// Windows are shaded behind the data (unless Plain), each with its label.
	Windows []Window
	// Density, when not nil, is drawn as coloured cells behind the series (see Density).
	Density *Density
	// Empty is written in the middle of a panel without data ("no data" when empty), such as
	// "no failures".
	Empty string
	// HLines are reference lines, such as a capacity, drawn dashed over the data: a series with Y
	// but no X is a horizontal line at Y[0] across the chart; a series with both is drawn through
	// its points.
	HLines []Series
	// YMin and YMax fix the Y range when YMax > YMin; otherwise (including 0, 0) the range is
	// chosen from the data. With LogY a YMin <= 0 means the automatic floor.
	YMin, YMax float64
}

// Kind selects how Panels draws each spec.
type Kind int

const (
	// KindLines draws each series as a line (see Lines).
	KindLines Kind = iota
	// KindStacked stacks the series as areas (see Stacked).
	KindStacked
	// KindPercentiles draws latency distributions on a nines axis (see Percentiles).
	KindPercentiles
)

// String returns "lines", "stacked" or "percentiles".
func (k Kind) String() string {
	switch k {
	case KindLines:
		return "lines"
	case KindStacked:
		return "stacked"
	case KindPercentiles:
		return "percentiles"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Image size and resolution. Panels widens the image to PanelWidthPx per panel when that is
// wider than DefaultWidthPx.
const (
	DefaultWidthPx  = 1200
	DefaultHeightPx = 600
	PanelWidthPx    = 650
	DPI             = 96
)

// Errors returned by the drawing calls; check them with errors.Is.
var (
	// ErrBadSeries: a series has X and Y of different lengths.
	ErrBadSeries = errors.New("series X and Y differ in length")
	// ErrNoPanels: Panels was given no specs.
	ErrNoPanels = errors.New("no panels to draw")
	// ErrBadKind: Panels was given an unknown Kind.
	ErrBadKind = errors.New("unknown chart kind")
	// ErrBadPath: the output path is empty.
	ErrBadPath = errors.New("empty output path")
	// ErrDraw: the plotting library failed while drawing (a bug in this package).
	ErrDraw = errors.New("drawing failed")
	// ErrRagged: Grid was given rows of different lengths.
	ErrRagged = errors.New("grid rows differ in length")
	// ErrBadDensity: a Density's counts do not match its edges.
	ErrBadDensity = errors.New("density counts do not match its edges")
)

// Lines draws each series of s as a line over time and writes path+".png" and path+".svg",
// creating parent folders. It blocks until both files are written. On error no file at either
// path has been replaced, except that a failure writing the SVG leaves the new PNG in place.
func Lines(path string, s Spec) error {
	return single(path, s, KindLines)
}

// Stacked draws s's series as areas stacked bottom-up in order, for outcomes over time; series
// are aligned on the union of their X values, a missing or NaN value counting as 0. It writes
// path+".png" and path+".svg" like Lines.
func Stacked(path string, s Spec) error {
	return single(path, s, KindStacked)
}

// Percentiles draws latency distributions: X holds percentiles in [0, 100), drawn on a nines axis
// (x = -log10(1 - p/100), ticks at 50, 90, 99, 99.9, 99.99) so the tail gets as much room as the
// body; Y is drawn on a log scale. Points at p >= 100 (the maximum) cannot be placed on that axis
// and are skipped. It writes path+".png" and path+".svg" like Lines.
func Percentiles(path string, s Spec) error {
	return single(path, s, KindPercentiles)
}

// Panels draws specs side by side under one title, all of the given kind, sharing one X and one
// Y range (the union of the data, or of the fixed ranges when any spec fixes one) and one legend,
// so configurations compare on the same axes. It writes path+".png" and path+".svg" like Lines;
// the image is PanelWidthPx wide per panel, at least DefaultWidthPx.
func Panels(path, title string, specs []Spec, kind Kind) error {
	if len(specs) == 0 {
		return fmt.Errorf("chart %s: %w", path, ErrNoPanels)
	}
	w := max(DefaultWidthPx, PanelWidthPx*len(specs))
	return drawFigure(path, title, specs, kind, w, DefaultHeightPx)
}

// Grid draws rows of panels under one title, all of the given kind: every panel shares one X
// range, and the panels of a row share one Y range (every panel shares one when shareY). Rows
// must have the same number of panels (ErrRagged). Series of the same name share a colour and
// one legend entry across the grid. It writes path+".png" and path+".svg" like Lines; the image
// is PanelWidthPx wide per column (at least DefaultWidthPx) and DefaultHeightPx high for one row,
// GridRowPx more per further row.
func Grid(path, title string, rows [][]Spec, kind Kind, shareY bool) error {
	if path == "" {
		return ErrBadPath
	}
	w, h, err := gridSize(rows)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	fig, err := buildGrid(title, rows, kind, shareY)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := render(path, w, h, fig); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}

// GridSVG draws what Grid draws as SVG only, to w, without embedding the fonts: for a page that
// inlines many figures (report.html), where each embedded font would add about 550 KB. Its text
// names the font family Liberation Sans, metric-compatible with Arial and Helvetica, which the
// page falls back to.
func GridSVG(w io.Writer, title string, rows [][]Spec, kind Kind, shareY bool) error {
	wPx, hPx, err := gridSize(rows)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	fig, err := buildGrid(title, rows, kind, shareY)
	if err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	if err := renderSVG(w, wPx, hPx, fig, false); err != nil {
		return fmt.Errorf("chart: %w", err)
	}
	return nil
}

// gridSize is the size in pixels of a grid of rows: PanelWidthPx per column (at least
// DefaultWidthPx), DefaultHeightPx for one row and GridRowPx for each further one.
func gridSize(rows [][]Spec) (w, h int, err error) {
	if len(rows) == 0 || len(rows[0]) == 0 {
		return 0, 0, ErrNoPanels
	}
	for i, r := range rows {
		if len(r) != len(rows[0]) {
			return 0, 0, fmt.Errorf("row %d has %d panels, row 0 %d: %w", i, len(r), len(rows[0]), ErrRagged)
		}
	}
	w = max(DefaultWidthPx, PanelWidthPx*len(rows[0]))
	if len(rows) == 1 && len(rows[0]) == 1 {
		w = DefaultWidthPx
	}
	return w, DefaultHeightPx + GridRowPx*(len(rows)-1), nil
}

// GridRowPx is the height Grid adds per row after the first.
const GridRowPx = 380

func single(path string, s Spec, kind Kind) error {
	title := s.Title
	s.Title = ""
	return drawFigure(path, title, []Spec{s}, kind, DefaultWidthPx, DefaultHeightPx)
}

func drawFigure(path, title string, specs []Spec, kind Kind, wPx, hPx int) error {
	if path == "" {
		return ErrBadPath
	}
	fig, err := buildGrid(title, [][]Spec{specs}, kind, false)
	if err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	if err := render(path, wPx, hPx, fig); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}

// xy is one finite point.
type xy struct{ x, y float64 }

// prepared is one spec's data, cleaned and transformed, with its extents.
type prepared struct {
	spec   Spec
	lines  []preparedLine // lines, or HLines with points
	hlines []preparedLine // reference lines
	bands  []band         // stacked areas
	cells  []cell         // density cells with a count
	ext    extent
}

// cell is one non-empty cell of a Density.
type cell struct{ x0, x1, y0, y1, n float64 }

// hasData reports whether the spec has any point to draw (reference lines do not count).
func (pr prepared) hasData() bool {
	for _, l := range pr.lines {
		if len(l.segs) > 0 {
			return true
		}
	}
	for _, b := range pr.bands {
		if len(b.xs) > 0 {
			return true
		}
	}
	return len(pr.cells) > 0
}

type preparedLine struct {
	name  string
	segs  [][]xy  // runs of finite points; a line breaks between runs
	level float64 // for a horizontal reference line (segs empty): its Y
	horiz bool
}

type band struct {
	name       string
	xs, lo, hi []float64
}

// extent is a data bounding box; the zero of each bound is ±Inf until a value is seen.
type extent struct {
	xmin, xmax, ymin, ymax float64
	minPos                 float64 // smallest positive Y, +Inf if none
}

func newExtent() extent {
	inf := math.Inf(1)
	return extent{xmin: inf, xmax: -inf, ymin: inf, ymax: -inf, minPos: inf}
}

func (e *extent) addX(x float64) {
	e.xmin, e.xmax = math.Min(e.xmin, x), math.Max(e.xmax, x)
}

func (e *extent) addY(y float64) {
	e.ymin, e.ymax = math.Min(e.ymin, y), math.Max(e.ymax, y)
	if y > 0 {
		e.minPos = math.Min(e.minPos, y)
	}
}

func (e *extent) union(o extent) {
	e.xmin, e.xmax = math.Min(e.xmin, o.xmin), math.Max(e.xmax, o.xmax)
	e.ymin, e.ymax = math.Min(e.ymin, o.ymin), math.Max(e.ymax, o.ymax)
	e.minPos = math.Min(e.minPos, o.minPos)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// nines maps a percentile to the nines axis: 0 -> 0, 90 -> 1, 99 -> 2, 99.9 -> 3.
func nines(p float64) float64 { return -math.Log10(1 - p/100) }

// prepare checks and cleans one spec's data for kind.
func prepare(s Spec, kind Kind) (prepared, error) {
	pr := prepared{spec: s, ext: newExtent()}
	for _, sr := range s.Series {
		if len(sr.X) != len(sr.Y) {
			return pr, fmt.Errorf("series %q has %d X and %d Y: %w", sr.Name, len(sr.X), len(sr.Y), ErrBadSeries)
		}
	}
	for _, sr := range s.HLines {
		if len(sr.X) != 0 && len(sr.X) != len(sr.Y) {
			return pr, fmt.Errorf("reference line %q has %d X and %d Y: %w", sr.Name, len(sr.X), len(sr.Y), ErrBadSeries)
		}
	}
	tx := func(x float64) (float64, bool) { return x, finite(x) }
	if kind == KindPercentiles {
		tx = func(p float64) (float64, bool) {
			if !finite(p) || p < 0 || p >= 100 {
				return 0, false
			}
			return nines(p), true
		}
	}
	if d := s.Density; d != nil {
		if len(d.XEdges) < 2 || len(d.YEdges) < 2 || len(d.Counts) != len(d.XEdges)-1 {
			return pr, fmt.Errorf("%d columns of counts for %d X edges: %w", len(d.Counts), len(d.XEdges), ErrBadDensity)
		}
		for i, col := range d.Counts {
			if len(col) != len(d.YEdges)-1 {
				return pr, fmt.Errorf("column %d has %d counts for %d Y edges: %w", i, len(col), len(d.YEdges), ErrBadDensity)
			}
			for j, n := range col {
				x0, x1, y0, y1 := d.XEdges[i], d.XEdges[i+1], d.YEdges[j], d.YEdges[j+1]
				if !(n > 0) || !finite(x0) || !finite(x1) || !finite(y0) || !finite(y1) {
					continue
				}
				pr.cells = append(pr.cells, cell{x0, x1, y0, y1, n})
				pr.ext.addX(x0)
				pr.ext.addX(x1)
				pr.ext.addY(y0)
				pr.ext.addY(y1)
			}
		}
	}
	if kind == KindStacked {
		pr.bands = stack(s.Series, &pr.ext)
	} else {
		for _, sr := range s.Series {
			pr.lines = append(pr.lines, segments(sr, tx, &pr.ext))
		}
	}
	for _, sr := range s.HLines {
		if len(sr.X) == 0 {
			l := preparedLine{name: sr.Name, horiz: true, level: math.NaN()}
			for _, y := range sr.Y {
				if finite(y) {
					l.level = y
					pr.ext.addY(y)
					break
				}
			}
			pr.hlines = append(pr.hlines, l)
			continue
		}
		pr.hlines = append(pr.hlines, segments(sr, tx, &pr.ext))
	}
	if kind != KindPercentiles {
		for _, w := range s.Windows {
			if finite(w.Start) && finite(w.End) {
				pr.ext.addX(w.Start)
				pr.ext.addX(w.End)
			}
		}
	}
	return pr, nil
}

// segments splits a series into runs of finite points, transforming X with tx.
func segments(sr Series, tx func(float64) (float64, bool), ext *extent) preparedLine {
	l := preparedLine{name: sr.Name}
	var cur []xy
	for i := range sr.X {
		x, ok := tx(sr.X[i])
		y := sr.Y[i]
		if !ok || !finite(y) {
			if len(cur) > 0 {
				l.segs = append(l.segs, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, xy{x, y})
		ext.addX(x)
		ext.addY(y)
	}
	if len(cur) > 0 {
		l.segs = append(l.segs, cur)
	}
	return l
}

// stack returns one band per series, bottom first. Series that all share the same X (a step
// line, whose X repeats at each bucket edge, or NaN breaks between runs) are stacked point by
// point, and a point where any series is NaN breaks every band there; otherwise the series are
// aligned on the union of their finite X values, a missing or non-finite Y counting as 0.
func stack(series []Series, ext *extent) []band {
	if sameX(series) {
		return stackPointwise(series, ext)
	}
	seen := map[float64]bool{}
	var xs []float64
	for _, sr := range series {
		for _, x := range sr.X {
			if finite(x) && !seen[x] {
				seen[x] = true
				xs = append(xs, x)
			}
		}
	}
	sort.Float64s(xs)
	index := make(map[float64]int, len(xs))
	for i, x := range xs {
		index[x] = i
		ext.addX(x)
	}
	base := make([]float64, len(xs))
	bands := make([]band, 0, len(series))
	for _, sr := range series {
		vals := make([]float64, len(xs))
		for i, x := range sr.X {
			if j, ok := index[x]; ok && finite(sr.Y[i]) {
				vals[j] = sr.Y[i]
			}
		}
		b := band{name: sr.Name, xs: xs, lo: append([]float64(nil), base...), hi: make([]float64, len(xs))}
		for j := range xs {
			b.hi[j] = base[j] + vals[j]
			base[j] = b.hi[j]
			ext.addY(b.lo[j])
			ext.addY(b.hi[j])
		}
		bands = append(bands, b)
	}
	return bands
}

// sameX reports whether at least two series share one X (NaN matching NaN) that repeats a value
// or holds a NaN: the shape of step lines, which the union of X would flatten.
func sameX(series []Series) bool {
	if len(series) == 0 || len(series[0].X) == 0 {
		return false
	}
	x0 := series[0].X
	for _, sr := range series[1:] {
		if len(sr.X) != len(x0) {
			return false
		}
		for i, x := range sr.X {
			if x != x0[i] && !(math.IsNaN(x) && math.IsNaN(x0[i])) {
				return false
			}
		}
	}
	for i, x := range x0 {
		if math.IsNaN(x) || (i > 0 && x == x0[i-1]) {
			return true
		}
	}
	return false
}

// stackPointwise stacks series of one shared X point by point; a point where X or any Y is not
// finite is NaN in every band (a gap).
func stackPointwise(series []Series, ext *extent) []band {
	xs := series[0].X
	gap := make([]bool, len(xs))
	for i, x := range xs {
		gap[i] = !finite(x)
		for _, sr := range series {
			gap[i] = gap[i] || !finite(sr.Y[i])
		}
		if !gap[i] {
			ext.addX(x)
		}
	}
	base := make([]float64, len(xs))
	bands := make([]band, 0, len(series))
	for _, sr := range series {
		b := band{name: sr.Name, xs: xs, lo: make([]float64, len(xs)), hi: make([]float64, len(xs))}
		for i := range xs {
			if gap[i] {
				b.lo[i], b.hi[i] = math.NaN(), math.NaN()
				continue
			}
			b.lo[i] = base[i]
			b.hi[i] = base[i] + sr.Y[i]
			base[i] = b.hi[i]
			ext.addY(b.lo[i])
			ext.addY(b.hi[i])
		}
		bands = append(bands, b)
	}
	return bands
}
