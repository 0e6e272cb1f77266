// Package output renders a judged run (a model.Summary) behind one interface, Output: report.md
// (Markdown), summary.json (JSON), the figures as PNG and SVG (Plots, drawn with package chart),
// the lines for a terminal (Text) and the verdict block for scripts (VerdictJSON), and the
// comparison of several runs (WriteComparison). Each output is one file with its test; package
// report runs the list given in its Options, Defaults() when none is.
package output
