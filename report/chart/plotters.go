package chart

import (
	"image/color"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// floorY returns y, or the bottom of a log axis for y <= 0 (a log scale cannot place it).
func floorY(plt *plot.Plot, logY bool, y float64) float64 {
	if logY && y <= 0 {
		return plt.Y.Min
	}
	return y
}

// linePlot draws a series as lines through its runs of points; a run of one point is a dot.
type linePlot struct {
	segs  [][]xy
	style draw.LineStyle
	logY  bool
}

func (l *linePlot) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, seg := range l.segs {
		pts := make([]vg.Point, len(seg))
		for i, p := range seg {
			pts[i] = vg.Point{X: trX(p.x), Y: trY(floorY(plt, l.logY, p.y))}
		}
		if len(pts) == 1 {
			if c.Contains(pts[0]) {
				c.DrawGlyph(draw.GlyphStyle{Color: l.style.Color, Radius: l.style.Width * 1.6, Shape: draw.CircleGlyph{}}, pts[0])
			}
			continue
		}
		c.StrokeLines(l.style, c.ClipLinesXY(pts)...)
	}
}

func (l *linePlot) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

// levelLine draws a horizontal reference line across the whole data area.
type levelLine struct {
	level float64
	style draw.LineStyle
	logY  bool
}

func (l *levelLine) Plot(c draw.Canvas, plt *plot.Plot) {
	_, trY := plt.Transforms(&c)
	y := trY(floorY(plt, l.logY, l.level))
	if !c.ContainsY(y) {
		return
	}
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

func (l *levelLine) Thumbnail(c *draw.Canvas) {
	y := c.Center().Y
	c.StrokeLine2(l.style, c.Min.X, y, c.Max.X, y)
}

// bandPlot fills the area between two curves: one layer of a stacked chart.
type bandPlot struct {
	b     band
	fill  color.Color
	edge  draw.LineStyle
	thumb color.Color
}

func (b *bandPlot) Plot(c draw.Canvas, plt *plot.Plot) {
	// Draw each run of finite points (NaN points are gaps) as its own area.
	start := -1
	for i := 0; i <= len(b.b.xs); i++ {
		ok := i < len(b.b.xs) && finite(b.b.xs[i]) && finite(b.b.hi[i]) && finite(b.b.lo[i])
		switch {
		case ok && start < 0:
			start = i
		case !ok && start >= 0:
			b.plotRun(c, plt, start, i)
			start = -1
		}
	}
}

// plotRun fills the band's points [from, to).
func (b *bandPlot) plotRun(c draw.Canvas, plt *plot.Plot, from, to int) {
	n := to - from
	trX, trY := plt.Transforms(&c)
	if n == 1 {
		// One time bucket: a bar as wide as a few points, so the value is still visible.
		x := trX(b.b.xs[from])
		w := vg.Points(4)
		pts := []vg.Point{{X: x - w, Y: trY(b.b.lo[from])}, {X: x + w, Y: trY(b.b.lo[from])}, {X: x + w, Y: trY(b.b.hi[from])}, {X: x - w, Y: trY(b.b.hi[from])}}
		c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
		return
	}
	pts := make([]vg.Point, 0, 2*n)
	top := make([]vg.Point, 0, n)
	for i := from; i < to; i++ {
		p := vg.Point{X: trX(b.b.xs[i]), Y: trY(b.b.hi[i])}
		pts = append(pts, p)
		top = append(top, p)
	}
	for i := to - 1; i >= from; i-- {
		pts = append(pts, vg.Point{X: trX(b.b.xs[i]), Y: trY(b.b.lo[i])})
	}
	c.FillPolygon(b.fill, c.ClipPolygonXY(pts))
	c.StrokeLines(b.edge, c.ClipLinesXY(top)...)
}

func (b *bandPlot) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(b.thumb, []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	})
}

// windowShade shades fault windows behind the data.
type windowShade struct{ windows []Window }

func (w *windowShade) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	for _, win := range w.windows {
		x0, x1, ok := windowSpan(c, trX, win)
		if !ok || win.Plain {
			continue
		}
		c.FillPolygon(windowFill, []vg.Point{
			{X: x0, Y: c.Min.Y}, {X: x1, Y: c.Min.Y}, {X: x1, Y: c.Max.Y}, {X: x0, Y: c.Max.Y},
		})
	}
}

