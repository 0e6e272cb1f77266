package chart

import (
	"path/filepath"
	"testing"
)

// BenchmarkLines measures drawing and writing one typical chart (PNG and SVG), the unit of the
// report's plotting cost.
func BenchmarkLines(b *testing.B) {
	path := filepath.Join(b.TempDir(), "chart")
	s := latencySpec()
	b.ReportAllocs()
	for b.Loop() {
		if err := Lines(path, s); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPanelsStacked measures a two-panel stacked outcomes chart.
func BenchmarkPanelsStacked(b *testing.B) {
	path := filepath.Join(b.TempDir(), "chart")
	specs := []Spec{outcomesSpec("shared", false), outcomesSpec("split", true)}
	b.ReportAllocs()
	for b.Loop() {
		if err := Panels(path, "outcomes", specs, KindStacked); err != nil {
			b.Fatal(err)
		}
	}
}
