package outcome

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// A quantile read from the histogram is within 4.4% (half a bucket, 2^(1/16)-1) of the exact
// nearest-rank quantile, on seeded log-normal answer times.
func TestHistogramQuantileError(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 2))
	var h Histogram
	var exact []time.Duration
	for range 10000 {
		d := time.Duration(math.Exp(rng.NormFloat64()*1.5 + math.Log(5e6))) // median 5 ms
		h.Add(d)
		exact = append(exact, d)
	}
	slices.Sort(exact)
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
		got, ok := h.Quantile(q)
		want := exact[int(math.Ceil(q*float64(len(exact))))-1]
		if rel := math.Abs(float64(got-want)) / float64(want); !ok || rel > math.Pow(2, 1.0/16)-1 {
			t.Errorf("q%.2f = %v, exact %v: off by %.1f%%, want within 4.4%%", q, got, want, 100*rel)
		}
	}
	if h.Count() != 10000 {
		t.Errorf("count = %d, want 10000", h.Count())
	}
}

func TestHistogramMergeAndCodec(t *testing.T) {
	var a, b Histogram
	for _, d := range []time.Duration{0, 500 * time.Nanosecond, time.Millisecond, 450 * time.Millisecond} {
		a.Add(d)
	}
	b.Add(450 * time.Millisecond)
	b.Add(3 * time.Second)
	a.Merge(b)
	if a.Count() != 6 {
		t.Fatalf("merged count = %d, want 6", a.Count())
	}
	if got := a.CountOver(time.Second); got != 1 {
		t.Errorf("CountOver(1s) = %d, want 1 (the 3 s answer)", got)
	}
	if got := a.CountOver(400 * time.Millisecond); got != 3 {
		t.Errorf("CountOver(400ms) = %d, want 3", got)
	}
	if q, _ := a.Quantile(0.5); q < 900*time.Microsecond || q > 1100*time.Microsecond {
		t.Errorf("median = %v, want about 1 ms", q)
	}
	s := a.String()
	back, err := ParseHistogram(s)
	if err != nil || back.String() != s {
		t.Errorf("ParseHistogram(%q) = %q, %v", s, back.String(), err)
	}
	var empty Histogram
	if _, ok := empty.Quantile(0.5); ok || empty.String() != "" {
		t.Errorf("empty histogram: quantile ok, or String %q", empty.String())
	}
	js, err := json.Marshal(Answers{Dependency: "A", Times: a})
	if err != nil {
		t.Fatal(err)
	}
	var got Answers
	if err := json.Unmarshal(js, &got); err != nil || got.Times.String() != s {
		t.Errorf("JSON round trip: %s -> %q, %v", js, got.Times.String(), err)
	}
	for _, bad := range []string{"x", "1:", "-1:3", "999:1", "3:x"} {
		if _, err := ParseHistogram(bad); err == nil {
			t.Errorf("ParseHistogram(%q) accepted", bad)
		}
	}
}
