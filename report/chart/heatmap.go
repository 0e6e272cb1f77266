package chart

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Scheme is the colour scheme of a heatmap.
type Scheme int

const (
	// SchemeSequential maps low to high values from dark purple to yellow (viridis: perceptually
	// uniform, readable with the common forms of colour blindness and in greyscale).
	SchemeSequential Scheme = iota
	// SchemeDiverging maps values below Center to orange, Center to near-white and values above
	// it to purple (ColorBrewer PuOr, colour-blind safe), for differences and ratios.
	SchemeDiverging
)

// HeatmapSpec describes one heatmap: a grid of cells coloured by value, each annotated with its
// value, with a colour bar to its right.
type HeatmapSpec struct {
	// Title is drawn above the heatmap (for Heatmap, above the figure). XLabel and YLabel name the
	// axes.
	Title, XLabel, YLabel string
	// Columns and Rows label the cells along X and Y; row 0 is drawn at the bottom.
	Columns, Rows []string
	// Values holds one row of len(Columns) values per entry of Rows: Values[row][col]. A NaN or
	// ±Inf value is a cell without data, drawn light grey and marked "n/a".
	Values [][]float64
	// Marked, when not nil, has the shape of Values; a true cell is hatched (such as the result of
	// an invalid run), its value still shown. MarkedLabel explains the hatching below the figure.
	Marked      [][]bool
	MarkedLabel string
	// Unit labels the colour bar, e.g. "p99 (ms)".
	Unit string
	// Log maps values to colours on a log scale; values <= 0 take the colour of the smallest
	// positive value (or of the bottom of the range). With SchemeDiverging, Center must then be > 0
	// (0 means 1) and the scale is symmetric around it in log space.
	Log bool
	// Scheme is SchemeSequential (the zero value) or SchemeDiverging.
	Scheme Scheme
	// Reverse swaps the ends of the colour scheme, so that the same colour means "bad" in every
	// heatmap of a figure (dark for a high latency and for a low success rate, say).
	Reverse bool
	// Center is the value drawn in the middle colour of SchemeDiverging (0 means 0, or 1 with Log).
	Center float64
	// Min and Max fix the colour range when Max > Min; otherwise it is the range of the data
	// (for SchemeDiverging, symmetric around Center).
	Min, Max float64
	// Format writes a cell's value; nil means 3 significant digits.
	Format func(float64) string
	// Scale groups panels of HeatmapPanels: panels with the same non-empty Scale share one colour
	// range (the union of their data, or of their fixed ranges) so their colours compare.
	Scale string
}

// Errors of the heatmap calls, besides ErrBadPath and ErrDraw; check them with errors.Is.
var (
	// ErrBadGrid: Values (or Marked) does not have len(Rows) rows of len(Columns) values.
	ErrBadGrid = errors.New("heatmap values do not match its rows and columns")
)

// Heatmap sizes: the image is HeatmapPanelPx wide per panel (at least DefaultWidthPx) and
// HeatmapHeightPx high.
const (
	HeatmapPanelPx  = 620
	HeatmapHeightPx = 560
)

// Heatmap draws spec as one heatmap with its colour bar and writes path+".png" and path+".svg",
// creating parent folders. It blocks until both files are written. On error no file at either
// path has been replaced, except that a failure writing the SVG leaves the new PNG in place.
func Heatmap(path string, spec HeatmapSpec) error {
	title := spec.Title
	spec.Title = ""
	return HeatmapPanels(path, title, []HeatmapSpec{spec})
}

// HeatmapPanels draws specs side by side under one title, each with its own colour bar; panels
// with the same non-empty Scale share one colour range. It writes path+".png" and path+".svg"
// like Heatmap; the image is HeatmapPanelPx wide per panel, at least DefaultWidthPx.
func HeatmapPanels(path, title string, specs []HeatmapSpec) error {
	if path == "" {
		return ErrBadPath
	}
	if len(specs) == 0 {
		return fmt.Errorf("chart %s: %w", path, ErrNoPanels)
	}
	hs := make([]*heat, len(specs))
	for i, s := range specs {
		h, err := newHeat(s)
		if err != nil {
			if len(specs) > 1 {
				return fmt.Errorf("chart %s: panel %d: %w", path, i, err)
			}
			return fmt.Errorf("chart %s: %w", path, err)
		}
		hs[i] = h
	}
	shareScales(hs)
	w := max(DefaultWidthPx, HeatmapPanelPx*len(specs))
	if err := render(path, w, HeatmapHeightPx, &heatFigure{title: title, panels: hs}); err != nil {
		return fmt.Errorf("chart %s: %w", path, err)
	}
	return nil
}

