package report

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/bulkheadlab/bulkhead/claim"
)

// The verdict engine. Every figure a claim uses is an estimate: the value measured on the run
// (the mean over repetitions) and bootstrapDraws resampled values from which its 95% interval
// is read (the 2.5th and 97.5th percentiles of the draws). How a figure is resampled:
//
//   - Figures of requests (rates, counts, quantiles, throughput, rejected_share) are
//     block-bootstrapped: a phase is cut into 1 s blocks from its start (requests sent within
//     the same second share the pool's state and are not independent), and each draw picks as
//     many blocks as the phase has, with replacement, and recomputes the figure over their
//     requests. Every endpoint of a configuration x phase uses the same blocks in a draw, so
//     figures of the same seconds keep their correlation.
//   - With repetitions, each draw first picks repetitions with replacement (as many as there
//     are) and averages the figure over them; without, it resamples blocks only.
//   - A quantile needs enough requests above it: the largest of n requests bounds the
//     q-quantile from above with 97.5% confidence only when q^n <= 2.5% (for a p99, at least
//     368 requests). With fewer in any repetition, its interval has no upper end.
//   - Event times and resource figures (first_*_s, time_to_level_s, saturated_s, max_in_use,
//     ...) come from one time line each and are not block-resampled; with repetitions the
//     repetitions are resampled. A time read from a sampled series (resources every
//     sample_every, time_to_level_s at 1 s blocks) only says the event happened within the
//     sample period before it: each draw places it uniformly in that period.
//   - A comparison between figures (minus:, over:, than:) combines the draws one by one; draws
//     of different configurations come from independent streams, draws of the same
//     configuration share its repetitions and blocks.
//
// Every stream is seeded from bootstrapSeed and the names of the configuration and phase, so the
// same run folder always gives the same intervals.
const (
	bootstrapDraws = 1000
	bootstrapSeed  = 20261130
	// tailShare is the share of draws cut off on each side (a 95% interval).
	tailShare = 0.025
)

// Verdicts of a claim.
const (
	VerdictHolds         = "holds"
	VerdictDoesNotHold   = "does not hold"
	VerdictInconclusive  = "inconclusive"
	VerdictNotMeasurable = "not measurable"
)

// MethodText states the method in report.md and summary.json.
const MethodText = "95% intervals from a seeded block bootstrap (1000 draws, seed 20261130): each draw resamples the 1 s blocks of a phase " +
	"(and the repetitions, when there are several) and recomputes the figure; comparisons combine the draws one by one, " +
	"independent streams per configuration. A quantile of n requests has no upper bound when q^n > 2.5% (a p99 needs 368 requests). " +
	"Event times and resource figures are not block-resampled (one time line each); a time read from a sampled series " +
	"is placed uniformly within its sample period. A claim holds when the whole interval of left - right satisfies it, " +
	"does not hold when the whole interval violates it, and is inconclusive otherwise; it is not measurable when a " +
	"figure cannot be computed or a precondition does not hold."

// estimate is one figure: its value and its bootstrap draws (NaN where a draw has no value,
// e.g. a share of failures in a resample without failures). loInf/hiInf say the interval has no
// lower/upper end whatever the draws say.
type estimate struct {
	value        float64
	draws        []float64
	loInf, hiInf bool
}

// constant is a number as an estimate (its draws all equal).
func constant(v float64) *estimate {
	d := make([]float64, bootstrapDraws)
	for i := range d {
		d[i] = v
	}
	return &estimate{value: v, draws: d}
}

// interval returns the 95% interval of e: the percentiles of its draws, widened to contain the
// value, unbounded (±Inf) where e says so or where more than tailShare of the draws have no
// value.
func (e *estimate) interval() (lo, hi float64) {
	xs := make([]float64, 0, len(e.draws))
	for _, d := range e.draws {
		if !math.IsNaN(d) {
			xs = append(xs, d)
		}
	}
	if len(xs) == 0 || float64(len(e.draws)-len(xs)) > tailShare*float64(len(e.draws)) {
		return math.Inf(-1), math.Inf(1)
	}
	slices.Sort(xs)
	lo, hi = percentile(xs, tailShare), percentile(xs, 1-tailShare)
	lo, hi = math.Min(lo, e.value), math.Max(hi, e.value)
	if e.loInf {
		lo = math.Inf(-1)
	}
	if e.hiInf {
		hi = math.Inf(1)
	}
	return clean(lo), clean(hi)
}

