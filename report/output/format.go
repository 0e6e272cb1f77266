package output

import (
	"fmt"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/model"
)

func f1(v float64) string { return fmt.Sprintf("%.1f", v) }

// ms2 writes a small duration in ms with two decimals (a send lag of 0.41 ms reads apart from 0).
func ms2(v float64) string { return fmt.Sprintf("%.2f", v) }

// f1n is f1 for a figure over n requests: "–" when there were none, rather than a 0.0 that reads
// as a measured latency.
func f1n(v float64, n int) string {
	if n == 0 {
		return "–"
	}
	return f1(v)
}

// rate1 writes a success rate with one decimal, never rounding a rate with failures up to
// 100.0% nor one with successes down to 0.0%; "–" for no requests.
func rate1(st *model.Stats) string {
	if st.Requests == 0 {
		return "–"
	}
	v := fmt.Sprintf("%.1f%%", 100*st.SuccessRate)
	switch {
	case st.Successes < st.Requests && v == "100.0%":
		return ">99.9%"
	case st.Successes > 0 && v == "0.0%":
		return "<0.1%"
	}
	return v
}

// span2 writes a range "lo-hi", or one number when they are equal.
func span2(lo, hi float64, format string) string {
	if lo == hi {
		return fmt.Sprintf(format, lo)
	}
	return fmt.Sprintf(format+"–"+format, lo, hi)
}

func ci(f model.Figure, prec int) string {
	if f.CI95 == nil {
		return fmt.Sprintf("%.*f", prec, f.Mean)
	}
	return fmt.Sprintf("%.*f ± %.*f", prec, f.Mean, prec, *f.CI95)
}

// spread writes a figure across repetitions: "0.440 ± 0.020 (0.410 / 0.440 / 0.470)".
func spread(f model.Figure, prec int) string {
	return fmt.Sprintf("%s (%.*f / %.*f / %.*f)", ci(f, prec), prec, f.Min, prec, f.Median, prec, f.Max)
}

func verdictMark(v string) string {
	if v == model.VerdictNotMeasurable {
		return v
	}
	return "**" + v + "**"
}

// countsText writes "3 holds, 1 inconclusive".
func countsText(counts map[string]int) string {
	var parts []string
	for _, k := range []string{model.VerdictHolds, model.VerdictDoesNotHold, model.VerdictInconclusive, model.VerdictNotMeasurable} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		return "no claims"
	}
	return strings.Join(parts, ", ")
}

// mdCell keeps a table cell on one line and its pipes literal.
func mdCell(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "\n", " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func mb(b float64) string { return fmt.Sprintf("%.1f MB", b/(1<<20)) }

func pct1(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }

// share writes a share as a percentage with one decimal, never rounding a share below 1 up to
// 100.0% nor one above 0 down to 0.0%.
func share(v float64) string {
	s := fmt.Sprintf("%.1f", 100*v)
	switch {
	case v < 1 && s == "100.0":
		return ">99.9"
	case v > 0 && s == "0.0":
		return "<0.1"
	}
	return s
}

// rateIv writes a rate with its interval as percentages: "39.2% [35.1, 43.0]"; "–" for nil.
func rateIv(iv *model.Interval) string {
	if iv == nil {
		return "–"
	}
	lo, hi := "−∞", "∞"
	if iv.Lo != nil {
		lo = share(*iv.Lo)
	}
	if iv.Hi != nil {
		hi = share(*iv.Hi)
	}
	return fmt.Sprintf("%s%% [%s, %s]", share(iv.Value), lo, hi)
}

// msIv writes a latency in ms with its interval: "492 ms [470, ∞]", "7.5 ms [6.9, 8.1]"; "–"
// for nil.
func msIv(iv *model.Interval) string {
	if iv == nil {
		return "–"
	}
	lo, hi := "−∞", "∞"
	if iv.Lo != nil {
		lo = msNum(*iv.Lo)
	}
	if iv.Hi != nil {
		hi = msNum(*iv.Hi)
	}
	return fmt.Sprintf("%s ms [%s, %s]", msNum(iv.Value), lo, hi)
}

// msNum writes a latency in ms: one decimal under 10 ms, whole ms above.
func msNum(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
