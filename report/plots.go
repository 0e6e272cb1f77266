package report

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/report/chart"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// plotJob is one figure: its file name inside plots/ (without extension), its caption, and how to
// draw it.
type plotJob struct {
	file, title string
	draw        func(path string) error
}

// drawAll draws every job into dir, stopping at the first error.
func drawAll(dir string, jobs []plotJob) error {
	for _, j := range jobs {
		if err := j.draw(filepath.Join(dir, j.file)); err != nil {
			return fmt.Errorf("plot %s: %w", j.file, err)
		}
	}
	return nil
}

// slug turns an endpoint path into a file-name part ("/a" -> "a").
func slug(path string) string { return strings.TrimSuffix(rundir.RawFileName(path), ".json") }

// windows shades every phase that has faults. A time line without any fault (its phases change
// the load instead, such as a webhook burst) shades every phase after the first, labelled with
// its name, so the plots still show where the phases begin.
func windows(c *Configuration) []chart.Window {
	var ws []chart.Window
	if len(faultedDeps(c)) == 0 {
		for i, ph := range c.Phases {
			if i > 0 {
				ws = append(ws, chart.Window{Start: ph.StartS, End: ph.EndS, Label: "phase " + ph.Name})
			}
		}
		return ws
	}
	for _, ph := range c.Phases {
		if len(ph.Faults) == 0 {
			continue
		}
		var d []string
		for _, f := range ph.Faults {
			d = append(d, f.String())
		}
		ws = append(ws, chart.Window{Start: ph.StartS, End: ph.EndS, Label: strings.Join(d, ", ")})
	}
	return ws
}

func endpointPaths(c *Configuration) []string {
	if v := viewPaths(c); v != nil {
		return v // many endpoints, grouped (groups.go)
	}
	var ps []string
	for _, e := range c.Endpoints {
		ps = append(ps, e.Path)
	}
	return ps
}

// timeSeries extracts one figure of a timeline as a series, X at the bucket middle.
func timeSeries(name string, bs []Bucket, width float64, f func(Bucket) float64) chart.Series {
	s := chart.Series{Name: name}
	for _, b := range bs {
		if b.Requests == 0 {
			continue
		}
		s.X = append(s.X, b.TS+width/2)
		s.Y = append(s.Y, f(b))
	}
	return s
}

// stepSeries extracts one figure of a timeline as a step line: each bucket's value held flat
// across the bucket [start, start+width), so a change shows in the bucket where it happened
// rather than sloping back into the one before (a fault starting at 5 s no longer seems to
// start at 4.5 s). Buckets without requests break the line.
func stepSeries(name string, bs []Bucket, width float64, f func(Bucket) float64) chart.Series {
	s := chart.Series{Name: name}
	for i, b := range bs {
		if b.Requests == 0 {
			if len(s.X) > 0 && !math.IsNaN(s.Y[len(s.Y)-1]) {
				s.X = append(s.X, b.TS)
				s.Y = append(s.Y, math.NaN())
			}
			continue
		}
		if i > 0 && bs[i-1].Requests > 0 && bs[i-1].TS+width < b.TS {
			// A gap in the timeline (a missing bucket): break the line.
			s.X = append(s.X, b.TS)
			s.Y = append(s.Y, math.NaN())
		}
		y := f(b)
		s.X = append(s.X, b.TS, b.TS+width)
		s.Y = append(s.Y, y, y)
	}
	return s
}

