package output

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"

	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// HTMLFile is the name of the HTML report in a run folder.
const HTMLFile = "report.html"

// HTML writes report.html: one self-contained page to open and share, with the answer first (the
// verdict and the headline), each claim with its interval drawn against its bound, what ran out,
// the per-phase tables and every figure inline as SVG with its caption. Its styles are inline;
// it has no script and loads nothing (no network, no other file): the figures name the font
// Liberation Sans, which the page falls back from to Arial and Helvetica (metric-compatible).
// The figures are drawn without their embedded fonts, so the hypothesis's page stays well under
// 2 MB.
type HTML struct{}

// Name is "html".
func (HTML) Name() string { return "html" }

// Write writes dir/report.html atomically.
func (HTML) Write(s *model.Summary, dir string) error {
	b, err := htmlPage(s)
	if err != nil {
		return fmt.Errorf("write %s: %w", HTMLFile, err)
	}
	return rundir.WriteFile(filepath.Join(dir, HTMLFile), b)
}

// htmlPage renders the page of s.
func htmlPage(s *model.Summary) ([]byte, error) {
	figs, err := inlineFigures(FirstRepetitionPlotsOf(s))
	if err != nil {
		return nil, err
	}
	d := pageData{S: s, Figures: figs, Method: s.Verdict.Method, Blame: attribution.MethodText,
		OnlyFirst: len(model.FirstOfEachConfig(s.Configurations)) < len(s.Configurations)}
	d.Outcome, d.Counts = s.Verdict.Outcome, countsText(s.Verdict.Counts)
	if !s.Valid {
		d.Outcome = model.OutcomeInvalid
	}
	for _, c := range s.Verdict.Claims {
		d.Claims = append(d.Claims, claimView{C: c, Evidence: strings.TrimPrefix(evidence(c), "rule: "), Drawing: template.HTML(intervalSVG(c))})
	}
	for _, h := range s.Headline {
		for i, l := range h.Layouts {
			r := headRow{Layout: l.Configuration, Endpoint: h.Endpoint, Rate: rateIv(l.SuccessRate), P99: msIv(l.SuccessP99MS), Requests: l.Requests, Why: l.Why}
			if i == 0 {
				r.Phase, r.Span = fmt.Sprintf("%s (%s)", h.Phase, h.Fault), len(h.Layouts)
			}
			d.Headline = append(d.Headline, r)
		}
	}
	if len(s.Configurations) > 0 {
		for pi, ph := range s.Configurations[0].Phases {
			d.Phases = append(d.Phases, phaseView{Name: ph.Name, From: ph.StartS, To: ph.EndS, Table: htmlTable(phaseTable(s, pi))})
		}
	}
	d.Validity = htmlTable(validityTable(s))
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

type pageData struct {
	S        *model.Summary
	Outcome  string
	Method   string
	Blame    string
	Counts   string
	Headline []headRow
	Claims   []claimView
	Phases   []phaseView
	Validity tableView
	Figures  []figureView
	// OnlyFirst says the run has repetitions whose own figures the page leaves out.
	OnlyFirst bool
}

type headRow struct {
	Phase            string
	Span             int
	Endpoint, Layout string
	Rate, P99, Why   string
	Requests         int
}

type claimView struct {
	C        model.Claim
	Evidence string
	Drawing  template.HTML
}

type phaseView struct {
	Name     string
	From, To float64
	Table    tableView
}

type tableView struct {
	Head []string
	Rows []rowView
}

type rowView struct{ Cells []cellView }

// cellView is one cell; Span is how many columns it spans (the last cell of a short row spans
// the rest).
type cellView struct {
	Text string
	Span int
}

func htmlTable(t table) tableView {
	v := tableView{Head: t.head}
	for _, r := range t.rows {
		var row rowView
		for i, c := range r {
			span := 1
			if i == len(r)-1 {
				span = max(len(t.head)-len(r)+1, 1)
			}
			row.Cells = append(row.Cells, cellView{Text: c, Span: span})
		}
		v.Rows = append(v.Rows, row)
	}
	return v
}

// figureView is one figure inline: its anchor, caption, how to read it, and its SVG.
type figureView struct {
	ID, Title, About string
	SVG              template.HTML
}

// svgHead matches what precedes the <svg> element in a standalone SVG file (the XML declaration
// and the generator's comment), which an inline SVG leaves out.
var svgHead = regexp.MustCompile(`(?s)^.*?(<svg\b)`)

// inlineFigures draws every figure as SVG without embedded fonts, on as many goroutines as
// GOMAXPROCS, and returns them in order (the first error in order fails them all).
func inlineFigures(plots []Plot) ([]figureView, error) {
	out := make([]figureView, len(plots))
	errs := make([]error, len(plots))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(plots)) {
		wg.Go(func() {
			for i := range next {
				p := plots[i]
				var b bytes.Buffer
				if err := chart.GridSVG(&b, p.Title, p.Rows, p.Kind, p.ShareY); err != nil {
					errs[i] = fmt.Errorf("figure %s: %w", p.File, err)
					continue
				}
				svg := svgHead.ReplaceAllString(b.String(), "$1")
				// The chart's text is the run's own (names of phases, endpoints); the SVG writer
				// escapes it as XML. No element of it may run code: refuse one that would.
				if strings.Contains(strings.ToLower(svg), "<script") {
					errs[i] = fmt.Errorf("figure %s: the SVG holds a script", p.File)
					continue
				}
				out[i] = figureView{ID: "fig-" + p.File, Title: p.Title, About: p.About, SVG: template.HTML(svg)}
			}
		})
	}
	for i := range plots {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// intervalSVG draws a claim's interval against its bound on a number line: the measured figure
// (left side) with its 95% interval against a constant bound, or, when the right side is itself
// a figure, the interval of left - right against 0. The side of the bound that satisfies the
// claim is shaded; an open end runs off the line as an arrow. Empty when nothing was measured.
func intervalSVG(c model.Claim) string {
	if c.Difference == nil || c.Left == nil {
		return ""
	}
	iv, bound, label := c.Left, 0.0, "measured"
	exact := c.Right != nil && c.Right.Lo != nil && c.Right.Hi != nil && *c.Right.Lo == *c.Right.Hi
	if exact {
		bound = c.Right.Value
	} else {
		iv, label = c.Difference, "left − right"
	}
	tol := 0.0
	if c.Op == "within" {
		tol = withinTolerance(c.Rule)
	}
	// The domain: every finite end, the bound (and its tolerance), padded by a tenth.
	lo, hi := math.Min(iv.Value, bound-tol), math.Max(iv.Value, bound+tol)
	if iv.Lo != nil {
		lo = math.Min(lo, *iv.Lo)
	}
	if iv.Hi != nil {
		hi = math.Max(hi, *iv.Hi)
	}
	pad := (hi - lo) * 0.1
	if pad == 0 {
		pad = math.Max(math.Abs(hi)*0.1, 1)
	}
	lo, hi = lo-pad, hi+pad
	const w, h, x0, x1 = 480.0, 56.0, 10.0, 470.0
	x := func(v float64) float64 { return x0 + (v-lo)/(hi-lo)*(x1-x0) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="interval" viewBox="0 0 %g %g" width="%g" height="%g" role="img" aria-label="%s %s against %s">`, w, h, w, h,
		template.HTMLEscapeString(label), template.HTMLEscapeString(iv.String()), template.HTMLEscapeString(model.Num(bound)))
	// The side that satisfies the claim.
	var from, to float64
	switch c.Op {
	case "<", "<=":
		from, to = x0, x(bound)
	case ">", ">=":
		from, to = x(bound), x1
	case "within":
		from, to = x(bound-tol), x(bound+tol)
	}
	fmt.Fprintf(&b, `<rect class="ok-side" x="%.1f" y="6" width="%.1f" height="32"/>`, from, math.Max(to-from, 0))
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="38" x2="%g" y2="38"/>`, x0, x1)
	fmt.Fprintf(&b, `<line class="bound" x1="%.1f" y1="4" x2="%.1f" y2="42"/>`, x(bound), x(bound))
	fmt.Fprintf(&b, `<text class="bound-label" x="%.1f" y="53" text-anchor="middle">%s %s</text>`, x(bound), template.HTMLEscapeString(c.Op), template.HTMLEscapeString(model.Num(bound)))
	a, z := x0, x1
	if iv.Lo != nil {
		a = x(*iv.Lo)
	}
	if iv.Hi != nil {
		z = x(*iv.Hi)
	}
	cls := verdictClass(c.Verdict)
	fmt.Fprintf(&b, `<line class="iv %s" x1="%.1f" y1="22" x2="%.1f" y2="22"/>`, cls, a, z)
	if iv.Lo == nil {
		fmt.Fprintf(&b, `<path class="arrow %s" d="M%g,22 l8,-5 v10 z"/>`, cls, x0)
	}
	if iv.Hi == nil {
		fmt.Fprintf(&b, `<path class="arrow %s" d="M%g,22 l-8,-5 v10 z"/>`, cls, x1)
	}
	fmt.Fprintf(&b, `<circle class="value %s" cx="%.1f" cy="22" r="4"/>`, cls, x(iv.Value))
	fmt.Fprintf(&b, `<text class="value-label" x="%.1f" y="13" text-anchor="middle">%s</text>`, x(iv.Value), template.HTMLEscapeString(model.Num(iv.Value)))
	b.WriteString(`</svg>`)
	return b.String()
}

// withinTolerance reads the tolerance a "within ±T of" rule states (0 when it states none).
func withinTolerance(rule string) float64 {
	_, after, ok := strings.Cut(rule, "within ±")
	if !ok {
		return 0
	}
	var t float64
	fmt.Sscanf(after, "%g", &t)
	return t
}

// verdictClass is the CSS class of a verdict or outcome.
func verdictClass(v string) string {
	switch v {
	case model.VerdictHolds, model.OutcomePass:
		return "good"
	case model.VerdictDoesNotHold, model.OutcomeFail:
		return "bad"
	case model.OutcomeInvalid:
		return "invalid"
	}
	return "unsure"
}

var pageTemplate = template.Must(template.New("report.html").Funcs(template.FuncMap{
	"class": verdictClass,
	"g":     func(v float64) string { return fmt.Sprintf("%g", v) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.S.Scenario}}: run {{.S.RunID}}</title>
<style>
body { font-family: "Liberation Sans", Arial, Helvetica, sans-serif; margin: 0 auto; max-width: 1280px; padding: 0 1.5rem 3rem; color: #1d2329; line-height: 1.45; }
header { border-bottom: 1px solid #d0d7de; margin-bottom: 1rem; }
h1 { font-size: 1.6rem; margin: 1.2rem 0 .4rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #e5e8eb; padding-bottom: .2rem; }
h3 { font-size: 1.05rem; }
.badge { display: inline-block; padding: .1rem .55rem; border-radius: .8rem; font-weight: bold; color: #fff; font-size: .85rem; vertical-align: middle; }
.badge.good { background: #1a7f37; } .badge.bad { background: #cf222e; } .badge.unsure { background: #9a6700; } .badge.invalid { background: #6e7781; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .85rem; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.headline td { font-size: .95rem; }
.claim { border: 1px solid #d0d7de; border-radius: .4rem; padding: .5rem .8rem; margin: .6rem 0; }
.claim .says { font-weight: bold; }
.claim .rule, .claim .reason { font-size: .85rem; color: #424a53; }
.claim .src { font-family: monospace; font-size: .8rem; color: #6e7781; }
svg.interval { display: block; margin: .3rem 0; }
svg.interval .ok-side { fill: #dafbe1; }
svg.interval .axis { stroke: #8c959f; stroke-width: 1; }
svg.interval .bound { stroke: #1d2329; stroke-width: 2; stroke-dasharray: 4 3; }
svg.interval text { font-size: 11px; fill: #1d2329; }
svg.interval .iv { stroke-width: 5; stroke-linecap: round; }
.iv.good { stroke: #1a7f37; } .iv.bad { stroke: #cf222e; } .iv.unsure { stroke: #9a6700; }
.value.good, .arrow.good { fill: #1a7f37; } .value.bad, .arrow.bad { fill: #cf222e; } .value.unsure, .arrow.unsure { fill: #9a6700; }
figure { margin: 1.5rem 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #e5e8eb; }
figure svg text { font-family: "Liberation Sans", Arial, Helvetica, sans-serif !important; }
figcaption { font-size: .9rem; margin-top: .3rem; }
caption { text-align: left; font-size: .9rem; padding-bottom: .3rem; }
figcaption b { display: block; font-size: 1rem; }
.note { color: #424a53; font-size: .9rem; }
nav a { margin-right: .8rem; font-size: .9rem; }
</style>
</head>
<body>
<header>
<h1>{{.S.Scenario}}: run {{.S.RunID}}</h1>
<nav><a href="#answer">Answer</a>{{if .Claims}}<a href="#claims">Claims</a>{{end}}<a href="#ran-out">What ran out</a><a href="#phases">Numbers per phase</a><a href="#figures">Figures</a><a href="#validity">Validity</a></nav>
</header>

<section id="answer">
<h2>The answer</h2>
<p id="verdict">{{if not .S.Valid}}<span class="badge invalid">invalid</span> No verdict: the run is invalid (see <a href="#validity">Validity</a>).{{else if .Claims}}<span class="badge {{class .Outcome}}">{{.Outcome}}</span> Verdict: {{.Outcome}} ({{.Counts}}).{{else}}The scenario states no claims: the measurements only.{{end}}</p>
{{with .S.Description}}<p class="note">{{.}}</p>{{end}}
{{if .Headline}}
<table class="headline" id="headline">
<caption>The endpoint the faults should not touch, in each phase with a fault: success rate and p99 of the successes' latency per layout, each with its 95% interval (the claims' method).</caption>
<tr><th>phase (fault)</th><th>endpoint</th><th>layout</th><th>success rate</th><th>p99 of successes</th><th>requests</th></tr>
{{range .Headline}}<tr>{{if .Span}}<td rowspan="{{.Span}}">{{.Phase}}</td>{{end}}<td>{{.Endpoint}}</td><td>{{.Layout}}</td><td class="num">{{.Rate}}</td><td class="num">{{.P99}}{{with .Why}} ({{.}}){{end}}</td><td class="num">{{.Requests}}</td></tr>
{{end}}</table>
{{end}}
</section>

{{if .Claims}}
<section id="claims">
<h2>Claims</h2>
<p class="note">Each claim drawn on its own number line: the figure measured with its 95% interval against the claim's bound (or, when it compares two figures, their difference against 0); the shaded side satisfies the claim. A claim holds when its whole interval is on that side, does not hold when it is wholly on the other, and is inconclusive otherwise.</p>
{{range .Claims}}<div class="claim" id="claim-{{.C.ID}}">
<div><span class="badge {{class .C.Verdict}}">{{.C.Verdict}}</span> <b>{{.C.ID}}</b> {{with .C.Source}}<span class="src">{{.}}</span>{{end}}</div>
<div class="says">{{.C.Says}}</div>
<div class="rule">{{.Evidence}}</div>
{{.Drawing}}
</div>
{{end}}<p class="note"><b>Method.</b> {{.Method}}</p>
</section>
{{end}}

<section id="ran-out">
<h2>What ran out</h2>
<p class="note"><b>How blame is decided.</b> {{.Blame}}</p>
{{range .S.Configurations}}<h3>{{.Name}}{{if ne .Mode .Name}} ({{.Mode}}){{end}}</h3>
<ul>{{range .Phases}}<li>{{.Name}}: {{.Sentence}}.</li>{{end}}</ul>
{{end}}
</section>

<section id="phases">
<h2>Numbers per phase</h2>
<p class="note">Exact quantiles (nearest rank), in ms, of the successes (a failure that returns at once is not fast service); a request belongs to the phase containing its send time. "ok p99" and "fail p99" are the p99 of successes and of failures (– when there were none); ok/s is successful throughput.</p>
{{range .Phases}}<h3>{{.Name}} ({{g .From}} to {{g .To}} s)</h3>
{{template "table" .Table}}
{{end}}
</section>

<section id="figures">
<h2>Figures</h2>
{{if .OnlyFirst}}<p class="note">The comparisons draw every repetition; the figures of one configuration run are those of its first repetition. Every repetition's are drawn into plots/ by <code>bulkhead report --plots &lt;this folder&gt;</code>.</p>
{{end}}{{range .Figures}}<figure id="{{.ID}}">
{{.SVG}}
<figcaption><b>{{.Title}}</b>{{.About}}</figcaption>
</figure>
{{end}}
</section>

<section id="validity">
<h2>Validity</h2>
<p>{{if .S.Valid}}Valid: the load generator kept to its schedule in every configuration.{{else}}<b>Invalid</b>, so no verdicts are given:{{end}}</p>
{{if not .S.Valid}}<ul>{{range .S.Invalid}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{template "table" .Validity}}
<p class="note">Regenerate this page, report.md, summary.json and the plots from the raw files: <code>bulkhead report &lt;this folder&gt;</code>.</p>
</section>
</body>
</html>
{{define "table"}}<table>
<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .Cells}}<td{{if gt .Span 1}} colspan="{{.Span}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>{{end}}
`))
