package chart_test

import (
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/bulkheadlab/bulkhead/report/chart"
)

// Draw /b's p99 latency over a run with a latency fault on A, on a log axis with the client
// timeout as a reference line.
func ExampleLines() {
	dir, err := os.MkdirTemp("", "chart-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	var t, p99 []float64
	for s := 0; s < 30; s++ {
		t = append(t, float64(s))
		if s >= 10 && s < 20 {
			p99 = append(p99, 480) // stuck behind the shared pool
		} else {
			p99 = append(p99, 25)
		}
	}
	path := filepath.Join(dir, "plots", "b-p99")
	err = chart.Lines(path, chart.Spec{
		Title:   "shared pool: /b p99 latency",
		YLabel:  "latency (ms)",
		LogY:    true,
		Series:  []chart.Series{{Name: "/b p99", X: t, Y: p99}},
		Windows: []chart.Window{{Start: 10, End: 20, Label: "A +450 ms"}},
		HLines:  []chart.Series{{Name: "client timeout", Y: []float64{500}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, ext := range []string{".png", ".svg"} {
		fi, err := os.Stat(path + ext)
		fmt.Println(filepath.Base(path+ext), err == nil && fi.Size() > 0)
	}
	// Output:
	// b-p99.png true
	// b-p99.svg true
}