// plotJobs lists the figures of one run: per configuration latency, outcomes and resources over
// time; the configurations side by side; a percentile curve per endpoint.
func (s *Summary) plotJobs() []plotJob {
	var jobs []plotJob
	w := s.BucketS
	for i := range s.Configurations {
		c := &s.Configurations[i]
		jobs = append(jobs, plotJob{file: c.Name + "-latency", title: c.Name + ": p50 and p99 latency over time",
			draw: func(path string) error {
				spec := chart.Spec{Title: c.Name + ": latency per endpoint (p50, p99 of every request, failures included)", YLabel: "latency (ms)", LogY: true, Windows: windows(c)}
				for _, ep := range endpointPaths(c) {
					spec.Series = append(spec.Series,
						stepSeries(ep+" p50", c.Timeline[ep], w, func(b Bucket) float64 { return b.P50MS }),
						stepSeries(ep+" p99", c.Timeline[ep], w, func(b Bucket) float64 { return b.P99MS }))
				}
				spec.HLines = []chart.Series{{Name: "client timeout", Y: []float64{c.ClientTimeoutMS}}}
				return chart.Lines(path, spec)
			}})
		// The panels share one Y range, so when the endpoints' rates differ by more than
		// shareFrom a slow endpoint's failures would be a sliver: draw shares of each endpoint's
		// requests instead.
		shares := rateSpread(c) > shareFrom
		outTitle, outLabel := c.Name+": outcomes over time (stacked, per endpoint)", "requests per second"
		if shares {
			outTitle, outLabel = c.Name+": outcomes over time (stacked share of each endpoint's requests)", "share of requests"
		}
		jobs = append(jobs, plotJob{file: c.Name + "-outcomes", title: outTitle,
			draw: func(path string) error {
				var specs []chart.Spec
				for _, ep := range endpointPaths(c) {
					bs := c.Timeline[ep]
					per := func(n func(Bucket) int) func(Bucket) float64 {
						if shares {
							return func(b Bucket) float64 { return float64(n(b)) / float64(b.Requests) }
						}
						return func(b Bucket) float64 { return float64(n(b)) / w }
					}
					specs = append(specs, chart.Spec{Title: ep, YLabel: outLabel, Windows: windows(c), Series: []chart.Series{
						timeSeries("success", bs, w, per(func(b Bucket) int { return b.Successes })),
						timeSeries("timeout", bs, w, per(func(b Bucket) int { return b.Errors.Timeout })),
						timeSeries("rejected", bs, w, per(func(b Bucket) int { return b.Errors.Rejected })),
						timeSeries("upstream", bs, w, per(func(b Bucket) int { return b.Errors.Upstream })),
						timeSeries("connection/other", bs, w, per(func(b Bucket) int { return b.Errors.Connection + b.Errors.Other })),
					}})
				}
				return chart.Panels(path, outTitle, specs, chart.KindStacked)
			}})
		if res := resourceSeries(c); len(res.Series) > 0 {
			jobs = append(jobs, plotJob{file: c.Name + "-resources", title: c.Name + ": pool occupancy and queue depth against capacity",
				draw: func(path string) error { return chart.Lines(path, res) }})
		}
	}
	groups := firstOfEachConfig(s.Configurations)
	if len(groups) > 1 {
		focus := "every endpoint"
		if len(s.Roles.Unaffected) > 0 {
			focus = "unaffected: " + strings.Join(s.Roles.Unaffected, ", ")
		}
		var names []string
		for _, c := range groups {
			names = append(names, c.Name)
		}
		versus := strings.Join(names, " vs ")
		side := func(file, what, ylabel string, logY bool, f func(Bucket) float64) plotJob {
			return plotJob{file: file, title: fmt.Sprintf("%s per configuration, side by side (%s)", what, focus),
				draw: func(path string) error {
					var specs []chart.Spec
					for _, c := range groups {
						title := c.Name
						if c.Mode != "" && c.Mode != c.Name {
							title += " (" + c.Mode + ")"
						}
						spec := chart.Spec{Title: title, YLabel: ylabel, LogY: logY, Windows: windows(c)}
						for _, ep := range endpointPaths(c) {
							spec.Series = append(spec.Series, stepSeries(ep, c.Timeline[ep], w, f))
						}
						specs = append(specs, spec)
					}
					return chart.Panels(path, fmt.Sprintf("%s, %s (%s)", what, versus, focus), specs, chart.KindLines)
				}}
		}
		jobs = append(jobs,
			side("compare-p99", "p99 latency", "p99 latency (ms)", true, func(b Bucket) float64 { return b.P99MS }),
			side("compare-success", "success rate", "success rate", false, func(b Bucket) float64 { return b.SuccessRate }))
	}
	if len(s.Configurations) > 0 {
		for _, ep := range endpointPaths(&s.Configurations[0]) {
			jobs = append(jobs, plotJob{file: "percentiles-" + slug(ep), title: ep + ": latency distribution per phase",
				draw: func(path string) error {
					var specs []chart.Spec
					for _, c := range groups {
						spec := chart.Spec{Title: c.Name}
						for _, ph := range c.Phases {
							st := ph.Endpoints[ep]
							if st == nil || len(st.curve) == 0 {
								continue
							}
							sr := chart.Series{Name: ph.Name}
							for _, p := range st.curve {
								sr.X = append(sr.X, p.Percentile)
								sr.Y = append(sr.Y, p.MS)
							}
							spec.Series = append(spec.Series, sr)
						}
						specs = append(specs, spec)
					}
					return chart.Panels(path, ep+": latency distribution per phase", specs, chart.KindPercentiles)
				}})
		}
	}
	return jobs
}

// firstOfEachConfig returns the first repetition of each configuration.
func firstOfEachConfig(cfgs []Configuration) []*Configuration {
	var out []*Configuration
	for _, name := range groupNames(cfgs) {
		out = append(out, group(cfgs, name)[0])
	}
	return out
}

