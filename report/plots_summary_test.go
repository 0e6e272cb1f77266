package report

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/report/output"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// jsonBucket is a timeline bucket as summary.json spells it, decoded apart from model.Bucket so that
// the test checks the file, not the struct the plots were drawn from.
type jsonBucket struct {
	TS           float64 `json:"t_s"`
	WidthS       float64 `json:"width_s"`
	Requests     int     `json:"requests"`
	Successes    int     `json:"successes"`
	P50MS        float64 `json:"p50_ms"`
	SuccessP50MS float64 `json:"success_p50_ms"`
	SuccessP99MS float64 `json:"success_p99_ms"`
	FailureP99MS float64 `json:"failure_p99_ms"`
	LagCount     int     `json:"lag_count"`
	LagMaxMS     float64 `json:"lag_max_ms"`
	Errors       struct {
		Timeout, Rejected, Upstream, Connection, Other int
		RejectedRefused                                int `json:"rejected_refused"`
		RejectedWaited                                 int `json:"rejected_waited"`
	} `json:"errors"`
	SuccessHist struct {
		From   int   `json:"from"`
		Counts []int `json:"counts"`
	} `json:"success_hist"`
}

type jsonSummary struct {
	LatencyBinsMS  []float64 `json:"latency_bins_ms"`
	Configurations []struct {
		Name     string                  `json:"name"`
		Timeline map[string][]jsonBucket `json:"timeline"`
	} `json:"configurations"`
}

// steps returns the points a step line of value f draws over bs: (start, v), (end, v) for every
// bucket where f has a value.
func steps(bs []jsonBucket, f func(jsonBucket) (float64, bool)) [][2]float64 {
	var pts [][2]float64
	for _, b := range bs {
		if v, ok := f(b); ok && b.Requests > 0 {
			pts = append(pts, [2]float64{b.TS, v}, [2]float64{b.TS + b.WidthS, v})
		}
	}
	return pts
}

// drawn returns the finite points of a series, as the chart draws them.
func drawn(s chart.Series) [][2]float64 {
	var pts [][2]float64
	for i := range s.X {
		if !math.IsNaN(s.Y[i]) {
			pts = append(pts, [2]float64{s.X[i], s.Y[i]})
		}
	}
	return pts
}

// samePoints reports where two point lists first differ ("" when equal within 1e-9).
func samePoints(got, want [][2]float64) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d points drawn, %d in summary.json", len(got), len(want))
	}
	for i := range got {
		if math.Abs(got[i][0]-want[i][0]) > 1e-9 || math.Abs(got[i][1]-want[i][1]) > 1e-9 {
			return fmt.Sprintf("point %d drawn at %v, summary.json says %v", i, got[i], want[i])
		}
	}
	return ""
}

func findJob(t *testing.T, jobs []output.Plot, file string) output.Plot {
	t.Helper()
	for _, j := range jobs {
		if j.File == file {
			return j
		}
	}
	t.Fatalf("no plot %s", file)
	return output.Plot{}
}