// heat is one prepared heatmap: its spec and colour range.
type heat struct {
	spec   HeatmapSpec
	lo, hi float64 // colour range; for Log, both > 0
	center float64
	fixed  bool
}

func newHeat(s HeatmapSpec) (*heat, error) {
	if len(s.Values) != len(s.Rows) {
		return nil, fmt.Errorf("%d rows of values for %d row labels: %w", len(s.Values), len(s.Rows), ErrBadGrid)
	}
	for i, row := range s.Values {
		if len(row) != len(s.Columns) {
			return nil, fmt.Errorf("row %d has %d values for %d columns: %w", i, len(row), len(s.Columns), ErrBadGrid)
		}
	}
	if s.Marked != nil {
		if len(s.Marked) != len(s.Rows) {
			return nil, fmt.Errorf("marked has %d rows for %d: %w", len(s.Marked), len(s.Rows), ErrBadGrid)
		}
		for i, row := range s.Marked {
			if len(row) != len(s.Columns) {
				return nil, fmt.Errorf("marked row %d has %d cells for %d columns: %w", i, len(row), len(s.Columns), ErrBadGrid)
			}
		}
	}
	h := &heat{spec: s, center: s.Center}
	if s.Log && h.center <= 0 {
		h.center = 1
	}
	if s.Max > s.Min && (!s.Log || s.Min > 0) {
		h.lo, h.hi, h.fixed = s.Min, s.Max, true
		return h, nil
	}
	h.lo, h.hi = h.dataRange()
	return h, nil
}