// percentile is the nearest-rank q-quantile of sorted (non-empty) values.
func percentile(sorted []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// clean rounds away float noise (1e-9) so that 0.3 - 0.1*3 compares as 0.
func clean(v float64) float64 {
	if math.IsInf(v, 0) {
		return v
	}
	return math.Round(v*1e9) / 1e9
}

// combine applies f draw by draw to a and b.
func combine(a, b *estimate, f func(x, y float64) float64) *estimate {
	out := &estimate{value: f(a.value, b.value), draws: make([]float64, len(a.draws))}
	for i := range out.draws {
		out.draws[i] = f(a.draws[i], b.draws[i])
	}
	return out
}

// minus is a - b; an unbounded end of b opens the opposite end of the difference.
func minus(a, b *estimate) *estimate {
	d := combine(a, b, func(x, y float64) float64 { return x - y })
	d.loInf, d.hiInf = a.loInf || b.hiInf, a.hiInf || b.loInf
	return d
}

// over is a / b (NaN where b is 0); an unbounded b leaves the ratio without a lower end, an
// unbounded a without an upper end.
func over(a, b *estimate) *estimate {
	d := combine(a, b, func(x, y float64) float64 {
		if y == 0 {
			return math.NaN()
		}
		return x / y
	})
	d.loInf, d.hiInf = a.loInf || b.hiInf, a.hiInf || b.loInf
	if b.value == 0 {
		d.value = math.NaN()
	}
	return d
}

// scaled is a x f + plus (f > 0).
func scaled(a *estimate, f, plus float64) *estimate {
	out := &estimate{value: a.value*f + plus, draws: make([]float64, len(a.draws)), loInf: a.loInf, hiInf: a.hiInf}
	for i, d := range a.draws {
		out.draws[i] = d*f + plus
	}
	return out
}

// streamOf returns the random source of one named stream (a configuration, a phase of it).
func streamOf(names ...string) *rand.Rand {
	h := fnv.New64a()
	for _, n := range names {
		h.Write([]byte(n))
		h.Write([]byte{0})
	}
	return rand.New(rand.NewPCG(bootstrapSeed, h.Sum64()))
}

// engine evaluates measures on a Summary, memoising estimates and resampling plans.
type engine struct {
	s        *Summary
	cache    map[string]*estimate
	why      map[string]string
	reps     map[string][][]int     // configuration -> draw -> chosen member indices
	blockSel map[string][][][]int   // configuration/phase -> draw -> slot -> chosen blocks
	blocks   map[string][]blockStat // member/phase/endpoint -> blocks
	scratch  []int64
}

func newEngine(s *Summary) *engine {
	return &engine{s: s, cache: map[string]*estimate{}, why: map[string]string{}, reps: map[string][][]int{},
		blockSel: map[string][][][]int{}, blocks: map[string][]blockStat{}}
}

// blockStat holds the requests of one endpoint sent within one block of a phase.
type blockStat struct {
	dur                                                 float64 // seconds
	req, succ, timeout, rejected, upstream, conn, other int
	lats, rejLats                                       []int64
}

func (b *blockStat) fails() int { return b.req - b.succ }

// measure evaluates m (with its minus: or over:), or returns nil and why it cannot be measured.
func (e *engine) measure(m claim.Measure) (*estimate, string) {
	base, why := e.base(m.Base())
	if base == nil {
		return nil, why
	}
	o := m.Other()
	if o == nil {
		return base, ""
	}
	other, why := e.base(*o)
	if other == nil {
		return nil, why
	}
	if m.Over != nil {
		r := over(base, other)
		if math.IsNaN(r.value) {
			return nil, fmt.Sprintf("%s is 0: no ratio", describeMeasure(*o))
		}
		return r, ""
	}
	return minus(base, other), ""
}

// base evaluates a measure without minus: or over:.
func (e *engine) base(m claim.Measure) (*estimate, string) {
	key, _ := json.Marshal(m)
	if est, ok := e.cache[string(key)]; ok {
		return est, e.why[string(key)]
	}
	est, why := e.compute(m)
	e.cache[string(key)], e.why[string(key)] = est, why
	return est, why
}

// resampled lists the endpoint metrics computed from the requests of resampled blocks.
var resampled = map[string]float64{
	"success_rate": -1, "error_rate": -1, "requests": -1, "successes": -1, "failures": -1,
	"p50_ms": 0.5, "p90_ms": 0.9, "p99_ms": 0.99, "p999_ms": 0.999, "max_ms": -1, "mean_ms": -1, "rejected_p99_ms": 0.99,
	"throughput": -1, "timeouts": -1, "rejected": -1, "upstream": -1, "connection": -1, "rejected_share": -1,
}

func (e *engine) compute(m claim.Measure) (*estimate, string) {
	members := group(e.s.Configurations, m.Configuration)
	if len(members) == 0 {
		return nil, fmt.Sprintf("no configuration %q in the run", m.Configuration)
	}
	for _, c := range members {
		if phaseOf(c, m.Phase) == nil {
			return nil, fmt.Sprintf("no phase %q in %s", m.Phase, c.Name)
		}
	}
	if _, ok := resampled[m.Metric]; ok && m.Endpoint != "" {
		return e.requestFigure(members, m)
	}
	// One value per member, resampled over repetitions only.
	vals := make([]float64, len(members))
	res := 0.0
	for i, c := range members {
		ph := phaseOf(c, m.Phase)
		var v float64
		var ok bool
		var why string
		switch {
		case m.Metric == "time_to_level_s":
			v, ok, why = e.timeToLevel(c, ph, m.Endpoint, m.LevelOf)
			res = e.s.BucketS
		case m.Endpoint != "":
			v, ok, why = endpointMetric(ph.Endpoints[m.Endpoint], m.Metric)
		default:
			v, ok, why = resourceMetric(c, ph, m)
			if sampledTime[m.Metric] {
				res = math.Max(res, samplePeriod(c, m.Resource).Seconds())
			}
		}
		if !ok {
			return nil, fmt.Sprintf("%s: %s in %s", describeMeasure(m), why, c.Name)
		}
		vals[i] = v
	}
	est := &estimate{value: mean(vals), draws: make([]float64, bootstrapDraws)}
	jitter := streamOf("time", m.Configuration, m.Phase, m.Metric, m.Endpoint, m.Resource)
	for b, reps := range e.repPlan(m.Configuration, len(members)) {
		sum := 0.0
		for _, r := range reps {
			sum += vals[r]
		}
		est.draws[b] = sum/float64(len(reps)) - jitter.Float64()*res
	}
	return est, ""
}

// sampledTime are the resource metrics read as the time of a sample.
var sampledTime = map[string]bool{"first_saturated_s": true, "first_open_s": true, "first_rejected_s": true, "drained_s": true}

// samplePeriod is the smallest gap between two samples of resource name in c (0 with fewer
// than two).
func samplePeriod(c *Configuration, name string) time.Duration {
	var p, last time.Duration = 0, -1
	for _, r := range c.resources {
		if r.Resource != name {
			continue
		}
		if last >= 0 && r.T > last && (p == 0 || r.T-last < p) {
			p = r.T - last
		}
		last = r.T
	}
	return p
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// repPlan returns, per draw, the members (indices) a draw of configuration cfg averages over.
func (e *engine) repPlan(cfg string, n int) [][]int {
	if p, ok := e.reps[cfg]; ok {
		return p
	}
	rng := streamOf("repetitions", cfg)
	p := make([][]int, bootstrapDraws)
	for b := range p {
		p[b] = make([]int, n)
		for k := range p[b] {
			if n > 1 {
				p[b][k] = rng.IntN(n)
			}
		}
	}
	e.reps[cfg] = p
	return p
}

// blockPlan returns, per draw and repetition slot, the blocks (indices among nb) a draw of
// cfg/phase resamples.
func (e *engine) blockPlan(cfg, phase string, slots, nb int) [][][]int {
	key := cfg + "\x00" + phase
	if p, ok := e.blockSel[key]; ok {
		return p
	}
	rng := streamOf("blocks", cfg, phase)
	p := make([][][]int, bootstrapDraws)
	for b := range p {
		p[b] = make([][]int, slots)
		for k := range p[b] {
			p[b][k] = make([]int, nb)
			for j := range p[b][k] {
				p[b][k][j] = rng.IntN(nb)
			}
		}
	}
	e.blockSel[key] = p
	return p
}

// phaseBlocks cuts the requests of endpoint ep in phase ph of c into blocks of the bucket width
// from the phase start (the last block may be shorter).
func (e *engine) phaseBlocks(c *Configuration, ph *Phase, ep string) []blockStat {
	key := c.Name + "\x00" + ph.Name + "\x00" + ep
	if b, ok := e.blocks[key]; ok {
		return b
	}
	w := time.Duration(e.s.BucketS * float64(time.Second))
	if w <= 0 {
		w = DefaultBucket
	}
	recs := span(c.recs[ep], int64(ph.start), int64(ph.end))
	var out []blockStat
	for from := ph.start; from < ph.end; from += w {
		to := min(from+w, ph.end)
		bs := blockStat{dur: (to - from).Seconds()}
		for _, r := range span(recs, int64(from), int64(to)) {
			o := c.outs[r.key]
			bs.req++
			bs.lats = append(bs.lats, r.lat)
			if o.success {
				bs.succ++
				continue
			}
			switch o.typ {
			case "timeout":
				bs.timeout++
			case "rejected":
				bs.rejected++
				bs.rejLats = append(bs.rejLats, r.lat)
			case "upstream":
				bs.upstream++
			case "connection":
				bs.conn++
			default:
				bs.other++
			}
		}
		out = append(out, bs)
	}
	e.blocks[key] = out
	return out
}

// requestFigure estimates a metric of an endpoint's requests by the block bootstrap.
func (e *engine) requestFigure(members []*Configuration, m claim.Measure) (*estimate, string) {
	q := resampled[m.Metric]
	per := make([][]blockStat, len(members))
	vals := make([]float64, len(members))
	unbounded := false
	for i, c := range members {
		ph := phaseOf(c, m.Phase)
		st := ph.Endpoints[m.Endpoint]
		if st == nil || st.Requests == 0 {
			return nil, fmt.Sprintf("%s: no requests were sent in %s", describeMeasure(m), c.Name)
		}
		if c.recs == nil || c.recs[m.Endpoint] == nil {
			return nil, fmt.Sprintf("%s: the requests of %s were not kept in %s", describeMeasure(m), m.Endpoint, c.Name)
		}
		per[i] = e.phaseBlocks(c, ph, m.Endpoint)
		all := make([]int, len(per[i]))
		for j := range all {
			all[j] = j
		}
		v, n := e.metricOf(m.Metric, per[i], all)
		if math.IsNaN(v) {
			return nil, fmt.Sprintf("%s: %s in %s", describeMeasure(m), undefinedWhy(m.Metric), c.Name)
		}
		vals[i] = v
		if q > 0 && math.Pow(q, float64(n)) > tailShare {
			unbounded = true
		}
	}
	est := &estimate{value: mean(vals), draws: make([]float64, bootstrapDraws), hiInf: unbounded}
	nb := len(per[0])
	plan := e.blockPlan(m.Configuration, m.Phase, len(members), nb)
	for b, reps := range e.repPlan(m.Configuration, len(members)) {
		sum := 0.0
		for k, r := range reps {
			sel := plan[b][k]
			if len(per[r]) != nb { // a member cut short: resample its own blocks by index modulo
				sel = modulo(sel, len(per[r]))
			}
			v, _ := e.metricOf(m.Metric, per[r], sel)
			sum += v
		}
		est.draws[b] = sum / float64(len(reps))
	}
	return est, ""
}

func modulo(sel []int, n int) []int {
	out := make([]int, len(sel))
	for i, s := range sel {
		out[i] = s % max(n, 1)
	}
	return out
}

func undefinedWhy(metric string) string {
	switch metric {
	case "rejected_share":
		return "no request failed"
	case "rejected_p99_ms":
		return "no request was rejected"
	}
	return "no requests were sent"
}

// metricOf computes metric over the chosen blocks; it returns NaN when the metric has no value
// there, and the number of requests a quantile rests on.
func (e *engine) metricOf(metric string, blocks []blockStat, chosen []int) (float64, int) {
	var t blockStat
	lats := e.scratch[:0]
	for _, j := range chosen {
		if j >= len(blocks) {
			continue
		}
		b := &blocks[j]
		t.dur += b.dur
		t.req += b.req
		t.succ += b.succ
		t.timeout += b.timeout
		t.rejected += b.rejected
		t.upstream += b.upstream
		t.conn += b.conn
		t.other += b.other
		switch metric {
		case "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms":
			lats = append(lats, b.lats...)
		case "rejected_p99_ms":
			lats = append(lats, b.rejLats...)
		}
	}
	e.scratch = lats
	ratio := func(a, b int) float64 {
		if b == 0 {
			return math.NaN()
		}
		return float64(a) / float64(b)
	}
	switch metric {
	case "success_rate":
		return ratio(t.succ, t.req), 0
	case "error_rate":
		return ratio(t.fails(), t.req), 0
	case "requests":
		return float64(t.req), 0
	case "successes":
		return float64(t.succ), 0
	case "failures":
		return float64(t.fails()), 0
	case "timeouts":
		return float64(t.timeout), 0
	case "rejected":
		return float64(t.rejected), 0
	case "upstream":
		return float64(t.upstream), 0
	case "connection":
		return float64(t.conn), 0
	case "rejected_share":
		return ratio(t.rejected, t.fails()), 0
	case "throughput":
		if t.dur == 0 {
			return math.NaN(), 0
		}
		return float64(t.succ) / t.dur, 0
	}
	if len(lats) == 0 {
		return math.NaN(), 0
	}
	if metric == "mean_ms" {
		s := 0.0
		for _, l := range lats {
			s += float64(l)
		}
		return s / float64(len(lats)) / 1e6, len(lats)
	}
	q := resampled[metric]
	if metric == "max_ms" {
		q = 1
	}
	return ms(selectQuantile(lats, q)), len(lats)
}

// timeToLevel returns the seconds from the first fault of ph to the end of the first block in
// which endpoint ep's error rate is at least half of levelOf's error rate over the phase.
func (e *engine) timeToLevel(c *Configuration, ph *Phase, ep, levelOf string) (float64, bool, string) {
	lst := ph.Endpoints[levelOf]
	if lst == nil || lst.Requests == 0 {
		return 0, false, fmt.Sprintf("%s sent no requests", levelOf)
	}
	if lst.ErrorRate == 0 {
		return 0, false, fmt.Sprintf("%s did not fail, so there is no level to reach", levelOf)
	}
	if c.recs == nil || c.recs[ep] == nil {
		return 0, false, fmt.Sprintf("the requests of %s were not kept", ep)
	}
	w := time.Duration(e.s.BucketS * float64(time.Second))
	if w <= 0 {
		w = DefaultBucket
	}
	recs := span(c.recs[ep], int64(ph.faultStart), int64(ph.end))
	for from := ph.faultStart; from < ph.end; from += w {
		to := min(from+w, ph.end)
		n, fails := 0, 0
		for _, r := range span(recs, int64(from), int64(to)) {
			n++
			if !c.outs[r.key].success {
				fails++
			}
		}
		if n > 0 && float64(fails)/float64(n) >= lst.ErrorRate/2 {
			return (to - ph.faultStart).Seconds(), true, ""
		}
	}
	return 0, false, fmt.Sprintf("%s's error rate never reached half of %s's (%s) in any %g s block", ep, levelOf, pct1(lst.ErrorRate), w.Seconds())
}

func pct1(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) }
