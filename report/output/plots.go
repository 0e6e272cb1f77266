package output

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/report/stats"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// Plot is one figure as data: its file name inside plots/ (without extension), its caption,
// a sentence on how to read it, and the rows of panels it draws (chart.Grid). Every series is
// taken from the Summary (its timeline buckets, phases and resources), the same analysis as the
// tables, so a test can compare what a figure draws with summary.json.
type Plot struct {
	// File is the figure's file name inside plots/, without extension.
	File string
	// Title is its caption, About a sentence on how to read it.
	Title, About string
	// Rows are the rows of panels it draws (chart.Grid), Kind what they are; ShareY gives
	// every panel the same Y range.
	Rows   [][]chart.Spec
	Kind   chart.Kind
	ShareY bool
}

// draw writes the job's figure to path (.png and .svg).
func (j Plot) draw(path string) error {
	return chart.Grid(path, j.Title, j.Rows, j.Kind, j.ShareY)
}

// ref is the job's entry in report.md: caption, how to read it, the PNG and a link to the SVG.
func (j Plot) ref() string {
	about := ""
	if j.About != "" {
		about = j.About + "\n\n"
	}
	return fmt.Sprintf("### %s\n\n%s![%s](plots/%s.png)\n\n[SVG](plots/%s.svg)\n\n", j.Title, about, j.Title, j.File, j.File)
}