// dataRange returns the colour range the data needs.
func (h *heat) dataRange() (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, row := range h.spec.Values {
		for _, v := range row {
			if !finite(v) || (h.spec.Log && v <= 0) {
				continue
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return h.normalise(lo, hi)
}

// normalise makes [lo, hi] a usable range: not empty, positive for Log, symmetric around the
// centre for SchemeDiverging.
func (h *heat) normalise(lo, hi float64) (float64, float64) {
	if !finite(lo) || !finite(hi) { // no data
		if h.spec.Log {
			lo, hi = 1, 10
		} else {
			lo, hi = 0, 1
		}
	}
	if h.spec.Scheme == SchemeDiverging {
		if h.spec.Log {
			half := math.Max(math.Abs(math.Log10(lo/h.center)), math.Abs(math.Log10(hi/h.center)))
			if !(half > 0) {
				half = 1
			}
			return h.center / math.Pow(10, half), h.center * math.Pow(10, half)
		}
		half := math.Max(math.Abs(lo-h.center), math.Abs(hi-h.center))
		if !(half > 0) {
			half = 1
		}
		return h.center - half, h.center + half
	}
	if !(hi > lo) {
		if h.spec.Log {
			lo, hi = lo/2, hi*2
		} else {
			lo, hi = lo-0.5, hi+0.5
		}
	}
	if h.spec.Log {
		// Widen to the 1-2-5 values around the data, so both ends of the colour bar are labelled.
		lo, hi = nice125(lo, false), nice125(hi, true)
	}
	return lo, hi
}

// nice125 returns the nearest value of the form {1, 2, 5} x 10^k at or above v (up) or at or
// below it; v must be > 0.
func nice125(v float64, up bool) float64 {
	d := math.Floor(math.Log10(v))
	best := math.NaN()
	for k := d - 1; k <= d+1; k++ {
		for _, m := range []float64{1, 2, 5} {
			c := m * math.Pow(10, k)
			c = roundTo(c, math.Pow(10, k))
			switch {
			case up && c >= v*(1-1e-12) && !(c >= best):
				best = c
			case !up && c <= v*(1+1e-12) && !(c <= best):
				best = c
			}
		}
	}
	return best
}

// shareScales gives panels with the same Scale key the union of their ranges.
func shareScales(hs []*heat) {
	groups := map[string][]*heat{}
	for _, h := range hs {
		if h.spec.Scale != "" {
			groups[h.spec.Scale] = append(groups[h.spec.Scale], h)
		}
	}
	for _, g := range groups {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, h := range g {
			lo, hi = math.Min(lo, h.lo), math.Max(hi, h.hi)
		}
		for _, h := range g {
			h.lo, h.hi = g[0].normalise(lo, hi)
		}
	}
}

// position maps v to [0, 1] along the colour range, clamped; ok is false for a cell without data.
func (h *heat) position(v float64) (t float64, ok bool) {
	if !finite(v) {
		return 0, false
	}
	if h.spec.Log {
		if v <= 0 {
			return 0, true
		}
		t = (math.Log10(v) - math.Log10(h.lo)) / (math.Log10(h.hi) - math.Log10(h.lo))
	} else {
		t = (v - h.lo) / (h.hi - h.lo)
	}
	return math.Max(0, math.Min(1, t)), true
}

// colorAt returns the colour at position t of the scheme.
func (h *heat) colorAt(t float64) color.NRGBA {
	if h.spec.Reverse {
		t = 1 - t
	}
	if h.spec.Scheme == SchemeDiverging {
		return ramp(puOr, t)
	}
	return ramp(viridis, t)
}

// color returns the fill of a cell of value v, and false for a cell without data.
func (h *heat) color(v float64) (color.NRGBA, bool) {
	t, ok := h.position(v)
	if !ok {
		return noDataFill, false
	}
	return h.colorAt(t), true
}

func (h *heat) format(v float64) string {
	if !finite(v) {
		return "n/a"
	}
	if h.spec.Format != nil {
		return h.spec.Format(v)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// viridis, sampled at 11 even stops (matplotlib's colormap).
var viridis = []color.NRGBA{
	{0x44, 0x01, 0x54, 0xff}, {0x48, 0x24, 0x75, 0xff}, {0x41, 0x44, 0x87, 0xff},
	{0x35, 0x5f, 0x8d, 0xff}, {0x2a, 0x78, 0x8e, 0xff}, {0x21, 0x91, 0x8c, 0xff},
	{0x22, 0xa8, 0x84, 0xff}, {0x44, 0xbf, 0x70, 0xff}, {0x7a, 0xd1, 0x51, 0xff},
	{0xbd, 0xdf, 0x26, 0xff}, {0xfd, 0xe7, 0x25, 0xff},
}

// puOr is ColorBrewer's 9-class PuOr, orange at the low end and purple at the high end.
var puOr = []color.NRGBA{
	{0xb3, 0x58, 0x06, 0xff}, {0xe0, 0x82, 0x14, 0xff}, {0xfd, 0xb8, 0x63, 0xff},
	{0xfe, 0xe0, 0xb6, 0xff}, {0xf7, 0xf7, 0xf7, 0xff}, {0xd8, 0xda, 0xeb, 0xff},
	{0xb2, 0xab, 0xd2, 0xff}, {0x80, 0x73, 0xac, 0xff}, {0x54, 0x27, 0x88, 0xff},
}

var (
	noDataFill = color.NRGBA{0xd9, 0xd9, 0xd9, 0xff}
	hatchColor = color.NRGBA{0x20, 0x20, 0x20, 0xc0}
	hatchLight = color.NRGBA{0xff, 0xff, 0xff, 0xd0}
	cellEdge   = color.NRGBA{0xff, 0xff, 0xff, 0xff}
)

// ramp interpolates linearly between evenly spaced stops.
func ramp(stops []color.NRGBA, t float64) color.NRGBA {
	t = math.Max(0, math.Min(1, t))
	f := t * float64(len(stops)-1)
	i := min(int(f), len(stops)-2)
	u := f - float64(i)
	a, b := stops[i], stops[i+1]
	mix := func(x, y uint8) uint8 { return uint8(math.Round(float64(x) + u*(float64(y)-float64(x)))) }
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// textOn returns black or white, whichever reads better on fill.
func textOn(fill color.NRGBA) color.Color {
	l := 0.299*float64(fill.R) + 0.587*float64(fill.G) + 0.114*float64(fill.B)
	if l < 140 {
		return color.White
	}
	return color.Black
}

// heatFigure lays out a title, the panels side by side, and a note below them.
type heatFigure struct {
	title  string
	panels []*heat
}

// Sizes of the parts of a heatmap figure.
var (
	cellTextSize = vg.Points(13)
	barWidth     = vg.Points(16)
	barSpace     = vg.Points(92) // bar, ticks, labels and the unit
	noteSize     = vg.Points(12)
)

func (f *heatFigure) draw(c draw.Canvas) {
	c = frame(c, f.title)
	if note := f.note(); note != "" {
		ts := textStyle(noteSize, draw.XCenter, draw.YBottom)
		c.FillText(ts, vg.Point{X: c.Center().X, Y: c.Min.Y}, note)
		c.Min.Y += ts.Rectangle(note).Size().Y + vg.Points(6)
	}
	n := len(f.panels)
	w := (c.Max.X - c.Min.X) / vg.Length(n)
	for i, h := range f.panels {
		pc := c
		pc.Min.X = c.Min.X + w*vg.Length(i)
		pc.Max.X = pc.Min.X + w
		h.draw(pc)
	}
}

// note explains hatched and empty cells, when there are any.
func (f *heatFigure) note() string {
	var marked, empty bool
	label := ""
	for _, h := range f.panels {
		for r, row := range h.spec.Values {
			for col, v := range row {
				if !finite(v) {
					empty = true
				}
				if h.spec.Marked != nil && h.spec.Marked[r][col] {
					marked = true
					if label == "" {
						label = h.spec.MarkedLabel
					}
				}
			}
		}
	}
	var parts []string
	if marked {
		if label == "" {
			label = "marked"
		}
		parts = append(parts, "hatched cells: "+label)
	}
	if empty {
		parts = append(parts, "n/a: no data")
	}
	switch len(parts) {
	case 0:
		return ""
	case 1:
		return parts[0]
	}
	return parts[0] + "; " + parts[1]
}

// draw draws one panel: the heatmap on the left of c, its colour bar on the right.
func (h *heat) draw(c draw.Canvas) {
	s := h.spec
	p := plot.New()
	p.Title.Text = s.Title
	p.Title.TextStyle = textStyle(panelSize, draw.XCenter, draw.YTop)
	p.Title.Padding = vg.Points(6)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, labelSize)
		ax.Tick.Label.Font = font.From(sans, tickSize)
		ax.Padding = vg.Points(2)
		ax.Tick.Length = 0
		ax.LineStyle.Width = 0
	}
	p.X.Label.Text, p.Y.Label.Text = s.XLabel, s.YLabel
	p.X.Min, p.X.Max = -0.5, math.Max(0.5, float64(len(s.Columns))-0.5)
	p.Y.Min, p.Y.Max = -0.5, math.Max(0.5, float64(len(s.Rows))-0.5)
	p.X.Tick.Marker = labelTicks(s.Columns)
	p.Y.Tick.Marker = labelTicks(s.Rows)
	p.Add(&cells{h: h})

	hc := c
	hc.Max.X -= barSpace
	p.Draw(hc)
	da := p.DataCanvas(hc)
	h.drawBar(c, da)
}

// labelTicks puts one label at each integer position.
type labelTicks []string

func (l labelTicks) Ticks(lo, hi float64) []plot.Tick {
	ticks := make([]plot.Tick, len(l))
	for i, s := range l {
		ticks[i] = plot.Tick{Value: float64(i), Label: s}
	}
	return ticks
}

// cells is the plotter drawing the heatmap's cells, annotations and hatching.
type cells struct{ h *heat }

func (cl *cells) Plot(c draw.Canvas, plt *plot.Plot) {
	h := cl.h
	trX, trY := plt.Transforms(&c)
	edge := draw.LineStyle{Color: cellEdge, Width: vg.Points(1.5)}
	for r, row := range h.spec.Values {
		for col, v := range row {
			rect := vg.Rectangle{
				Min: vg.Point{X: trX(float64(col) - 0.5), Y: trY(float64(r) - 0.5)},
				Max: vg.Point{X: trX(float64(col) + 0.5), Y: trY(float64(r) + 0.5)},
			}
			fill, ok := h.color(v)
			c.SetColor(fill)
			c.Fill(rect.Path())
			c.SetLineStyle(edge)
			c.Stroke(rect.Path())
			marked := h.spec.Marked != nil && h.spec.Marked[r][col]
			if marked {
				hatch(c, rect, fill)
			}
			label := h.format(v)
			ts := textStyle(cellTextSize, draw.XCenter, draw.YCenter)
			ts.Color = textOn(fill)
			if !ok {
				ts.Color = color.Black
			}
			mid := vg.Point{X: (rect.Min.X + rect.Max.X) / 2, Y: (rect.Min.Y + rect.Max.Y) / 2}
			if marked {
				// A backing keeps the value readable over the hatching.
				b := ts.Rectangle(label)
				back := vg.Rectangle{Min: mid.Add(b.Min), Max: mid.Add(b.Max)}
				back.Min.X -= vg.Points(3)
				back.Max.X += vg.Points(3)
				c.SetColor(labelBacking)
				c.Fill(back.Path())
				ts.Color = color.Black
			}
			c.FillText(ts, mid, label)
		}
	}
}

// hatch draws diagonal lines across rect, dark on a light fill and light on a dark one.
func hatch(c draw.Canvas, rect vg.Rectangle, fill color.NRGBA) {
	cc := draw.Canvas{Canvas: c.Canvas, Rectangle: rect}
	col := hatchColor
	if textOn(fill) == color.White {
		col = hatchLight
	}
	style := draw.LineStyle{Color: col, Width: vg.Points(1.4)}
	w, hgt := rect.Max.X-rect.Min.X, rect.Max.Y-rect.Min.Y
	step := vg.Points(7)
	for d := -hgt; d < w; d += step {
		pts := []vg.Point{
			{X: rect.Min.X + d, Y: rect.Min.Y},
			{X: rect.Min.X + d + hgt, Y: rect.Max.Y},
		}
		cc.StrokeLines(style, cc.ClipLinesXY(pts)...)
	}
}

// drawBar draws the colour bar right of the data area da, within c, with ticks and the unit.
func (h *heat) drawBar(c draw.Canvas, da draw.Canvas) {
	x0 := da.Max.X + vg.Points(14)
	x1 := x0 + barWidth
	y0, y1 := da.Min.Y, da.Max.Y
	if !(y1 > y0) {
		return
	}
	toY := func(t float64) vg.Length { return y0 + (y1-y0)*vg.Length(t) }
	const steps = 128
	for i := range steps {
		t0, t1 := float64(i)/steps, float64(i+1)/steps
		// Each step overlaps the next so anti-aliasing leaves no seams.
		r := vg.Rectangle{Min: vg.Point{X: x0, Y: toY(t0)}, Max: vg.Point{X: x1, Y: min(toY(t1)+vg.Points(1.5), y1)}}
		c.SetColor(h.colorAt((t0 + t1) / 2))
		c.Fill(r.Path())
	}
	frame := vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}
	c.SetLineStyle(draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)})
	c.Stroke(frame.Path())

	var ticks []plot.Tick
	if h.spec.Log {
		ticks = logTicks{}.Ticks(h.lo, h.hi)
	} else {
		ticks = linearTicks{labels: 6}.Ticks(h.lo, h.hi)
	}
	ts := textStyle(tickSize, draw.XLeft, draw.YCenter)
	tick := draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
	widest := vg.Length(0)
	for _, tk := range ticks {
		t, _ := h.position(tk.Value)
		if tk.Value < h.lo*(1-1e-9)-1e-12 || tk.Value > h.hi*(1+1e-9)+1e-12 {
			continue
		}
		y := toY(t)
		l := vg.Points(3)
		if tk.Label != "" {
			l = vg.Points(5)
		}
		c.StrokeLine2(tick, x1, y, x1+l, y)
		if tk.Label != "" {
			c.FillText(ts, vg.Point{X: x1 + vg.Points(7), Y: y}, tk.Label)
			widest = max(widest, ts.Rectangle(tk.Label).Size().X)
		}
	}
	if h.spec.Unit != "" {
		us := text.Style{
			Color: color.Black, Font: font.From(sans, labelSize), Rotation: math.Pi / 2,
			XAlign: draw.XCenter, YAlign: draw.YTop, Handler: plot.DefaultTextHandler,
		}
		// Rotated a quarter turn anticlockwise, the text's top faces left: it extends right of x.
		x := min(x1+vg.Points(10)+widest+vg.Points(4), c.Max.X-us.Height(h.spec.Unit))
		c.FillText(us, vg.Point{X: x, Y: (y0 + y1) / 2}, h.spec.Unit)
	}
}
