package report

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/bulkheadlab/bulkhead/internal/browser"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir/rundirtest"
)

// htmlRun writes the hypothesis world with resources and claims, and its report.html.
func htmlRun(t *testing.T) (string, []output.Plot) {
	t.Helper()
	dir := claimsWorld().write(t, t.TempDir())
	writeClaims(t, dir, claimsScenario+
		claimYAML("shared-starves-b", "{metric: success_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 0.6\n")+
		claimYAML("split-b-fast", "{metric: p99_ms, configuration: split, phase: slow-a, endpoint: /b}", "    op: \"<\"\n    value: 50\n")+
		claimYAML("b-level", "{metric: error_rate, configuration: shared, phase: slow-a, endpoint: /b}", "    op: \">=\"\n    than: {metric: error_rate, configuration: shared, phase: slow-a, endpoint: /a}\n    factor: 0.5\n"))
	rundirtest.Seal(t, dir)
	s, err := GenerateWith(dir, Options{Outputs: []output.Output{output.HTML{}}})
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, output.HTMLFile), output.PlotsOf(s)
}

// report.html is one self-contained file: no script, nothing loaded from anywhere (the only
// URLs are SVG's namespace names), under 2 MB for the hypothesis, every figure inline.
func TestHTMLSelfContained(t *testing.T) {
	path, plots := htmlRun(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	if len(b) > 2<<20 {
		t.Errorf("report.html is %d bytes, want under 2 MB", len(b))
	}
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Error("report.html has a script")
	}
	for _, m := range regexp.MustCompile(`(?i)(src|href)\s*=\s*"([^"#][^"]*)"`).FindAllStringSubmatch(page, -1) {
		t.Errorf("report.html refers to %s=%q: it must load nothing", m[1], m[2])
	}
	if n := strings.Count(page, "<figure"); n != len(plots) {
		t.Errorf("%d figures inline, want %d (every plot)", n, len(plots))
	}
	for _, p := range plots {
		if !strings.Contains(page, `id="fig-`+p.File+`"`) || !strings.Contains(page, p.Title) {
			t.Errorf("figure %s or its caption missing", p.File)
		}
	}
}

// In a real browser (headless Chromium) the page loads without a console error and without a
// request beyond itself, shows the headline, and every figure's section renders as a picture,
// not a blank box.
func TestHTMLInBrowser(t *testing.T) {
	path, plots := htmlRun(t)
	ctx := browser.Context(t, 2*time.Minute)
	var mu sync.Mutex
	var problems, requests []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		if p := problem(ev); p != "" {
			problems = append(problems, p)
		}
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			requests = append(requests, e.Request.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	verdict, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("verdict")))
	if err != nil {
		t.Fatal(err)
	}
	headline, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("headline")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(verdict, "Verdict: fail") || !strings.Contains(headline, "slow-a (A +450ms)") || !strings.Contains(headline, "55.0%") {
		t.Errorf("verdict %q, headline %q: want the verdict and /b's figures in slow-a", verdict, headline)
	}
	for _, p := range plots {
		shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("fig-"+p.File)))
		if err != nil {
			t.Fatalf("figure %s: %v", p.File, err)
		}
		if why := blank(shot); why != "" {
			t.Errorf("figure %s renders blank: %s", p.File, why)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("the browser reported:\n%s", strings.Join(problems, "\n"))
	}
	for _, u := range requests {
		if u != "file://"+path {
			t.Errorf("the page requested %s: it must load nothing", u)
		}
	}
}

// problem describes a browser event that reports a problem: a console error or warning, an
// uncaught exception, an error or warning of the browser's log; "" for any other event.
func problem(ev any) string {
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			return fmt.Sprintf("console.%s %s", e.Type, strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		return "exception: " + e.ExceptionDetails.Text
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
			return fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL)
		}
	}
	return ""
}

// blank says why a screenshot is blank (one colour almost everywhere), "" when it shows a
// picture: at least 2% of its pixels differ from its most common colour and it has more than a
// dozen colours.
func blank(b []byte) string {
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return "not a PNG: " + err.Error()
	}
	counts := map[[4]uint32]int{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			c0, c1, c2, c3 := img.At(x, y).RGBA()
			counts[[4]uint32{c0, c1, c2, c3}]++
		}
	}
	top, total := 0, 0
	for _, n := range counts {
		top, total = max(top, n), total+n
	}
	if total == 0 || float64(total-top) < 0.02*float64(total) || len(counts) <= 12 {
		return fmt.Sprintf("%d colours, %.1f%% of the pixels off the background", len(counts), 100*float64(total-top)/float64(max(total, 1)))
	}
	return ""
}

// The browser check can fail: a page that logs an error is caught, and a blank image is told
// from a picture.
func TestHTMLBrowserCheckCatchesErrors(t *testing.T) {
	ctx := browser.Context(t, time.Minute)
	var mu sync.Mutex
	var errs []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if p := problem(ev); p != "" {
			mu.Lock()
			errs = append(errs, p)
			mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "bad.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><div id="box" style="width:200px;height:100px;background:#fff"></div><script>console.error("broken")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatal(err)
	}
	shot, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.ID("box")))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) == 0 {
		t.Error("a console.error went unnoticed")
	}
	if blank(shot) == "" {
		t.Error("a white box passed for a picture")
	}
}