// drawAll draws every job into dir, on as many goroutines as GOMAXPROCS, and returns the first
// error in the jobs' order (the other plots are still drawn).
func drawAll(dir string, jobs []Plot) error {
	// The plots are independent: draw them on every core, and report the first failure in
	// the jobs' order.
	errs := make([]error, len(jobs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(jobs)) {
		wg.Go(func() {
			for i := range next {
				if err := jobs[i].draw(filepath.Join(dir, jobs[i].File)); err != nil {
					errs[i] = fmt.Errorf("plot %s: %w", jobs[i].File, err)
				}
			}
		})
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// slug turns an endpoint path into a file-name part ("/a" -> "a").
func slug(path string) string { return strings.TrimSuffix(rundir.RawFileName(path), ".json") }

// windows marks every phase of c on the time axis with its name: a phase with faults is shaded
// and names its faults on a second line; a phase without is only outlined (Plain). A phase too
// narrow for its name shows its number on the time line, explained in the figure's key. A reader can
// so match every time plot with the tables, which are organised by phase.
func windows(c *model.Configuration) []chart.Window {
	var ws []chart.Window
	for i, ph := range c.Phases {
		w := chart.Window{Start: ph.StartS, End: ph.EndS, Label: ph.Name, Plain: len(ph.Faults) == 0, Short: fmt.Sprint(i + 1)}
		var d []string
		for _, f := range ph.Faults {
			d = append(d, model.ShortFault(f))
		}
		if len(d) > 0 {
			w.Label += "\n" + strings.Join(d, ", ")
		}
		ws = append(ws, w)
	}
	return ws
}

// bucketWidth returns b's width: WidthS, or w for a bucket written before buckets had one.
func bucketWidth(b model.Bucket, w float64) float64 {
	if b.WidthS > 0 {
		return b.WidthS
	}
	return w
}

// stepSeries extracts one figure of a timeline as a step line: each bucket's value held flat
// across the bucket [start, end), so a change shows in the bucket where it happened rather than
// sloping back into the one before (a fault starting at 5 s never seems to start at 4.5 s), and
// buckets never straddle a phase boundary (timeline.go). A bucket without requests, or whose
// value is NaN (no success to take a latency of), breaks the line; so does a gap between buckets.
// Series of one timeline share their X wherever the breaks are the same, which lets chart stack
// them point by point.
func stepSeries(name string, bs []model.Bucket, width float64, f func(model.Bucket) float64) chart.Series {
	s := chart.Series{Name: name}
	brk := func(x float64) {
		if len(s.X) > 0 && !math.IsNaN(s.Y[len(s.Y)-1]) {
			s.X = append(s.X, x)
			s.Y = append(s.Y, math.NaN())
		}
	}
	end := math.NaN()
	for _, b := range bs {
		w := bucketWidth(b, width)
		y := math.NaN()
		if b.Requests > 0 {
			y = f(b)
		}
		if math.IsNaN(y) {
			brk(b.TS)
			end = b.TS + w
			continue
		}
		if !math.IsNaN(end) && end < b.TS-1e-9 {
			brk(b.TS) // a missing bucket
		}
		s.X = append(s.X, b.TS, b.TS+w)
		s.Y = append(s.Y, y, y)
		end = b.TS + w
	}
	return s
}

// percent writes n of total as a percentage: whole percents, one decimal under 10%.
func percent(n, total int) string {
	p := 100 * float64(n) / float64(total)
	if p < 10 {
		return strings.TrimSuffix(fmt.Sprintf("%.1f", p), ".0") + "%"
	}
	return fmt.Sprintf("%.0f%%", p)
}

// orNaN returns v, or NaN when n is 0 (a figure of no requests, such as the latency of the
// successes of a bucket without any).
func orNaN(n int, v float64) float64 {
	if n == 0 {
		return math.NaN()
	}
	return v
}

// PlotsOf lists the figures of one run: the configurations side by side; per configuration
// latency (successes and failures apart), outcomes, throughput, a latency heatmap, send lag and
// resources over time; a percentile curve per endpoint.
func PlotsOf(s *model.Summary) []Plot {
	all := make([]*model.Configuration, len(s.Configurations))
	for i := range s.Configurations {
		all[i] = &s.Configurations[i]
	}
	return plotsOf(s, all)
}

// FirstRepetitionPlotsOf is PlotsOf with the figures of one configuration run drawn for the
// first repetition of each configuration only (the comparisons still draw every repetition):
// what report.html inlines, so that a run of many repetitions stays a page a browser opens at
// once (the hypothesis's 20 configuration runs: 124 figures, 7.8 MB, against 44).
func FirstRepetitionPlotsOf(s *model.Summary) []Plot {
	return plotsOf(s, model.FirstOfEachConfig(s.Configurations))
}

// plotsOf lists the comparisons of s and the figures of each configuration run of runs.
func plotsOf(s *model.Summary, runs []*model.Configuration) []Plot {
	var jobs []Plot
	// The configurations side by side first: the comparison the run was made for.
	groups := model.FirstOfEachConfig(s.Configurations)
	if len(groups) > 1 {
		jobs = append(jobs, sideBySide(s, groups)...)
	}
	for _, c := range runs {
		jobs = append(jobs, latencyJob(s, c), outcomesJob(s, c), throughputJob(s, c), heatmapJob(s, c), lagJob(s, c))
		if res := resourceSeries(c); len(res.Series) > 0 {
			title := res.Title
			res.Title = ""
			jobs = append(jobs, Plot{File: c.Name + "-resources", Title: title, Kind: chart.KindLines, Rows: [][]chart.Spec{{res}},
				About: "Each bounded resource's time-weighted mean in use per interval of resources.csv (or, for a run without exact intervals, its occupancy at each sample), against its capacity (dashed). A resource whose series equals another's, or lies within 0.05 slots of it everywhere, is drawn once and named after both."})
		}
	}
	if len(s.Configurations) > 0 {
		for _, ep := range s.Configurations[0].EndpointPaths() {
			jobs = append(jobs, percentilesJob(ep, groups))
		}
	}
	return jobs
}

// percentilesJob draws ep's latency distribution of successes per phase, one panel per
// configuration, with the share of failures per phase under each panel's title.
func percentilesJob(ep string, groups []*model.Configuration) Plot {
	var specs []chart.Spec
	for _, c := range groups {
		spec := chart.Spec{Title: c.Name}
		var failed []string
		for _, ph := range c.Phases {
			st := ph.Endpoints[ep]
			if st != nil && st.Requests > st.Successes {
				failed = append(failed, fmt.Sprintf("%s %s", ph.Name, percent(st.Requests-st.Successes, st.Requests)))
			}
			if st == nil || len(st.Curve) == 0 {
				continue
			}
			sr := chart.Series{Name: ph.Name, Color: phaseColor(c, ph.Name)}
			for _, p := range st.Curve {
				if !supported(p.Percentile, st.Success.Count) {
					continue
				}
				sr.X = append(sr.X, p.Percentile)
				sr.Y = append(sr.Y, p.MS)
			}
			spec.Series = append(spec.Series, sr)
		}
		if len(failed) > 0 {
			spec.Title += "\nfailed, not drawn: " + strings.Join(failed, ", ")
		}
		specs = append(specs, spec)
	}
	return Plot{File: "percentiles-" + slug(ep), Title: ep + ": latency distribution of successes per phase",
		Kind: chart.KindPercentiles, Rows: [][]chart.Spec{specs},
		About: "The successful requests of each phase on a nines axis, so the tail gets as much room as the median; failures are left out (a fast rejection would pull the curve down) and their share per phase is under each panel's title. Each curve stops at the highest percentile its successes measure (p99.9 needs 1,000 of them); a phase keeps its colour in every figure."}
}

// supported reports whether n samples measure the p-th percentile: at least one sample lies
// above it (n >= 1/(1 - p/100)), so that it is not simply the largest value seen. The 0th and
// the 100th (the extremes, drawn as such) always are.
func supported(p float64, n int) bool {
	if p <= 0 || p >= 100 {
		return true
	}
	return float64(n)*(1-p/100) >= 1-1e-9
}

// phaseColor is the colour of phase name in every figure: its place on c's time line, in the
// charts' palette.
func phaseColor(c *model.Configuration, name string) color.Color {
	for i, ph := range c.Phases {
		if ph.Name == name {
			return chart.Palette[i%len(chart.Palette)]
		}
	}
	return nil
}

// latencyJob draws the latency of the successes over time, and below it, on the same axis, that
// of the failures: a fast rejection lowers neither line of the successes, so an outage can never
// look like a speed-up.
func latencyJob(s *model.Summary, c *model.Configuration) Plot {
	w := s.BucketS
	ok := chart.Spec{Title: "successes", YLabel: "latency (ms)", LogY: true, Windows: windows(c)}
	bad := chart.Spec{Title: "failures (rejections, timeouts, errors)", YLabel: "latency (ms)", LogY: true, Windows: windows(c), Empty: "no failures"}
	for _, ep := range c.EndpointPaths() {
		bs := c.Timeline[ep]
		ok.Series = append(ok.Series,
			stepSeries(ep+" p50", bs, w, func(b model.Bucket) float64 { return orNaN(b.Successes, b.SuccessP50MS) }),
			stepSeries(ep+" p99", bs, w, func(b model.Bucket) float64 { return orNaN(b.Successes, b.SuccessP99MS) }))
		bad.Series = append(bad.Series,
			stepSeries(ep+" p50", bs, w, func(b model.Bucket) float64 { return orNaN(b.Requests-b.Successes, b.FailureP50MS) }),
			stepSeries(ep+" p99", bs, w, func(b model.Bucket) float64 { return orNaN(b.Requests-b.Successes, b.FailureP99MS) }))
	}
	timeout := timeoutLines(c)
	ok.HLines, bad.HLines = timeout, timeout
	return Plot{File: c.Name + "-latency", Title: c.Name + ": latency of successes and of failures over time",
		Kind: chart.KindLines, ShareY: true, Rows: [][]chart.Spec{{ok}, {bad}},
		About: "Top: p50 (dashed) and p99 of the successful requests of each bucket. Bottom, on the same axis: p50 and p99 of the failed ones (how fast they failed; how many did is in the outcomes plot). A gap means no such request in that bucket. The client timeout bounds each dependency call, not the request: a request that waited for a slot first can succeed above it, up to its end-to-end bound (the pool's longest wait plus the timeout of each call) where the scenario has one."}
}

// outcomesJob stacks each endpoint's outcomes per bucket as steps.
func outcomesJob(s *model.Summary, c *model.Configuration) Plot {
	w := s.BucketS
	// The panels share one Y range, so when the endpoints' rates differ by more than shareFrom a
	// slow endpoint's failures would be a sliver: draw shares of each endpoint's requests instead.
	shares := rateSpread(c) > shareFrom
	title, label := c.Name+": outcomes over time (stacked, per endpoint)", "requests per second"
	if shares {
		title, label = c.Name+": outcomes over time (stacked share of each endpoint's requests)", "share of requests"
	}
	var specs []chart.Spec
	for _, ep := range c.EndpointPaths() {
		bs := c.Timeline[ep]
		per := func(n func(model.Bucket) int) func(model.Bucket) float64 {
			if shares {
				return func(b model.Bucket) float64 { return float64(n(b)) / float64(b.Requests) }
			}
			return func(b model.Bucket) float64 { return float64(n(b)) / bucketWidth(b, w) }
		}
		specs = append(specs, chart.Spec{Title: ep, YLabel: label, Windows: windows(c), Series: outcomeSeries(bs, w, per)})
	}
	return Plot{File: c.Name + "-outcomes", Title: title, Kind: chart.KindStacked, Rows: [][]chart.Spec{specs},
		About: "Each bucket's requests by outcome, by send time, held flat across the bucket; buckets end at every phase boundary."}
}

// outcomeNames are the bands of the outcome plots, bottom first. A rejection at once (the pool
// was full and turned the call away) and one after waiting for a slot until the wait's bound are
// apart: the first costs the caller nothing, the second the whole wait.
var outcomeNames = []string{"success", "timeout", "rejected at once", "rejected after waiting", "upstream", "connection/other"}

// outcomeColors fixes the colours of the two rejection bands, which share the name "rejected"
// (and so would share its colour): blue at once, sky blue after waiting.
var outcomeColors = map[string]color.Color{"rejected at once": chart.ColorFor("rejected"), "rejected after waiting": chart.Palette[2]}

// outcomeSeries returns one step series per outcome (outcomeNames), valued by per.
func outcomeSeries(bs []model.Bucket, w float64, per func(func(model.Bucket) int) func(model.Bucket) float64) []chart.Series {
	counts := []func(model.Bucket) int{
		func(b model.Bucket) int { return b.Successes },
		func(b model.Bucket) int { return b.Errors.Timeout },
		func(b model.Bucket) int { return b.Errors.RejectedRefused },
		func(b model.Bucket) int { return b.Errors.RejectedWaited },
		func(b model.Bucket) int { return b.Errors.Upstream },
		func(b model.Bucket) int { return b.Errors.Connection + b.Errors.Other },
	}
	out := make([]chart.Series, len(counts))
	for i, n := range counts {
		out[i] = stepSeries(outcomeNames[i], bs, w, per(n))
		out[i].Color = outcomeColors[outcomeNames[i]]
	}
	return out
}

// throughputJob draws, per endpoint, the requests sent and the successful ones per second.
func throughputJob(s *model.Summary, c *model.Configuration) Plot {
	w := s.BucketS
	var specs []chart.Spec
	for _, ep := range c.EndpointPaths() {
		bs := c.Timeline[ep]
		specs = append(specs, chart.Spec{Title: ep, YLabel: "requests per second", Windows: windows(c), Series: []chart.Series{
			stepSeries("success", bs, w, func(b model.Bucket) float64 { return b.ThroughputRPS }),
			stepSeries("sent", bs, w, func(b model.Bucket) float64 { return b.SentRPS }),
		}})
	}
	return Plot{File: c.Name + "-throughput", Title: c.Name + ": sent vs successful requests per second", Kind: chart.KindLines,
		Rows:  [][]chart.Spec{specs},
		About: "Requests sent per second (grey, dashed where it runs over the other line) and successful ones (green), both by send time: the space between them is the failures."}
}

// heatmapJob draws, per endpoint, how many requests fell in each latency bin of each bucket, the
// successes on top and the failures below (Grafana's and vegeta's latency heatmap).
func heatmapJob(s *model.Summary, c *model.Configuration) Plot {
	edges := s.LatencyBinsMS
	if len(edges) == 0 {
		edges = stats.HistogramEdgesMS()
	}
	var ok, bad []chart.Spec
	timeout := timeoutLines(c)
	for _, ep := range c.EndpointPaths() {
		bs := c.Timeline[ep]
		okD := &chart.Density{YEdges: edges, Unit: "requests per bucket and bin"}
		badD := &chart.Density{YEdges: edges, Unit: "requests per bucket and bin"}
		for i, b := range bs {
			if i == 0 || math.Abs(okD.XEdges[len(okD.XEdges)-1]-b.TS) > 1e-9 {
				okD.XEdges = append(okD.XEdges, b.TS)
				badD.XEdges = append(badD.XEdges, b.TS)
				if i > 0 { // a missing bucket: an empty column
					okD.Counts = append(okD.Counts, make([]float64, len(edges)-1))
					badD.Counts = append(badD.Counts, make([]float64, len(edges)-1))
				}
			}
			end := b.TS + bucketWidth(b, s.BucketS)
			okD.XEdges = append(okD.XEdges, end)
			badD.XEdges = append(badD.XEdges, end)
			okD.Counts = append(okD.Counts, histColumn(b.SuccessHist, len(edges)-1))
			badD.Counts = append(badD.Counts, histColumn(b.FailureHist, len(edges)-1))
		}
		if len(bs) == 0 {
			okD, badD = nil, nil
		}
		ok = append(ok, chart.Spec{Title: ep + " successes", YLabel: "latency (ms)", LogY: true, Windows: windows(c), Density: okD, HLines: timeout})
		bad = append(bad, chart.Spec{Title: ep + " failures", YLabel: "latency (ms)", LogY: true, Windows: windows(c), Density: badD, HLines: timeout, Empty: "no failures"})
	}
	return Plot{File: c.Name + "-latency-heatmap", Title: c.Name + ": latency heatmap over time", Kind: chart.KindLines, ShareY: true,
		Rows:  [][]chart.Spec{ok, bad},
		About: "How many requests of each bucket fell in each latency bin (10 per decade, log colour scale shared by every panel): successes on top, failures below."}
}

// histColumn expands h into n bins.
func histColumn(h model.Hist, n int) []float64 {
	col := make([]float64, n)
	for i := range col {
		col[i] = float64(h.At(i))
	}
	return col
}

// lagJob draws the load generator's send lag over time against the bound the run's validity is
// judged by, with each endpoint's p99 over the run: the figure that rule compares.
func lagJob(s *model.Summary, c *model.Configuration) Plot {
	w := s.BucketS
	limit := c.LagLimitMS
	if limit == 0 {
		limit = 1 // manifests before the limit was recorded held the 1 ms default
	}
	spec := chart.Spec{YLabel: "send lag (ms)", LogY: true, Windows: windows(c)}
	runP99 := map[string]float64{}
	for _, e := range c.Endpoints {
		runP99[e.Path] = e.LagP99MS
	}
	for _, g := range c.EndpointGroups {
		runP99[g.Name] = g.LagP99MS
	}
	for _, ep := range c.EndpointPaths() {
		bs := c.Timeline[ep]
		spec.Series = append(spec.Series,
			stepSeries(ep+" maximum", bs, w, func(b model.Bucket) float64 { return orNaN(b.LagCount, b.LagMaxMS) }),
			stepSeries(ep+" p50", bs, w, func(b model.Bucket) float64 { return orNaN(b.LagCount, b.LagP50MS) }))
		if v, ok := runP99[ep]; ok && v > 0 {
			spec.HLines = append(spec.HLines, chart.Series{Name: fmt.Sprintf("%s p99 over the run: %.2f ms", ep, v), Y: []float64{v}})
		}
	}
	spec.HLines = append(spec.HLines, chart.Series{Name: fmt.Sprintf("validity bound on that p99: %g ms", limit), Y: []float64{limit}})
	return Plot{File: c.Name + "-send-lag", Title: c.Name + ": load generator send lag over time", Kind: chart.KindLines,
		Rows:  [][]chart.Spec{{spec}},
		About: "Per bucket, the median (dashed) and the largest send lag: actual send time minus scheduled send time (X-Loadgen-Scheduled). The run is valid while each endpoint's p99 over the whole run (its thin dashed line) stays under the bound; a bucket whose maximum rises above it shows when the generator fell behind."}
}

// sideBySide draws the unaffected endpoints' p99 (successes) and success rate, one panel per
// configuration.
func sideBySide(s *model.Summary, groups []*model.Configuration) []Plot {
	w := s.BucketS
	focus := "every endpoint"
	if len(s.Roles.Unaffected) > 0 {
		focus = "unaffected: " + strings.Join(s.Roles.Unaffected, ", ")
	}
	var names []string
	for _, c := range groups {
		names = append(names, c.Config)
	}
	versus := strings.Join(names, " vs ")
	reps := 1
	side := func(file, what, ylabel string, logY bool, f func(model.Bucket) float64) Plot {
		var specs []chart.Spec
		for _, c := range groups {
			title := c.Config
			if c.Mode != "" && c.Mode != c.Config {
				title += " (" + c.Mode + ")"
			}
			members := s.Repetitions(c.Config)
			reps = max(reps, len(members))
			spec := chart.Spec{Title: title, YLabel: ylabel, LogY: logY, Windows: windows(c)}
			for _, ep := range c.EndpointPaths() {
				spec.Series = append(spec.Series, repSeries(ep, members, ep, w, f)...)
			}
			specs = append(specs, spec)
		}
		about := "One panel per configuration on shared axes; an endpoint drawn over another is dashed, so both stay visible where they coincide."
		title := fmt.Sprintf("%s, %s (%s)", what, versus, focus)
		if reps > 1 {
			title = fmt.Sprintf("%s, %s (%s; median of %d repetitions)", what, versus, focus, reps)
			about = fmt.Sprintf("One panel per configuration on shared axes. Each line is the median over the %d repetitions of each bucket's figure, the dotted lines on either side its smallest and largest: the spread between repetitions the verdicts pool.", reps)
		}
		return Plot{File: file, Title: title, Kind: chart.KindLines, Rows: [][]chart.Spec{specs}, About: about}
	}
	return []Plot{
		side("compare-p99", "p99 latency of successes", "p99 of successes (ms)", true, func(b model.Bucket) float64 { return orNaN(b.Successes, b.SuccessP99MS) }),
		side("compare-success", "success rate", "success rate", false, func(b model.Bucket) float64 { return b.SuccessRate }),
	}
}

// farCapacity: a capacity line more than this many times the largest in-use value of a resource
// plot is left out (see resourceSeries).
const farCapacity = 10

// shareFrom is the spread of endpoint rates (largest / smallest) above which the outcome panels
// show shares of requests rather than requests per second.
const shareFrom = 5

// rateSpread is the largest endpoint rate of c over the smallest (1 with one endpoint or none).
func rateSpread(c *model.Configuration) float64 {
	lo, hi := 0.0, 0.0
	for _, ep := range c.EndpointPaths() {
		n := 0
		for _, b := range c.Timeline[ep] {
			n += b.Requests
		}
		r := float64(n)
		if r == 0 {
			continue
		}
		if lo == 0 || r < lo {
			lo = r
		}
		hi = max(hi, r)
	}
	if lo == 0 {
		return 1
	}
	return hi / lo
}

// resourceSeries plots every pool and queue (and any other bounded resource) over time with its
// capacity as a dashed line, or, for a capacity that moves (an adaptive pool's limit), with a
// "limit of pool:<name>" line of its time-weighted mean per interval. Pools and queues are drawn last, over the other resources; a
// resource whose series is identical to a pool's or queue's (the calls in flight to a dependency
// often equal its pool's occupancy) is not drawn again but named with it ("pool:A (= calls:A)");
// resources of the same capacity share one capacity line.
func resourceSeries(c *model.Configuration) chart.Spec {
	spec := chart.Spec{Title: c.Name + ": resources in use against capacity", YLabel: "in use (slots, queued, connections)", Windows: windows(c)}
	// Rows with exact interval figures (resources.csv's mean, max and time at capacity per
	// interval) are drawn as their time-weighted mean held across the interval: it cannot alias
	// with the load's period as point samples do. Point samples (older runs) are drawn through
	// their points, and only when no row is exact.
	exact := slices.ContainsFunc(c.Resources, rundir.ResourceSample.Exact)
	if exact {
		spec.Title = c.Name + ": resources in use against capacity (time-weighted mean per interval)"
	}
	idx := map[string]int{}
	caps := map[string]float64{}
	limits := limitLines{idx: map[string]int{}}
	peak := 0.0
	var names []string
	for _, r := range c.Resources {
		bounded := r.Capacity > 0 || strings.HasPrefix(r.Resource, "pool:") || strings.HasPrefix(r.Resource, "queue:")
		if !bounded || (exact && !r.Exact()) {
			continue
		}
		i, ok := idx[r.Resource]
		if !ok {
			i = len(spec.Series)
			idx[r.Resource] = i
			names = append(names, r.Resource)
			spec.Series = append(spec.Series, chart.Series{Name: r.Resource})
		}
		caps[r.Resource] = max(caps[r.Resource], r.Capacity)
		if !exact {
			spec.Series[i].X = append(spec.Series[i].X, r.T.Seconds())
			spec.Series[i].Y = append(spec.Series[i].Y, r.InUse)
			peak = max(peak, r.InUse)
			continue
		}
		from, to := (r.T - r.Interval).Seconds(), r.T.Seconds()
		spec.Series[i].X = append(spec.Series[i].X, from, to)
		spec.Series[i].Y = append(spec.Series[i].Y, r.MeanInUse, r.MeanInUse)
		peak = max(peak, r.MaxInUse)
		limits.add(r)
	}
	// A moving capacity is drawn as its line (each interval's time-weighted mean limit), not as
	// a fixed capacity level.
	for name := range limits.idx {
		delete(caps, name)
	}
	slices.Sort(names)
	// A capacity more than farCapacity times anything in use (an inbound cap of 5000 against
	// pools of 2) would squash every series to the floor: leave its line out and write it into
	// the series' name instead.
	for i, sr := range spec.Series {
		if k := caps[sr.Name]; k > farCapacity*max(peak, 1) {
			spec.Series[i].Name = fmt.Sprintf("%s (capacity %s, off the scale)", sr.Name, model.Num(k))
			caps[sr.Name] = 0
		}
	}
	top := func(name string) bool { return strings.HasPrefix(name, "pool:") || strings.HasPrefix(name, "queue:") }
	slices.SortStableFunc(spec.Series, func(a, b chart.Series) int {
		switch {
		case top(a.Name) == top(b.Name):
			return 0
		case top(a.Name):
			return 1
		}
		return -1
	})
	spec.Series = mergeIdentical(spec.Series, top, sameWithin)
	spec.Series = append(spec.Series, limits.series...) // after the merge: never folded into a pool
	// One capacity line per capacity: pools, queues and calls of 5 slots share one line (two
	// dashed lines at one level would hide each other), drawn in a neutral colour and naming every
	// resource it bounds, pools and queues first.
	byCap := map[float64][]string{}
	var levels []float64
	for _, n := range names {
		k := caps[n]
		if k <= 0 {
			continue
		}
		if byCap[k] == nil {
			levels = append(levels, k)
		}
		byCap[k] = append(byCap[k], n)
	}
	slices.Sort(levels)
	for _, k := range levels {
		ns := byCap[k]
		slices.SortStableFunc(ns, func(a, b string) int {
			switch {
			case top(a) == top(b):
				return 0
			case top(a):
				return -1
			}
			return 1
		})
		spec.HLines = append(spec.HLines, chart.Series{Name: fmt.Sprintf("capacity %s: %s", model.Num(k), strings.Join(ns, ", ")), Y: []float64{k}})
	}
	return spec
}

// limitLines collects, for each resource whose capacity moves (an exact row with a
// mean_capacity: an adaptive pool's limit), the line "limit of <resource>" of its time-weighted
// mean per interval.
type limitLines struct {
	idx    map[string]int // resource -> index in series
	series []chart.Series
}

func (l *limitLines) add(r rundir.ResourceSample) {
	if r.MeanCapacity == 0 {
		return
	}
	j, ok := l.idx[r.Resource]
	if !ok {
		j = len(l.series)
		l.idx[r.Resource] = j
		l.series = append(l.series, chart.Series{Name: "limit of " + r.Resource})
	}
	l.series[j].X = append(l.series[j].X, (r.T - r.Interval).Seconds(), r.T.Seconds())
	l.series[j].Y = append(l.series[j].Y, r.MeanCapacity, r.MeanCapacity)
}

// sameWithin is how far apart (in slots) two resources' values may be at every point and still
// be drawn as one line: at 1200 px a step of 0.05 slots on a scale of 5 is under two pixels.
const sameWithin = 0.05

// mergeIdentical drops every series whose points lie within tol of those of a later series for
// which keep is true (same X, every Y within tol), and names that one after both: "pool:A (=
// calls:A)" when equal, "pool:A (≈ calls:A)" when only within tol. Two such lines would
// otherwise draw as one, the lower one hidden.
func mergeIdentical(series []chart.Series, keep func(string) bool, tol float64) []chart.Series {
	var out []chart.Series
	drop := make([]bool, len(series))
	alias := make([][]string, len(series))
	for i, a := range series {
		if keep(a.Name) {
			continue
		}
		for j := len(series) - 1; j >= 0; j-- {
			b := series[j]
			if j == i || !keep(b.Name) || !slices.Equal(a.X, b.X) {
				continue
			}
			if slices.Equal(a.Y, b.Y) {
				drop[i] = true
				alias[j] = append(alias[j], "= "+a.Name)
				break
			}
			if slices.EqualFunc(a.Y, b.Y, func(p, q float64) bool { return math.Abs(p-q) <= tol }) {
				drop[i] = true
				alias[j] = append(alias[j], "≈ "+a.Name)
				break
			}
		}
	}
	for i, sr := range series {
		if drop[i] {
			continue
		}
		if len(alias[i]) > 0 {
			sr.Name += " (" + strings.Join(alias[i], ", ") + ")"
		}
		out = append(out, sr)
	}
	return out
}

// timeoutLines are the latency plots' reference lines: the client timeout, which bounds each
// dependency call (not the request: a request can also wait for a slot, and call more than one
// dependency), and each endpoint's end-to-end bound when the scenario bounds it: the pools'
// longest wait for a slot plus the timeout of each of its calls, per-call deadlines assumed.
// Endpoints with the same bound share one line; a bound equal to the timeout adds none.
func timeoutLines(c *model.Configuration) []chart.Series {
	lines := []chart.Series{{Name: fmt.Sprintf("client timeout per dependency call: %s ms", model.Num(c.ClientTimeoutMS)), Y: []float64{c.ClientTimeoutMS}}}
	wait := map[string]float64{} // dependency -> its pool's longest wait for a slot
	for _, p := range c.Pools {
		for _, d := range p.Dependencies {
			wait[d] = p.MaxWaitMS
		}
	}
	byBound := map[float64][]string{}
	var bounds []float64
	member := c.Members()
	for _, e := range c.Endpoints {
		if member[e.Path] != "" || len(e.Calls) == 0 {
			continue
		}
		b := 0.0
		for _, d := range e.Calls {
			b += wait[d] + c.ClientTimeoutMS
		}
		if b == c.ClientTimeoutMS {
			continue
		}
		if byBound[b] == nil {
			bounds = append(bounds, b)
		}
		byBound[b] = append(byBound[b], e.Path)
	}
	slices.Sort(bounds)
	for _, b := range bounds {
		lines = append(lines, chart.Series{Name: fmt.Sprintf("end-to-end bound of %s (slot wait + calls): %s ms", strings.Join(byBound[b], ", "), model.Num(b)), Y: []float64{b}})
	}
	return lines
}

// repSeries draws one figure of endpoint ep over the repetitions reps of one configuration as
// steps: with one repetition its line (called name); with several, per bucket the median of the
// repetitions' values (name) and their smallest and largest ("name min", "name max", dotted).
// Buckets are matched by start time; a bucket where no repetition has a value breaks the lines.
func repSeries(name string, reps []*model.Configuration, ep string, width float64, f func(model.Bucket) float64) []chart.Series {
	if len(reps) == 1 {
		return []chart.Series{stepSeries(name, reps[0].Timeline[ep], width, f)}
	}
	type spread struct{ med, lo, hi float64 }
	at := map[float64]spread{}
	var template []model.Bucket // the longest time line: every bucket any repetition has
	for _, c := range reps {
		if bs := c.Timeline[ep]; len(bs) > len(template) {
			template = bs
		}
	}
	for i, b := range template {
		var vals []float64
		for _, c := range reps {
			bs := c.Timeline[ep]
			if i < len(bs) && bs[i].Requests > 0 {
				if v := f(bs[i]); !math.IsNaN(v) {
					vals = append(vals, v)
				}
			}
		}
		if len(vals) == 0 {
			at[b.TS] = spread{math.NaN(), math.NaN(), math.NaN()}
			continue
		}
		slices.Sort(vals)
		med := vals[len(vals)/2]
		if len(vals)%2 == 0 {
			med = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
		at[b.TS] = spread{med, vals[0], vals[len(vals)-1]}
	}
	// Every template bucket counts as having requests: the value decides (NaN breaks the line).
	bs := make([]model.Bucket, len(template))
	for i, b := range template {
		bs[i] = model.Bucket{TS: b.TS, WidthS: b.WidthS, Requests: 1}
	}
	return []chart.Series{
		stepSeries(name, bs, width, func(b model.Bucket) float64 { return at[b.TS].med }),
		stepSeries(name+" min", bs, width, func(b model.Bucket) float64 { return at[b.TS].lo }),
		stepSeries(name+" max", bs, width, func(b model.Bucket) float64 { return at[b.TS].hi }),
	}
}