// windowLabels marks each window's edges and writes its label at the top of its span, over the
// data, so both stay visible above opaque stacked areas; the label sits on a light backing so
// lines crossing it do not make it unreadable. A name wider than its window is drawn as the
// window's Short when it has one (and recorded for the figure's key); any other label line wider
// than its window is cut short with an ellipsis (a line that cannot keep one letter is dropped),
// so labels never run into their neighbours and always fit the headroom ranges reserves for them.
type windowLabels struct {
	windows []Window
	style   text.Style
	abbrev  *abbreviations // where a window drawn by its Short is recorded for the key
}

func (w *windowLabels) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, _ := plt.Transforms(&c)
	pad := vg.Points(3)
	edge := draw.LineStyle{Color: windowOverlayEdge, Width: vg.Points(1), Dashes: []vg.Length{vg.Points(4), vg.Points(3)}}
	for _, win := range w.windows {
		x0, x1, ok := windowSpan(c, trX, win)
		if !ok {
			continue
		}
		for _, x := range []vg.Length{x0, x1} {
			if x > c.Min.X && x < c.Max.X {
				c.StrokeLine2(edge, x, c.Min.Y, x, c.Max.Y)
			}
		}
		var lines []string
		room := x1 - x0 - 2*pad
		for i, l := range strings.Split(win.Label, "\n") {
			if i == 0 && win.Short != "" && w.style.Width(l) > room && w.style.Width(win.Short) <= room {
				lines = append(lines, win.Short) // the name does not fit: its abbreviation, explained in the key
				if w.abbrev != nil {
					w.abbrev.add(win.Short, l)
				}
				continue
			}
			if l = fitText(w.style, l, room); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) == 0 {
			continue
		}
		label := strings.Join(lines, "\n")
		r := w.style.Rectangle(label)
		tw, th := r.Size().X, r.Size().Y
		x := x0 + pad
		top := c.Max.Y - pad
		c.FillPolygon(labelBacking, []vg.Point{
			{X: x - pad/2, Y: top - th - pad/2}, {X: x + tw + pad/2, Y: top - th - pad/2},
			{X: x + tw + pad/2, Y: top + pad/2}, {X: x - pad/2, Y: top + pad/2},
		})
		c.FillText(w.style, vg.Point{X: x, Y: top}, label)
	}
}

// fitText returns s, or its longest prefix that fits width with an ellipsis, or "" when not even
// one letter does.
func fitText(st text.Style, s string, width vg.Length) string {
	if st.Width(s) <= width {
		return s
	}
	r := []rune(s)
	for n := len(r) - 1; n >= 1; n-- {
		t := strings.TrimRight(string(r[:n]), " ") + "…"
		if st.Width(t) <= width {
			return t
		}
	}
	return ""
}

// windowSpan returns a window's extent on the canvas, clipped to it; ok is false when the window
// is invalid or entirely outside.
func windowSpan(c draw.Canvas, trX func(float64) vg.Length, win Window) (x0, x1 vg.Length, ok bool) {
	if !finite(win.Start) || !finite(win.End) {
		return 0, 0, false
	}
	start, end := win.Start, win.End
	if start > end {
		start, end = end, start
	}
	x0, x1 = trX(start), trX(end)
	if x1 < c.Min.X || x0 > c.Max.X {
		return 0, 0, false
	}
	return max(x0, c.Min.X), min(x1, c.Max.X), true
}

// noData writes text ("no data" when empty) in the middle of an empty panel, so it does not
// read as all zeros.
type noData struct {
	text  string
	style text.Style
}

func (n noData) Plot(c draw.Canvas, _ *plot.Plot) {
	t := n.text
	if t == "" {
		t = "no data"
	}
	c.FillText(n.style, c.Center(), t)
}

// densityPlot draws the non-empty cells of a Density, coloured by count on a log scale from 1
// to top.
type densityPlot struct {
	cells []cell
	top   float64
	logY  bool
}

func (d *densityPlot) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	for _, cl := range d.cells {
		x0, x1 := trX(cl.x0), trX(cl.x1)
		y0, y1 := trY(floorY(plt, d.logY, cl.y0)), trY(floorY(plt, d.logY, cl.y1))
		pts := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
		c.FillPolygon(densityColor(cl.n, d.top), c.ClipPolygonXY(pts))
	}
}

// densityColor maps a count n >= 1 to viridis on a log scale from 1 to top.
func densityColor(n, top float64) color.NRGBA {
	t := 1.0
	if top > 1 {
		t = math.Log(math.Max(n, 1)) / math.Log(top)
	}
	return ramp(viridis, t)
}

// swatch is a legend entry filled with one colour: a step of a density's colour scale.
type swatch struct{ fill color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	c.FillPolygon(s.fill, []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	})
}
