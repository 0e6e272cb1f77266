package verdict

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/confidence"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/report/attribution"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// How the engine computes each metric of claim.Catalogue: two functions per entry, registered
// by its name (TestEveryCatalogueMetricIsImplemented fails when an entry lacks one).

// metricImpl computes one metric on one repetition (a configuration's run) and phase.
type metricImpl struct {
	// point returns the figure, or why it has none in this repetition.
	point func(x *repetitionOf, m claim.Measure) (float64, string)
	// spread returns how the figure varies within the repetition (v is point's value).
	spread func(x *repetitionOf, m claim.Measure, v float64) spread
	// counts returns a rate's numerator and denominator (nil for any other figure).
	counts func(x *repetitionOf, m claim.Measure) (float64, float64)
	// kind is the catalogue's interval method it implements.
	kind claim.Interval
	// q and values are a quantile's: which quantile, of which of a block's latencies. A claim
	// holding it to a number is judged through the share of those values at or below the
	// number (shareMetric).
	q      float64
	values func(b *blockStat) []float64
}

// repetitionOf is what a metric is computed on: one repetition of a configuration, one phase,
// and the engine's cache of its blocks.
type repetitionOf struct {
	e  *engine
	c  *model.Configuration
	ph *model.Phase
}

// spread is a figure's variation within one repetition: block scores (see confidence), or a
// point figure's resolution, or none (a maximum).
type spread struct {
	scores []float64
	hiOpen bool
	// support is a quantile's effective number of requests in the repetition (summed over the
	// repetitions, it decides whether the figure has an upper end: confidence.Open).
	support, quantile float64
	point             bool
	resolution        float64
	// note says something the reader needs about the value (a level never reached).
	note string
}

// impls holds the registered metrics by subject and name.
var impls = map[claim.Subject]map[string]metricImpl{claim.OfEndpoint: {}, claim.OfResource: {}}

func register(s claim.Subject, name string, m metricImpl) { impls[s][name] = m }

// implOf returns the functions of a catalogue entry (through its alias).
func implOf(entry claim.Metric) (metricImpl, bool) {
	m, ok := impls[entry.Subject][entry.Canonical()]
	return m, ok
}