// farCapacity: a capacity line more than this many times the largest in-use value of a resource
// plot is left out (see resourceSeries).
const farCapacity = 10

// shareFrom is the spread of endpoint rates (largest / smallest) above which the outcome panels
// show shares of requests rather than requests per second.
const shareFrom = 5

// rateSpread is the largest endpoint rate of c over the smallest (1 with one endpoint or none).
func rateSpread(c *Configuration) float64 {
	lo, hi := 0.0, 0.0
	for _, ep := range endpointPaths(c) {
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
// capacity as a dashed line. Pools and queues are drawn last, over the other resources (the calls
// in flight to a dependency often equal its pool's occupancy and would hide it); a pool and the
// calls to its dependency of the same capacity share one capacity line.
func resourceSeries(c *Configuration) chart.Spec {
	spec := chart.Spec{Title: c.Name + ": resources in use against capacity", YLabel: "in use (slots, queued, connections)", Windows: windows(c)}
	idx := map[string]int{}
	caps := map[string]int{}
	peak := 0
	var names []string
	for _, r := range c.resources {
		bounded := r.Capacity > 0 || strings.HasPrefix(r.Resource, "pool:") || strings.HasPrefix(r.Resource, "queue:")
		if !bounded {
			continue
		}
		i, ok := idx[r.Resource]
		if !ok {
			i = len(spec.Series)
			idx[r.Resource] = i
			names = append(names, r.Resource)
			spec.Series = append(spec.Series, chart.Series{Name: r.Resource})
		}
		spec.Series[i].X = append(spec.Series[i].X, r.T.Seconds())
		spec.Series[i].Y = append(spec.Series[i].Y, float64(r.InUse))
		caps[r.Resource] = max(caps[r.Resource], r.Capacity)
		peak = max(peak, r.InUse)
	}
	slices.Sort(names)
	// A capacity more than farCapacity times anything in use (an inbound cap of 5000 against
	// pools of 2) would squash every series to the floor: leave its line out and write it into
	// the series' name instead.
	for i, sr := range spec.Series {
		if k := caps[sr.Name]; k > farCapacity*max(peak, 1) {
			spec.Series[i].Name = fmt.Sprintf("%s (capacity %d, off the scale)", sr.Name, k)
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
	// One capacity line per capacity and member: pool:A and calls:A of 5 slots are one line,
	// named (and so coloured) after the pool; unrelated resources keep their own line.
	type capKey struct {
		capacity int
		member   string
	}
	same := map[capKey][]string{}
	var keys []capKey
	for _, n := range names {
		if caps[n] <= 0 {
			continue
		}
		_, member, _ := strings.Cut(n, ":")
		k := capKey{caps[n], member}
		if same[k] == nil {
			keys = append(keys, k)
		}
		same[k] = append(same[k], n)
	}
	for _, k := range keys {
		ns := same[k]
		slices.SortStableFunc(ns, func(a, b string) int {
			switch {
			case top(a) == top(b):
				return 0
			case top(a):
				return -1
			}
			return 1
		})
		name := ns[0] + " capacity"
		if len(ns) > 1 {
			name += " (= " + strings.Join(ns[1:], ", ") + ")"
		}
		spec.HLines = append(spec.HLines, chart.Series{Name: name, Y: []float64{float64(k.capacity)}})
	}
	return spec
}

// compareJobs lays several runs side by side: per run, the unaffected endpoint's p99 and success
// rate over time with one series per configuration.
func compareJobs(sums []*Summary) []plotJob {
	side := func(file, what, ylabel string, logY bool, f func(Bucket) float64) plotJob {
		return plotJob{file: file, title: what + " of the unaffected endpoint, per run",
			draw: func(path string) error {
				var specs []chart.Spec
				for _, s := range sums {
					spec := chart.Spec{Title: s.RunID, YLabel: ylabel, LogY: logY}
					eps := s.Roles.Unaffected
					for _, c := range firstOfEachConfig(s.Configurations) {
						if len(eps) == 0 {
							eps = endpointPaths(c)
						}
						if len(spec.Windows) == 0 {
							spec.Windows = windows(c)
						}
						for _, ep := range eps {
							spec.Series = append(spec.Series, stepSeries(c.Name+" "+ep, c.Timeline[ep], s.BucketS, f))
						}
					}
					specs = append(specs, spec)
				}
				return chart.Panels(path, what+" of the unaffected endpoint, per run", specs, chart.KindLines)
			}}
	}
	return []plotJob{
		side("compare-runs-p99", "p99 latency", "p99 latency (ms)", true, func(b Bucket) float64 { return b.P99MS }),
		side("compare-runs-success", "success rate", "success rate", false, func(b Bucket) float64 { return b.SuccessRate }),
	}
}
