// Package chart draws the report's figures with gonum.org/v1/plot: latency lines over time,
// stacked outcomes over time, latency distributions on a "nines" axis, latency heatmaps over time
// (Density), and several of these side by side on shared axes (Panels) or in rows (Grid).
//
// Every call renders one figure and writes it twice, as path+".png" (1200x600 px at 96 dpi, or
// wider for panels) and path+".svg" (fonts embedded, so it renders the same anywhere). Files are
// written atomically: each is rendered in memory, written to a temporary file in the same folder
// and renamed, so a reader never sees a half-written image. Parent folders are created.
//
// The package is built for readability at a glance:
//   - a title, axis labels (the caller gives the units; time and percentile axes have defaults),
//     and a legend below the data so it never covers a line;
//   - log Y axes labelled 0.1, 1, 10, 100, 1000 ... with values <= 0 drawn on the floor of the
//     axis instead of panicking;
//   - windows (phases) named at the top, shaded when they hold a fault, their labels cut short
//     rather than run into a neighbour's;
//   - a line drawn over much of an earlier one dashed, so neither hides the other;
//   - colours keyed by series name, so "/a", "/b", "shared", "split" and the outcome names
//     ("ok", "timeout", "rejected", "upstream", "connection", "other") have the same colour in
//     every chart (see ColorFor). Words after the first select a dash pattern: "p99" solid,
//     "p50" dashed, "p90" dotted, so "/a p50" and "/a p99" share /a's colour.
//
// Data may be empty or contain NaN and ±Inf values: those points are skipped (a line breaks
// there), a series without points keeps its legend entry, and an empty chart still draws its axes.
// The calls hold no shared state and are safe to use from several goroutines.
package chart