func findSeries(t *testing.T, spec chart.Spec, name string) chart.Series {
	t.Helper()
	for _, s := range spec.Series {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("panel %q has no series %q", spec.Title, name)
	return chart.Series{}
}

// The figures are drawn from the numbers summary.json holds: every point of the outcome bands,
// the latency lines of successes and of failures, the send lag, the sent and successful
// throughput and the latency heatmap equals a
// figure of summary.json's timeline. The last case shows the comparison failing where it must:
// the successes' p50 is not the p50 of every request, which rejections pull down to 1 ms.
func TestPlotsDrawSummaryJSON(t *testing.T) {
	dir := goldenWorld().write(t, t.TempDir())
	s, err := generate(t, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var js jsonSummary
	if err := json.Unmarshal(raw, &js); err != nil {
		t.Fatal(err)
	}
	jobs := output.PlotsOf(s)
	for _, c := range js.Configurations {
		outcomes := findJob(t, jobs, c.Name+"-outcomes")
		latency := findJob(t, jobs, c.Name+"-latency")
		lag := findJob(t, jobs, c.Name+"-send-lag")
		throughput := findJob(t, jobs, c.Name+"-throughput")
		heat := findJob(t, jobs, c.Name+"-latency-heatmap")
		for pi, ep := range []string{"/a", "/b"} {
			bs := c.Timeline[ep]
			if got := outcomes.Rows[0][pi].Title; got != ep {
				t.Fatalf("outcome panel %d is %q, want %s", pi, got, ep)
			}
			perSecond := func(n func(jsonBucket) int) func(jsonBucket) (float64, bool) {
				return func(b jsonBucket) (float64, bool) { return float64(n(b)) / b.WidthS, true }
			}
			cases := []struct {
				name  string
				panel chart.Spec
				serie string
				want  func(jsonBucket) (float64, bool)
			}{
				{"outcomes success", outcomes.Rows[0][pi], "success", perSecond(func(b jsonBucket) int { return b.Successes })},
				{"outcomes rejected at once", outcomes.Rows[0][pi], "rejected at once", perSecond(func(b jsonBucket) int { return b.Errors.RejectedRefused })},
				{"outcomes rejected after waiting", outcomes.Rows[0][pi], "rejected after waiting", perSecond(func(b jsonBucket) int { return b.Errors.RejectedWaited })},
				{"outcomes upstream", outcomes.Rows[0][pi], "upstream", perSecond(func(b jsonBucket) int { return b.Errors.Upstream })},
				{"latency of successes p50", latency.Rows[0][0], ep + " p50", func(b jsonBucket) (float64, bool) { return b.SuccessP50MS, b.Successes > 0 }},
				{"latency of successes p99", latency.Rows[0][0], ep + " p99", func(b jsonBucket) (float64, bool) { return b.SuccessP99MS, b.Successes > 0 }},
				{"latency of failures p99", latency.Rows[1][0], ep + " p99", func(b jsonBucket) (float64, bool) { return b.FailureP99MS, b.Requests > b.Successes }},
				{"send lag maximum", lag.Rows[0][0], ep + " maximum", func(b jsonBucket) (float64, bool) { return b.LagMaxMS, b.LagCount > 0 }},
				{"throughput sent", throughput.Rows[0][pi], "sent", perSecond(func(b jsonBucket) int { return b.Requests })},
				{"throughput success", throughput.Rows[0][pi], "success", perSecond(func(b jsonBucket) int { return b.Successes })},
			}
			for _, tc := range cases {
				t.Run(c.Name+" "+ep+" "+tc.name, func(t *testing.T) {
					if diff := samePoints(drawn(findSeries(t, tc.panel, tc.serie)), steps(bs, tc.want)); diff != "" {
						t.Error(diff)
					}
				})
			}
			t.Run(c.Name+" "+ep+" heatmap of successes", func(t *testing.T) {
				d := heat.Rows[0][pi].Density
				if len(d.Counts) != len(bs) {
					t.Fatalf("%d columns drawn for %d buckets", len(d.Counts), len(bs))
				}
				for i, b := range bs {
					if d.XEdges[i] != b.TS || d.XEdges[i+1] != b.TS+b.WidthS {
						t.Fatalf("column %d spans [%g, %g), bucket [%g, %g)", i, d.XEdges[i], d.XEdges[i+1], b.TS, b.TS+b.WidthS)
					}
					for bin, n := range d.Counts[i] {
						want := 0
						if k := bin - b.SuccessHist.From; k >= 0 && k < len(b.SuccessHist.Counts) {
							want = b.SuccessHist.Counts[k]
						}
						if int(n) != want {
							t.Fatalf("bucket %d bin %d: %g drawn, %d in summary.json", i, bin, n, want)
						}
					}
				}
				if !slicesEqual(d.YEdges, js.LatencyBinsMS) {
					t.Errorf("Y edges %v, summary.json's bins %v", d.YEdges, js.LatencyBinsMS)
				}
			})
		}
		t.Run(c.Name+" /a successes' p50 is not every request's p50", func(t *testing.T) {
			all := steps(c.Timeline["/a"], func(b jsonBucket) (float64, bool) { return b.P50MS, b.Successes > 0 })
			if diff := samePoints(drawn(findSeries(t, latency.Rows[0][0], "/a p50")), all); diff == "" {
				t.Error("the successes' p50 equals every request's p50: rejections would pull it down")
			}
		})
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(a[i]-b[i]) > 1e-9*math.Abs(b[i]) {
			return false
		}
	}
	return true
}
