package outcome

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Answers is how one dependency answered over one sampling interval, measured by the harness on
// the dependency's side of the system under test: at the pass-through in front of the
// dependency's proxy (faults/proxy/meter), so the times include every injected fault and nothing
// that happened inside the target. It is one row of dependencies.csv (with the sample's time,
// which the run folder adds).
//
// A request is one HTTP/1.1 exchange on a connection the target opened to the dependency. Its
// answer time runs from the request's first byte reaching the dependency side to the response's
// last byte leaving it towards the target. Every request that arrives ends as exactly one of
// answered, abandoned or cut, counted in the interval it ends in; until then it is in flight.
type Answers struct {
	Dependency string `json:"dependency"`
	// Interval is the length of the sampling interval the counts cover.
	Interval time.Duration `json:"interval_ns"`
	// Arrived counts the requests whose first byte reached the dependency side in the interval.
	Arrived int `json:"arrived"`
	// Answered counts the responses completed in the interval; Times holds their answer times
	// and Max the longest exactly.
	Answered int           `json:"answered"`
	Times    Histogram     `json:"times"`
	Max      time.Duration `json:"max_ns"`
	// Errors counts the answered requests whose status was 500 or above.
	Errors int `json:"errors"`
	// Abandoned counts the requests the target gave up on (it closed or reset the connection)
	// before the dependency answered; Cut those whose connection the dependency side closed or
	// reset before answering (a reset or down fault, a dependency that died). Unanswered holds
	// how long each of both had waited.
	Abandoned  int       `json:"abandoned"`
	Cut        int       `json:"cut"`
	Unanswered Histogram `json:"unanswered"`
	// Refused counts the connections the target opened that could not be passed on to the
	// dependency's proxy (it refused the connection); each was reset at once.
	Refused int `json:"refused"`
	// Closed is how long in the interval the dependency side refused every connection (its
	// proxy disabled by a down fault): the target's calls then failed without arriving.
	Closed time.Duration `json:"closed_ns"`
	// InFlight is the number of requests waiting for an answer at the interval's end, and Oldest
	// how long the oldest of them had waited then (0 when none).
	InFlight int           `json:"in_flight"`
	Oldest   time.Duration `json:"oldest_ns"`
	// Opaque counts the connections of the interval whose bytes did not read as HTTP/1.1 (a
	// dependency speaking another protocol): passed on unchanged, their requests not counted.
	Opaque int `json:"opaque"`
}

// Histogram counts durations in logarithmic buckets: bucket i holds [2^(i/8), 2^((i+1)/8))
// microseconds (bucket 0 also everything under 1 µs), so a bucket is 9% wide and a quantile read
// from it (the bucket's geometric middle) is within 4.4% of the exact one. Histograms of
// different intervals merge by adding their buckets, which is what makes a phase's quantiles
// computable from per-interval rows. The zero value is empty and ready to use; it is not safe
// for concurrent use.
type Histogram struct {
	counts []uint64
}

// HistogramBucketsPerOctave is the number of buckets per doubling of a duration.
const HistogramBucketsPerOctave = 8

// maxBucket bounds the bucket index: 2^(300/8) µs is about 48 hours.
const maxBucket = 300

// bucketOf returns the bucket index of d.
func bucketOf(d time.Duration) int {
	us := float64(d) / float64(time.Microsecond)
	if us < 1 {
		return 0
	}
	i := int(math.Floor(HistogramBucketsPerOctave * math.Log2(us)))
	return min(max(i, 0), maxBucket)
}

// BucketMiddle returns the geometric middle of bucket i, the value a quantile in it reads.
func BucketMiddle(i int) time.Duration {
	return time.Duration(math.Pow(2, (float64(i)+0.5)/HistogramBucketsPerOctave) * float64(time.Microsecond))
}

// Add counts one duration.
func (h *Histogram) Add(d time.Duration) {
	i := bucketOf(d)
	if i >= len(h.counts) {
		h.counts = append(h.counts, make([]uint64, i+1-len(h.counts))...)
	}
	h.counts[i]++
}

// Merge adds every count of o to h.
func (h *Histogram) Merge(o Histogram) {
	if len(o.counts) > len(h.counts) {
		h.counts = append(h.counts, make([]uint64, len(o.counts)-len(h.counts))...)
	}
	for i, n := range o.counts {
		h.counts[i] += n
	}
}

// Count returns the number of durations counted.
func (h Histogram) Count() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// Quantile returns the nearest-rank q-quantile (0 < q <= 1) as its bucket's middle, and false
// for an empty histogram.
func (h Histogram) Quantile(q float64) (time.Duration, bool) {
	n := h.Count()
	if n == 0 {
		return 0, false
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return BucketMiddle(i), true
		}
	}
	return BucketMiddle(len(h.counts) - 1), true
}

// CountOver returns how many of the durations lie in buckets entirely above d: a count of those
// certainly longer than d (a duration in d's own bucket is not counted).
func (h Histogram) CountOver(d time.Duration) uint64 {
	var n uint64
	for i := bucketOf(d) + 1; i < len(h.counts); i++ {
		n += h.counts[i]
	}
	return n
}

// String encodes h sparsely as "bucket:count" pairs separated by spaces ("" when empty), the
// form dependencies.csv stores.
func (h Histogram) String() string {
	var b strings.Builder
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(':')
		b.WriteString(strconv.FormatUint(c, 10))
	}
	return b.String()
}

// ParseHistogram reads the form String writes.
func ParseHistogram(s string) (Histogram, error) {
	var h Histogram
	for _, f := range strings.Fields(s) {
		is, ns, ok := strings.Cut(f, ":")
		i, err1 := strconv.Atoi(is)
		n, err2 := strconv.ParseUint(ns, 10, 64)
		if !ok || err1 != nil || err2 != nil || i < 0 || i > maxBucket {
			return Histogram{}, fmt.Errorf("histogram bucket %q is not <bucket 0-%d>:<count>", f, maxBucket)
		}
		if i >= len(h.counts) {
			h.counts = append(h.counts, make([]uint64, i+1-len(h.counts))...)
		}
		h.counts[i] += n
	}
	return h, nil
}

// MarshalText encodes h as String does, so JSON carries the same form as the CSV.
func (h Histogram) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads the form String writes.
func (h *Histogram) UnmarshalText(b []byte) error {
	p, err := ParseHistogram(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}
