package chart

import (
	"bytes"
	"fmt"
	"image/color"
	pngenc "image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// figure is a title, rows of plots, and one legend below them.
type figure struct {
	title  string
	plots  [][]*plot.Plot
	legend []legendEntry
	// abbrev collects, while the panels draw, the windows drawn by their Short ("3" -> "calm")
	// for the key under the legend; shorts is set when any window has one (room is kept).
	abbrev *abbreviations
	shorts bool
}

// abbreviations are the window names a figure drew abbreviated, in the order first drawn.
type abbreviations struct {
	order []string
	names map[string]string
}

func (a *abbreviations) add(short, name string) {
	if _, ok := a.names[short]; ok {
		return
	}
	a.names[short] = name
	a.order = append(a.order, short)
}

// text is the key: "phases too narrow to name: 3 = calm, 5 = recovery".
func (a *abbreviations) text() string {
	if len(a.order) == 0 {
		return ""
	}
	var parts []string
	for _, s := range a.order {
		parts = append(parts, s+" = "+a.names[s])
	}
	return "too narrow to name: " + strings.Join(parts, ", ")
}

type legendEntry struct {
	name  string
	thumb plot.Thumbnailer
}

// axisRange is the range shared by every panel of a figure.
type axisRange struct {
	xmin, xmax, ymin, ymax float64
	logY                   bool
	xTicks, yTicks         plot.Ticker
}

// build turns specs into a figure of kind with one row of panels.
func build(title string, specs []Spec, kind Kind) (*figure, error) {
	return buildGrid(title, [][]Spec{specs}, kind, false)
}

// buildGrid turns rows of specs into a figure of kind: X shared by every panel, Y by the panels
// of a row (of the whole grid when shareY).
func buildGrid(title string, rows [][]Spec, kind Kind, shareY bool) (*figure, error) {
	if kind < KindLines || kind > KindPercentiles {
		return nil, fmt.Errorf("%w: %d", ErrBadKind, int(kind))
	}
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	prs := make([][]prepared, len(rows))
	var all []prepared
	var names []string
	fixed := map[string]color.NRGBA{} // series whose caller chose their colour
	top := 0.0                        // the largest density count of the figure
	for ri, row := range rows {
		for _, s := range row {
			pr, err := prepare(s, kind)
			if err != nil {
				if n > 1 {
					return nil, fmt.Errorf("panel %d: %w", len(all), err)
				}
				return nil, err
			}
			prs[ri] = append(prs[ri], pr)
			all = append(all, pr)
			for _, sr := range append(slices.Clone(s.Series), s.HLines...) {
				names = append(names, sr.Name)
				if sr.Color != nil {
					fixed[sr.Name] = color.NRGBAModel.Convert(sr.Color).(color.NRGBA)
				}
			}
			for _, c := range pr.cells {
				top = math.Max(top, c.n)
			}
		}
	}
	pal := newPalette(names, fixed)
	rowRange := make([]axisRange, len(rows))
	whole := ranges(all, kind)
	for ri := range rows {
		rowRange[ri] = whole
		if !shareY {
			r := ranges(prs[ri], kind)
			r.xmin, r.xmax, r.xTicks = whole.xmin, whole.xmax, whole.xTicks
			rowRange[ri] = r
		}
	}

	fig := &figure{title: title, abbrev: &abbreviations{names: map[string]string{}}}
	// The legend lists data first, reference lines last, each name once across panels.
	seen := map[string]bool{}
	var refs []legendEntry
	add := func(to *[]legendEntry, name string, th plot.Thumbnailer) {
		if name == "" || seen[name] {
			return
		}
		seen[name] = true
		*to = append(*to, legendEntry{name: name, thumb: th})
	}
	addLegend := func(name string, th plot.Thumbnailer) { add(&fig.legend, name, th) }
	addRef := func(name string, th plot.Thumbnailer) { add(&refs, name, th) }
	var unit string
	for ri, row := range prs {
		r := rowRange[ri]
		var plots []*plot.Plot
		for _, pr := range row {
			p := newPlot(pr.spec, kind, r)
			if len(pr.spec.Windows) > 0 && kind != KindPercentiles {
				p.Add(&windowShade{windows: pr.spec.Windows})
			}
			if len(pr.cells) > 0 {
				p.Add(&densityPlot{cells: pr.cells, top: top, logY: r.logY})
				if unit == "" {
					unit = pr.spec.Density.Unit
				}
			}
			for _, b := range pr.bands {
				c := pal.color(b.name)
				bp := &bandPlot{
					b:     b,
					fill:  withAlpha(c, bandAlpha),
					thumb: withAlpha(c, bandAlpha),
					edge:  draw.LineStyle{Color: bandEdgeColor, Width: vg.Points(0.6)},
				}
				p.Add(bp)
				addLegend(b.name, bp)
			}
			// Reference lines go over stacked areas (which are opaque) but under lines: where a
			// series reaches its capacity the series stays visible, and the dashes show elsewhere.
			for _, l := range pr.hlines {
				style := draw.LineStyle{Color: pal.color(l.name), Width: refLineWidth, Dashes: refDashes}
				if l.horiz {
					ll := &levelLine{level: l.level, logY: r.logY, style: style}
					if finite(l.level) {
						p.Add(ll)
					}
					addRef(l.name, ll)
					continue
				}
				lp := &linePlot{segs: l.segs, logY: r.logY, style: style}
				p.Add(lp)
				addRef(l.name, lp)
			}
			dashes := overlapDashes(pr.lines)
			for i, l := range pr.lines {
				lp := &linePlot{segs: l.segs, logY: r.logY, style: draw.LineStyle{
					Color: pal.color(l.name), Width: widthFor(i, len(pr.lines)), Dashes: dashes[i],
				}}
				p.Add(lp)
				addLegend(l.name, lp)
			}
			if !pr.hasData() {
				p.Add(noData{text: pr.spec.Empty, style: textStyle(labelSize, draw.XCenter, draw.YCenter)})
			}
			if len(pr.spec.Windows) > 0 && kind != KindPercentiles {
				p.Add(&windowLabels{windows: pr.spec.Windows, style: textStyle(windowSize, draw.XLeft, draw.YTop), abbrev: fig.abbrev})
				for _, w := range pr.spec.Windows {
					fig.shorts = fig.shorts || w.Short != ""
				}
			}
			plots = append(plots, p)
		}
		fig.plots = append(fig.plots, plots)
	}
	if top > 0 {
		// The density's colour scale: 1, then each power of ten, then the largest count.
		if unit == "" {
			unit = "count per cell"
		}
		steps := []float64{1}
		for v := 10.0; v < top; v *= 10 {
			steps = append(steps, v)
		}
		if top > 1 {
			steps = append(steps, top)
		}
		for i, v := range steps {
			name := formatNumber(v)
			if i == len(steps)-1 {
				name += " " + unit
			}
			addLegend(name, swatch{fill: densityColor(v, top)})
		}
	}
	fig.legend = append(fig.legend, refs...)
	return fig, nil
}

// overlapPatterns are the dash patterns given, in turn, to lines drawn over an earlier line.
var overlapPatterns = [][]vg.Length{
	{vg.Points(8), vg.Points(5)},
	{vg.Points(2), vg.Points(3)},
	{vg.Points(10), vg.Points(3), vg.Points(2), vg.Points(3)},
}

// overlapDashes returns the dash pattern of each line: its name's (dashesFor), or, for a line
// without one that runs over an earlier line of the panel (more than a quarter of its points in
// common), the next of overlapPatterns, so the earlier line shows through the gaps instead of
// being hidden.
func overlapDashes(lines []preparedLine) [][]vg.Length {
	out := make([][]vg.Length, len(lines))
	pts := make([]map[xy]bool, len(lines))
	k := 0
	for i, l := range lines {
		out[i] = dashesFor(l.name)
		pts[i] = map[xy]bool{}
		for _, seg := range l.segs {
			for _, p := range seg {
				pts[i][p] = true
			}
		}
		if out[i] != nil || len(pts[i]) == 0 {
			continue
		}
		for j := range i {
			common := 0
			for p := range pts[i] {
				if pts[j][p] {
					common++
				}
			}
			if 4*common > len(pts[i]) {
				out[i] = overlapPatterns[k%len(overlapPatterns)]
				k++
				break
			}
		}
	}
	return out
}

// widthFor returns the width of line i of n: lines drawn earlier are a little wider, so a line
// that coincides with a later one still shows as an outline around it instead of vanishing.
func widthFor(i, n int) vg.Length {
	return lineWidth + widthStep*vg.Length(min(n-1-i, 3))
}

func textStyle(size vg.Length, xa draw.XAlignment, ya draw.YAlignment) text.Style {
	return text.Style{
		Color:   color.Black,
		Font:    font.From(sans, size),
		XAlign:  xa,
		YAlign:  ya,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot returns an empty plot with the figure's style, ranges and grid.
func newPlot(s Spec, kind Kind, r axisRange) *plot.Plot {
	p := plot.New()
	p.Title.Text = s.Title
	p.Title.TextStyle = textStyle(panelSize, draw.XCenter, draw.YTop)
	p.Title.Padding = vg.Points(6)

	xl, yl := s.XLabel, s.YLabel
	if xl == "" {
		xl = "time (s)"
		if kind == KindPercentiles {
			xl = "percentile (%)"
		}
	}
	if yl == "" && kind == KindPercentiles {
		yl = "latency (ms)"
	}
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, labelSize)
		ax.Tick.Label.Font = font.From(sans, tickSize)
		ax.Padding = vg.Points(2)
	}
	p.X.Label.Text, p.Y.Label.Text = xl, yl
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = r.xmin, r.xmax, r.ymin, r.ymax
	p.X.Tick.Marker, p.Y.Tick.Marker = r.xTicks, r.yTicks
	if r.logY {
		p.Y.Scale = plot.LogScale{}
	}
	grid := plotter.NewGrid()
	grid.Vertical.Color, grid.Horizontal.Color = gridColor, gridColor
	grid.Vertical.Width, grid.Horizontal.Width = vg.Points(0.6), vg.Points(0.6)
	p.Add(grid)
	return p
}

// ranges computes the axes every panel shares.
func ranges(prs []prepared, kind Kind) axisRange {
	ext := newExtent()
	var r axisRange
	var fixed bool
	var flo, fhi float64
	windows := 0 // lines of the longest window label
	for _, pr := range prs {
		ext.union(pr.ext)
		if kind != KindStacked && (pr.spec.LogY || kind == KindPercentiles) {
			r.logY = true
		}
		if pr.spec.YMax > pr.spec.YMin {
			if !fixed {
				flo, fhi = pr.spec.YMin, pr.spec.YMax
			}
			fixed = true
			flo, fhi = math.Min(flo, pr.spec.YMin), math.Max(fhi, pr.spec.YMax)
		}
		if kind != KindPercentiles {
			for _, w := range pr.spec.Windows {
				windows = max(windows, 1+strings.Count(w.Label, "\n"))
			}
		}
	}

	// X
	switch {
	case kind == KindPercentiles:
		r.xmin, r.xmax = 0, 2 // at least up to p99
		if finite(ext.xmax) {
			r.xmax = math.Max(2, math.Ceil(ext.xmax-1e-9))
		}
		r.xTicks = ninesTicks{}
	case !finite(ext.xmin):
		r.xmin, r.xmax = 0, 1
	case ext.xmin == ext.xmax:
		r.xmin, r.xmax = ext.xmin-0.5, ext.xmax+0.5
	default:
		r.xmin, r.xmax = ext.xmin, ext.xmax
	}
	if r.xTicks == nil {
		r.xTicks = linearTicks{labels: 10}
	}

	// Y. Headroom above the data keeps the top line off the frame and clear of window labels.
	head := 0.05
	if windows > 0 {
		head = 0.05 + 0.07*float64(windows)
	}
	if r.logY {
		r.yTicks = logTicks{}
		floor := 1.0
		if finite(ext.minPos) {
			// The decade below the smallest value, but at least a factor 1.5 below it, so a line
			// at the smallest value never lies on the axis itself.
			floor = math.Min(math.Pow10(int(math.Floor(math.Log10(ext.minPos)))), ext.minPos/1.5)
		}
		lo, hi := floor, ext.ymax
		if fixed {
			lo, hi = flo, fhi
			if lo <= 0 {
				lo = floor
			}
		}
		if !(hi > lo) {
			hi = lo * 10
		}
		if !fixed {
			hi *= math.Pow(hi/lo, head)
		}
		r.ymin, r.ymax = lo, hi
		return r
	}
	r.yTicks = linearTicks{labels: 7}
	if fixed {
		r.ymin, r.ymax = flo, fhi
		return r
	}
	lo, hi := 0.0, 1.0
	if finite(ext.ymin) {
		lo, hi = math.Min(0, ext.ymin), ext.ymax
	}
	if !(hi > lo) {
		hi = lo + 1
	}
	r.ymin, r.ymax = lo, hi+(hi-lo)*head
	return r
}

// linearTicks labels round values (steps of 1, 2 or 5 times a power of ten) so that there are at
// most about labels of them, with a minor tick between labels, and writes them without trailing
// zeros (0, 10, 20 rather than 0.00, 25.00, 50.00).
type linearTicks struct{ labels int }

func (t linearTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	n := max(t.labels, 2)
	raw := (hi - lo) / float64(n)
	mag := math.Pow10(int(math.Floor(math.Log10(raw))))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	var ticks []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for i := first; i*step <= hi+step*1e-9; i++ {
		v := i * step
		if math.Abs(v) < step*1e-9 {
			v = 0
		}
		// Round away float noise (0.30000000000000004) before formatting.
		v = roundTo(v, step)
		ticks = append(ticks, plot.Tick{Value: v, Label: formatNumber(v)})
		if mid := v + step/2; mid <= hi {
			ticks = append(ticks, plot.Tick{Value: mid})
		}
	}
	if first*step-step/2 >= lo {
		ticks = append(ticks, plot.Tick{Value: first*step - step/2})
	}
	return ticks
}

// roundTo rounds v to the number of decimals step needs.
func roundTo(v, step float64) float64 {
	d := max(0, -int(math.Floor(math.Log10(step))))
	p := math.Pow10(d)
	return math.Round(v*p) / p
}

// logTicks labels every decade with a plain number (0.1, 1, 10, 100, 1000) and marks 2..9 as
// minor ticks; a range of under 2.5 decades also labels 2 and 5, one of under 1.2 every multiple,
// so that a narrow range still has several labels.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) {
		return nil
	}
	first := int(math.Floor(math.Log10(lo)))
	last := int(math.Ceil(math.Log10(hi)))
	span := math.Log10(hi / lo)
	var ticks []plot.Tick
	for d := first; d <= last; d++ {
		base := math.Pow10(d)
		for m := 1; m <= 9; m++ {
			v := base * float64(m)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || span < 1.2 || (span < 2.5 && (m == 2 || m == 5)) {
				t.Label = formatNumber(v)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// formatNumber writes v without exponent or float noise: 0.2, 1, 1000, 20000.
func formatNumber(v float64) string {
	if v >= 1e7 || v < 1e-4 {
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// ninesTicks marks the nines axis at 0, 50, 90, 99, 99.9, ... percent.
type ninesTicks struct{}

var ninesLabels = []struct {
	p     float64
	label string
}{
	{0, "0"}, {50, "50"}, {90, "90"}, {99, "99"}, {99.9, "99.9"}, {99.99, "99.99"},
	{99.999, "99.999"}, {99.9999, "99.9999"}, {99.99999, "99.99999"},
}

func (ninesTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, n := range ninesLabels {
		x := nines(n.p)
		if x >= lo-1e-9 && x <= hi+1e-9 {
			ticks = append(ticks, plot.Tick{Value: x, Label: n.label})
		}
	}
	for _, p := range []float64{25, 75, 95, 99.5, 99.95, 99.995} { // unlabelled guides
		if x := nines(p); x >= lo && x <= hi {
			ticks = append(ticks, plot.Tick{Value: x})
		}
	}
	return ticks
}

// frame paints c white, pads it and writes title centred on top; it returns the canvas left
// below the title. Every figure (plots, heatmaps) starts this way.
func frame(c draw.Canvas, title string) draw.Canvas {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	pad := vg.Points(8)
	c = draw.Crop(c, pad, -pad, pad, -pad)
	if title != "" {
		ts := textStyle(titleSize, draw.XCenter, draw.YTop)
		c.FillText(ts, vg.Point{X: c.Center().X, Y: c.Max.Y}, title)
		c.Max.Y -= ts.Rectangle(title).Size().Y + vg.Points(6)
	}
	return c
}

// draw lays the figure out on c: title on top, legend rows at the bottom, plots between.
func (f *figure) draw(c draw.Canvas) {
	c = frame(c, f.title)
	var key draw.Canvas
	if f.shorts {
		// One line under the legend for the key of the windows drawn abbreviated; it is written
		// once the panels are drawn and known.
		ts := textStyle(legendSize, draw.XCenter, draw.YBottom)
		key = c
		key.Max.Y = c.Min.Y + ts.Rectangle("Mg").Size().Y*1.4
		c.Min.Y = key.Max.Y
		f.abbrev.order, f.abbrev.names = nil, map[string]string{}
	}
	if h := f.drawLegend(c); h > 0 {
		c.Min.Y += h + vg.Points(4)
	}
	if f.shorts {
		defer func() {
			if t := f.abbrev.text(); t != "" {
				ts := textStyle(legendSize, draw.XCenter, draw.YBottom)
				c.FillText(ts, vg.Point{X: (key.Min.X + key.Max.X) / 2, Y: key.Min.Y + vg.Points(2)}, fitText(ts, t, key.Max.X-key.Min.X))
			}
		}()
	}
	// gonum/plot reserves room for a vertical axis label around the normalised position of the
	// arithmetic middle of the axis, which on a log axis lies near the top (the middle of 1 and
	// 1000 is 500): it then shrinks the data area to keep the label inside, leaving a band of
	// empty space above it. Log axes' labels are therefore drawn here instead, centred on the
	// data area, with the same room kept to the left of it; so are linear axes' labels, so that
	// panels of both kinds in one grid keep their data areas aligned.
	labels := make([][]string, len(f.plots))
	for r, row := range f.plots {
		labels[r] = make([]string, len(row))
		for i, p := range row {
			labels[r][i], p.Y.Label.Text = p.Y.Label.Text, ""
		}
	}
	tiles := draw.Tiles{Rows: len(f.plots), Cols: len(f.plots[0]), PadX: vg.Points(18), PadY: vg.Points(10)}
	canvases := plot.Align(f.plots, tiles, c)
	for r, row := range f.plots {
		for i, p := range row {
			cv := canvases[r][i]
			if text := labels[r][i]; text != "" {
				ts := p.Y.Label.TextStyle
				ts.Rotation = math.Pi / 2
				ts.XAlign, ts.YAlign = draw.XCenter, draw.YTop
				h := p.Y.Label.TextStyle.Height(text)
				gap := max(p.Y.Label.Padding, vg.Points(6)) // between the label and the tick labels
				cv.Min.X += h + gap
				da := p.DataCanvas(cv)
				c.FillText(ts, vg.Point{X: cv.Min.X - h - gap, Y: da.Center().Y}, text)
				p.Draw(cv)
				p.Y.Label.Text = text // restored for the next rendering (PNG, then SVG)
				continue
			}
			p.Draw(cv)
		}
	}
}

// drawLegend draws the legend as centred rows along the bottom of c, wrapping at its width, and
// returns the height it used.
func (f *figure) drawLegend(c draw.Canvas) vg.Length {
	if len(f.legend) == 0 {
		return 0
	}
	ts := textStyle(legendSize, draw.XLeft, draw.YCenter)
	thumbW, gap, spacing := vg.Points(30), vg.Points(6), vg.Points(22)
	rowH := ts.Rectangle("Mg").Size().Y * 1.5
	width := c.Max.X - c.Min.X

	type item struct {
		e legendEntry
		w vg.Length
	}
	var rows [][]item
	var rowW []vg.Length
	var cur []item
	var curW vg.Length
	for _, e := range f.legend {
		w := thumbW + gap + ts.Rectangle(e.name).Size().X
		if len(cur) > 0 && curW+spacing+w > width {
			rows, rowW = append(rows, cur), append(rowW, curW)
			cur, curW = nil, 0
		}
		if len(cur) > 0 {
			curW += spacing
		}
		cur, curW = append(cur, item{e, w}), curW+w
	}
	rows, rowW = append(rows, cur), append(rowW, curW)

	h := rowH * vg.Length(len(rows))
	for i, row := range rows {
		y := c.Min.Y + h - rowH*vg.Length(i) - rowH/2
		x := c.Min.X + (width-rowW[i])/2
		for _, it := range row {
			th := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: x, Y: y - rowH*0.28},
				Max: vg.Point{X: x + thumbW, Y: y + rowH*0.28},
			}}
			it.e.thumb.Thumbnail(&th)
			c.FillText(ts, vg.Point{X: x + thumbW + gap, Y: y}, it.e.name)
			x += it.w + spacing
		}
	}
	return h
}

// drawer is anything that draws itself on a canvas: a figure of plots, or of heatmaps.
type drawer interface{ draw(draw.Canvas) }

// render draws fig as PNG and SVG in memory, then writes path+".png" and path+".svg"
// atomically, creating path's folder.
func render(path string, wPx, hPx int, fig drawer) (err error) {
	defer func() {
		// gonum/plot panics on some inputs (a log axis given a value <= 0, a misaligned tile
		// grid); the package guards against those, and this turns any it missed into an error
		// instead of ending the report.
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDraw, r)
		}
	}()
	w := vg.Length(wPx) * vg.Inch / DPI
	h := vg.Length(hPx) * vg.Inch / DPI

	ic := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(DPI))
	fig.draw(draw.New(ic))
	// Fastest deflate: the PNG was most of the time a report takes, and the files are only
	// somewhat larger (flat-coloured plots compress well at any level).
	var png bytes.Buffer
	if err := (&pngenc.Encoder{CompressionLevel: pngenc.BestSpeed}).Encode(&png, ic.Image()); err != nil {
		return fmt.Errorf("encoding png: %w", err)
	}

	var svg bytes.Buffer
	if err := renderSVG(&svg, wPx, hPx, fig, true); err != nil {
		return err
	}

	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating folder: %w", err)
	}
	if err := writeAtomic(path+".png", png.Bytes()); err != nil {
		return err
	}
	return writeAtomic(path+".svg", svg.Bytes())
}

// renderSVG draws fig as SVG to out, its fonts embedded or not.
func renderSVG(out io.Writer, wPx, hPx int, fig drawer, embed bool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrDraw, r)
		}
	}()
	w := vg.Length(wPx) * vg.Inch / DPI
	h := vg.Length(hPx) * vg.Inch / DPI
	sc := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(embed))
	fig.draw(draw.New(sc))
	if _, err := sc.WriteTo(out); err != nil {
		return fmt.Errorf("encoding svg: %w", err)
	}
	return nil
}

// writeAtomic writes data to a temporary file beside name and renames it over name. On failure
// name is untouched and the temporary file removed.
func writeAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}
