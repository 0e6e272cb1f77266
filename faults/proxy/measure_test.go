package proxy

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// TestMeasureLatencyAccuracy is a measurement, not a check: it logs how far a latency toxic's
// added delay is from the amount asked for. It runs only with BULKHEAD_MEASURE=1 (about 95 s), in
// process, or against the toxiproxy-server at BULKHEAD_TOXIPROXY_URL when that is set.
//
//	BULKHEAD_MEASURE=1 go test -run TestMeasureLatencyAccuracy -v ./faults
func TestMeasureLatencyAccuracy(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_MEASURE", "a latency toxic's accuracy")
	const (
		latency = 450 * time.Millisecond
		n       = 200
	)
	ctx := context.Background()
	var inj Injector = NewEmbedded()
	where := "embedded"
	if u := os.Getenv("BULKHEAD_TOXIPROXY_URL"); u != "" {
		x, err := NewExternal(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		inj, where = x, "external "+u+" (server version "+x.Version()+")"
	}
	defer inj.Close(ctx)
	f := newFixture(t, inj, "measure", 0)
	c := newClient(t, 10*time.Second)
	direct := "http://" + f.up.addr() + "/"

	sample := func(url string) []time.Duration {
		mustGet(t, c, url) // warm the connection
		out := make([]time.Duration, n)
		for i := range out {
			start := time.Now()
			mustGet(t, c, url)
			out[i] = time.Since(start)
		}
		slices.Sort(out)
		return out
	}
	d := sample(direct)
	f.apply(t, &faults.Latency{Latency: latency})
	p := sample(f.url)

	// Exact nearest-rank quantiles of the sorted samples.
	q := func(s []time.Duration, x float64) time.Duration {
		return s[int(math.Ceil(x*float64(len(s))))-1]
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	t.Logf("%s, %d sequential keep-alive GETs each, latency toxic %v", where, n, latency)
	t.Logf("direct:        p50 %s  p99 %s  max %s", ms(q(d, .5)), ms(q(d, .99)), ms(d[n-1]))
	t.Logf("through proxy: p50 %s  p99 %s  max %s", ms(q(p, .5)), ms(q(p, .99)), ms(p[n-1]))
	t.Logf("proxy - direct - %v: p50 %+.2fms  p99 %+.2fms", latency,
		float64(q(p, .5)-q(d, .5)-latency)/1e6, float64(q(p, .99)-q(d, .99)-latency)/1e6)
	t.Logf("proxy - %v: min %+.2fms p50 %+.2fms  p99 %+.2fms  max %+.2fms", latency,
		float64(p[0]-latency)/1e6, float64(q(p, .5)-latency)/1e6, float64(q(p, .99)-latency)/1e6, float64(p[n-1]-latency)/1e6)
}