func init() {
	// Rates of an endpoint's requests: x of n in each block.
	rate := func(name string, num, den func(b *blockStat) float64) {
		register(claim.OfEndpoint, name, requestMetric(claim.IntervalRate, func(x *repetitionOf, m claim.Measure) ([]float64, []float64) {
			return perBlock(x.blocks(m), num), perBlock(x.blocks(m), den)
		}, true))
	}
	rate("success_rate", func(b *blockStat) float64 { return float64(b.succ) }, func(b *blockStat) float64 { return float64(b.req) })
	rate("error_rate", func(b *blockStat) float64 { return float64(b.fails()) }, func(b *blockStat) float64 { return float64(b.req) })
	rate("rejected_share", func(b *blockStat) float64 { return float64(b.rejected) }, func(b *blockStat) float64 { return float64(b.fails()) })
	blame := requestMetric(claim.IntervalRate, (*repetitionOf).blamed, true)
	point := blame.point
	blame.point = func(x *repetitionOf, m claim.Measure) (float64, string) {
		if x.c.Blame == nil {
			return 0, "the run's failures were not attributed to resources"
		}
		return point(x, m)
	}
	register(claim.OfEndpoint, "attributed_share", blame)
	// Counts of an endpoint's requests.
	count := func(name string, f func(b *blockStat) int) {
		register(claim.OfEndpoint, name, countMetric(func(b *blockStat) float64 { return float64(f(b)) }))
	}
	count("requests", func(b *blockStat) int { return b.req })
	count("successes", func(b *blockStat) int { return b.succ })
	count("failures", (*blockStat).fails)
	count("timeouts", func(b *blockStat) int { return b.timeout })
	count("rejected", func(b *blockStat) int { return b.rejected })
	count("rejected_refused", func(b *blockStat) int { return b.refused })
	count("rejected_waited", func(b *blockStat) int { return b.rejected - b.refused })
	count("upstream", func(b *blockStat) int { return b.upstream })
	count("connection", func(b *blockStat) int { return b.conn })
	count("other", func(b *blockStat) int { return b.other })
	register(claim.OfEndpoint, "throughput", requestMetric(claim.IntervalMean, func(x *repetitionOf, m claim.Measure) ([]float64, []float64) {
		bs := x.blocks(m)
		return perBlock(bs, func(b *blockStat) float64 { return float64(b.succ) }), perBlock(bs, func(b *blockStat) float64 { return b.dur })
	}, false))
	// Latency of the successes, of the failures and of the rejections.
	for prefix, of := range map[string]func(b *blockStat) []float64{
		"":          func(b *blockStat) []float64 { return b.ok },
		"failure_":  func(b *blockStat) []float64 { return b.fail },
		"rejected_": func(b *blockStat) []float64 { return b.rej },
	} {
		for name, q := range map[string]float64{"p50_ms": 0.5, "p90_ms": 0.9, "p95_ms": 0.95, "p99_ms": 0.99, "p999_ms": 0.999} {
			register(claim.OfEndpoint, prefix+name, quantileMetric(q, of))
		}
		register(claim.OfEndpoint, prefix+"mean_ms", requestMetric(claim.IntervalMean, func(x *repetitionOf, m claim.Measure) ([]float64, []float64) {
			bs := x.blocks(m)
			return perBlock(bs, func(b *blockStat) float64 { return sum(of(b)) }), perBlock(bs, func(b *blockStat) float64 { return float64(len(of(b))) })
		}, false))
		register(claim.OfEndpoint, prefix+"max_ms", maxMetric(of))
	}
	// Event times of an endpoint, read once from the repetition's time line.
	first := func(name string, get func(st *model.Stats) *float64, none string) {
		register(claim.OfEndpoint, name, metricImpl{kind: claim.IntervalPoint,
			point: func(x *repetitionOf, m claim.Measure) (float64, string) {
				st := x.ph.Endpoints[m.Endpoint]
				if st == nil || st.Requests == 0 {
					return 0, "no requests were sent"
				}
				if v := get(st); v != nil {
					return *v, ""
				}
				return 0, none
			},
			// The send time of a request is exact on its time line.
			spread: func(*repetitionOf, claim.Measure, float64) spread { return spread{point: true} },
		})
	}
	first("first_failure_s", func(st *model.Stats) *float64 { return st.FirstFailureS }, "no request failed")
	first("first_rejection_s", func(st *model.Stats) *float64 { return st.FirstRejectionS }, "no request was rejected")
	register(claim.OfEndpoint, "time_to_level_s", metricImpl{kind: claim.IntervalPoint,
		point: func(x *repetitionOf, m claim.Measure) (float64, string) {
			v, _, why := x.timeToLevel(m.Endpoint, m.LevelOf)
			return v, why
		},
		spread: func(x *repetitionOf, m claim.Measure, v float64) spread {
			_, never, _ := x.timeToLevel(m.Endpoint, m.LevelOf)
			sp := spread{point: true, resolution: x.e.f.BucketWidth().Seconds()}
			if never {
				// Censored at the phase's end: the level is reached later than that, if ever.
				sp.hiOpen = true
				sp.note = fmt.Sprintf("%s never reached half of %s's error rate within %s/%s (%s s after the fault)", m.Endpoint, m.LevelOf, x.c.Name, x.ph.Name, model.Num(v))
			}
			return sp
		},
	})
	// Resource figures: read once from the repetition's samples.
	for _, name := range claim.Names(claim.OfResource) {
		register(claim.OfResource, name, metricImpl{kind: claim.IntervalPoint,
			point: func(x *repetitionOf, m claim.Measure) (float64, string) {
				v, ok, why := resourceMetric(x.c, x.ph, m)
				if !ok {
					return 0, why
				}
				return v, ""
			},
			spread: func(x *repetitionOf, m claim.Measure, v float64) spread {
				return spread{point: true, resolution: resourceResolution(x, m)}
			},
		})
	}
}

// requestMetric is a figure Σnum/Σden over a repetition's blocks (a rate when isRate: its counts
// also give the binomial floor), with the blocks' scores (confidence.Ratio).
func requestMetric(kind claim.Interval, parts func(x *repetitionOf, m claim.Measure) ([]float64, []float64), isRate bool) metricImpl {
	impl := metricImpl{kind: kind,
		point: func(x *repetitionOf, m claim.Measure) (float64, string) {
			if why := x.requestsKept(m); why != "" {
				return 0, why
			}
			v, _ := confidence.Ratio(parts(x, m))
			if math.IsNaN(v) {
				return 0, undefinedWhy(m.Metric)
			}
			return v, ""
		},
		spread: func(x *repetitionOf, m claim.Measure, _ float64) spread {
			_, s := confidence.Ratio(parts(x, m))
			return spread{scores: s}
		},
	}
	if isRate {
		impl.counts = func(x *repetitionOf, m claim.Measure) (float64, float64) {
			num, den := parts(x, m)
			return sum(num), sum(den)
		}
	}
	return impl
}

