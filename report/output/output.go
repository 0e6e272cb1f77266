package output

import (
	"fmt"
	"path/filepath"

	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// An Output renders a judged run: a file in the run folder (report.md, summary.json, the
// plots), or lines for a person or a script. Package report runs a list of them in order
// (report.Options.Outputs); each is one file of this package with its test.
type Output interface {
	// Name names the output ("markdown", "json", "plots", "text", ...).
	Name() string
	// Write renders s, the Summary of the run folder dir. Files are written into dir, each
	// atomically, never inside a configuration folder; an output that prints writes to the
	// writer it was made with. It blocks until everything is written.
	Write(s *model.Summary, dir string) error
}

// Defaults returns the outputs bulkhead report writes into the run folder, in order: the plots,
// report.md (which links them), report.html (which inlines them) and summary.json.
func Defaults() []Output {
	return []Output{Plots{}, Markdown{}, HTML{}, JSON{}}
}

// Markdown writes report.md: a report readable on its own, with the plots linked.
type Markdown struct {
	// NoPlotFiles links each figure in report.html instead of plots/*.png, for a report that
	// does not draw the plot files (bulkhead report without --plots).
	NoPlotFiles bool
}

// Name is "markdown".
func (Markdown) Name() string { return "markdown" }

// Write writes dir/report.md atomically. It depends only on s, so the same run always renders
// the same text.
func (m Markdown) Write(s *model.Summary, dir string) error {
	if err := rundir.WriteFile(filepath.Join(dir, rundir.ReportFile), []byte(markdown(s, PlotsOf(s), m.NoPlotFiles))); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Plots draws every figure of the run into dir/plots, as PNG and SVG (see Plots).
type Plots struct{}

// Name is "plots".
func (Plots) Name() string { return "plots" }

// Write draws the figures, on as many goroutines as GOMAXPROCS; it fails when dir/plots is a
// symbolic link, and returns the first figure's error in order (the others are still drawn).
func (Plots) Write(s *model.Summary, dir string) error {
	plots := filepath.Join(dir, rundir.PlotsDir)
	if err := rundir.NotSymlink(plots); err != nil {
		return err
	}
	return drawAll(plots, PlotsOf(s))
}

var (
	_ Output = Markdown{}
	_ Output = Plots{}
	_ Output = JSON{}
	_ Output = Text{}
	_ Output = VerdictJSON{}
	_ Output = HTML{}
	_ Output = JUnit{}
	_ Output = SummaryMD{}
	_ Output = Annotations{}
)