// countMetric is a count of a repetition's requests, with its blocks' scores (confidence.Sum).
func countMetric(f func(b *blockStat) float64) metricImpl {
	return metricImpl{kind: claim.IntervalCount,
		point: func(x *repetitionOf, m claim.Measure) (float64, string) {
			if why := x.requestsKept(m); why != "" {
				return 0, why
			}
			v, _ := confidence.Sum(perBlock(x.blocks(m), f))
			return v, ""
		},
		spread: func(x *repetitionOf, m claim.Measure, _ float64) spread {
			_, s := confidence.Sum(perBlock(x.blocks(m), f))
			return spread{scores: s}
		},
	}
}

// quantileMetric is the nearest-rank q-quantile of one set of a repetition's latencies.
func quantileMetric(q float64, of func(b *blockStat) []float64) metricImpl {
	vals := func(x *repetitionOf, m claim.Measure) [][]float64 {
		bs := x.blocks(m)
		out := make([][]float64, len(bs))
		for i := range bs {
			out[i] = of(&bs[i])
		}
		return out
	}
	return metricImpl{kind: claim.IntervalQuantile, q: q, values: of,
		point: func(x *repetitionOf, m claim.Measure) (float64, string) {
			if why := x.requestsKept(m); why != "" {
				return 0, why
			}
			v, _, _ := confidence.Quantile(vals(x, m), q)
			if math.IsNaN(v) {
				return 0, undefinedWhy(m.Metric)
			}
			return v, ""
		},
		spread: func(x *repetitionOf, m claim.Measure, _ float64) spread {
			_, s, neff := confidence.Quantile(vals(x, m), q)
			return spread{scores: s, support: neff, quantile: q}
		},
	}
}

// shareMetric is the share of a quantile metric's values (of) at or below bound, per block: a
// rate, with the rate's scores and binomial floor. A q-quantile is at most bound exactly when at
// least a share q of the values are (nearest rank), so a claim "p99 <= 50 ms" is the claim
// "at least 99% of the values are <= 50 ms", decided where the evidence is (at 50 ms) instead of
// in the thin tail at the p99 itself, which one repetition often cannot bound from above.
func shareMetric(of func(b *blockStat) []float64, bound float64) metricImpl {
	return requestMetric(claim.IntervalRate, func(x *repetitionOf, m claim.Measure) ([]float64, []float64) {
		bs := x.blocks(m)
		num, den := make([]float64, len(bs)), make([]float64, len(bs))
		for i := range bs {
			v := of(&bs[i])
			j, _ := slices.BinarySearch(v, math.Nextafter(bound, math.Inf(1)))
			num[i], den[i] = float64(j), float64(len(v))
		}
		return num, den
	}, true)
}

// maxMetric is the largest of one set of a repetition's latencies: no variance within the
// repetition (a block bootstrap of a maximum is known to fail), so only repetitions bound it.
func maxMetric(of func(b *blockStat) []float64) metricImpl {
	return metricImpl{kind: claim.IntervalMaximum,
		point: func(x *repetitionOf, m claim.Measure) (float64, string) {
			if why := x.requestsKept(m); why != "" {
				return 0, why
			}
			best := math.Inf(-1)
			for i := range x.blocks(m) {
				if l := of(&x.blocks(m)[i]); len(l) > 0 {
					best = math.Max(best, l[len(l)-1])
				}
			}
			if math.IsInf(best, -1) {
				return 0, undefinedWhy(m.Metric)
			}
			return best, ""
		},
		spread: func(*repetitionOf, claim.Measure, float64) spread { return spread{} },
	}
}

// resourceResolution is how finely a resource figure was read: exact figures (from the
// resource's own transitions, where resources.csv has the interval columns; counts and levels)
// have none, a time read from samples the sample period, a share of the window from samples
// the sample period over the window.
func resourceResolution(x *repetitionOf, m claim.Measure) float64 {
	period := samplePeriod(x.c, m.Resource).Seconds()
	switch m.Metric {
	case "first_saturated_s", "first_open_s", "first_rejected_s", "drained_s", "limit_settle_s":
		return period
	case "saturated_s", "saturated_share":
		end := x.ph.End
		if m.Until != "" {
			if t, ok := attribution.FirstSaturated(x.c, x.ph, m.Until); ok {
				end = t
			}
		}
		if attribution.ResourceUsage(x.c.Resources, m.Resource, x.ph.Start, end).Exact() {
			return 0
		}
		if m.Metric == "saturated_share" && end > x.ph.Start {
			return period / (end - x.ph.Start).Seconds()
		}
		return period
	}
	return 0
}

func undefinedWhy(metric string) string {
	switch {
	case metric == "rejected_share" || metric == "attributed_share" || strings.HasPrefix(metric, "failure_"):
		return "no request failed"
	case strings.HasPrefix(metric, "rejected_"):
		return "no request was rejected"
	case strings.HasSuffix(metric, "_ms"):
		return "no request succeeded (latency figures are of successes)"
	}
	return "no requests were sent"
}

func perBlock(bs []blockStat, f func(b *blockStat) float64) []float64 {
	out := make([]float64, len(bs))
	for i := range bs {
		out[i] = f(&bs[i])
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// blamedOn reports whether a failure blamed on got counts as blamed on resource: the resource
// itself, and for a pool (pool:<name>) its queue too (queue:<name>): waiting room is part of it.
func blamedOn(got, resource string) bool {
	if got == resource {
		return true
	}
	name, ok := strings.CutPrefix(resource, "pool:")
	return ok && got == "queue:"+name
}

// blockStat holds the requests of one endpoint sent within one block of a phase.
type blockStat struct {
	dur                                                          float64 // seconds
	req, succ, timeout, rejected, refused, upstream, conn, other int
	// ok, fail and rej are the latencies (ms, sorted) of the successes, the failures and the
	// failures that were rejections.
	ok, fail, rej []float64
}

func (b *blockStat) fails() int { return b.req - b.succ }

// requestsKept says why the requests of m's endpoint cannot be measured here ("" when they can).
func (x *repetitionOf) requestsKept(m claim.Measure) string {
	st := x.ph.Endpoints[m.Endpoint]
	switch {
	case st == nil || st.Requests == 0:
		return "no requests were sent"
	case x.c.Requests == nil || x.c.Requests[m.Endpoint] == nil:
		return fmt.Sprintf("the requests of %s were not kept", m.Endpoint)
	}
	return ""
}

// blocks cuts the requests of m's endpoint in the phase into blocks of the bucket width from
// the phase start (the last block may be shorter); cached per configuration run, phase and
// endpoint.
func (x *repetitionOf) blocks(m claim.Measure) []blockStat {
	key := fmt.Sprintf("%s\x00%d\x00%s\x00%s", x.c.Name, x.c.Repetition, x.ph.Name, m.Endpoint)
	if b, ok := x.e.blocks[key]; ok {
		return b
	}
	w := x.e.f.BucketWidth()
	recs := model.Span(x.c.Requests[m.Endpoint], int64(x.ph.Start), int64(x.ph.End))
	var out []blockStat
	for from := x.ph.Start; from < x.ph.End; from += w {
		to := min(from+w, x.ph.End)
		bs := blockStat{dur: (to - from).Seconds()}
		for _, r := range model.Span(recs, int64(from), int64(to)) {
			o := x.c.Kinds[r.Key]
			lat := float64(r.Lat) / 1e6
			bs.req++
			if o.Success {
				bs.succ++
				bs.ok = append(bs.ok, lat)
				continue
			}
			bs.fail = append(bs.fail, lat)
			switch o.Type {
			case "timeout":
				bs.timeout++
			case "rejected":
				bs.rejected++
				if outcome.RejectionKind(o.Class) == outcome.RejectRefused {
					bs.refused++
				}
				bs.rej = append(bs.rej, lat)
			case "upstream":
				bs.upstream++
			case "connection":
				bs.conn++
			default:
				bs.other++
			}
		}
		slices.Sort(bs.ok)
		slices.Sort(bs.fail)
		slices.Sort(bs.rej)
		out = append(out, bs)
	}
	x.e.blocks[key] = out
	return out
}

// blamed returns, per block, the failures of m's endpoint the report's attribution blames on
// m.Resource and all its failures.
func (x *repetitionOf) blamed(m claim.Measure) ([]float64, []float64) {
	bs := x.blocks(m)
	blamed, fails := make([]float64, len(bs)), make([]float64, len(bs))
	if x.c.Blame == nil {
		return blamed, fails
	}
	phase := slices.IndexFunc(x.c.Phases, func(p model.Phase) bool { return p.Name == x.ph.Name })
	w := x.e.f.BucketWidth()
	for _, r := range model.Span(x.c.Requests[m.Endpoint], int64(x.ph.Start), int64(x.ph.End)) {
		o := x.c.Kinds[r.Key]
		if o.Success {
			continue
		}
		i := min(int((r.T-int64(x.ph.Start))/int64(w)), len(bs)-1)
		fails[i]++
		if blamedOn(x.c.Blame(phase, m.Endpoint, r), m.Resource) {
			blamed[i]++
		}
	}
	return blamed, fails
}
