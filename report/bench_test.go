package report

import (
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// BenchmarkGenerate reports over a run of 1,000,000 requests: two configurations x two endpoints
// x 250,000 requests each (the hypothesis world at 6,250 requests per second per endpoint over
// 40 s). The raw files are written once, outside the timer. It reports the peak heap seen by a
// sampler (peak-heap-MB) and the bytes allocated per report (B/op).
func BenchmarkGenerate(b *testing.B) {
	w := goldenWorld()
	w.rate = 6250
	dir := b.TempDir()
	w.write(b, dir)
	plots := os.Getenv("BENCH_PLOTS") != ""
	runtime.GC()
	b.ReportAllocs()
	b.ResetTimer()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > peak.Load() {
				peak.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	for b.Loop() {
		s, err := generate(b, dir, plots)
		if err != nil {
			b.Fatal(err)
		}
		if n := s.Configurations[0].Phases[0].Endpoints["/a"].Requests; n != 62500 {
			b.Fatalf("baseline /a has %d requests, want 62500", n)
		}
	}
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
}

// TestWriteBenchWorld writes BenchmarkGenerate's run folder (1 M requests: two configurations,
// two endpoints, 6250/s each) into $BULKHEAD_BENCH_WORLD, so that `bulkhead report` can be timed
// against `vegeta report` over the same raw files; $BULKHEAD_BENCH_RATE sets another rate per
// endpoint (625: 100,000 requests). scripts/report-speed.sh runs the comparison:
//
//	BULKHEAD_BENCH_WORLD=/tmp/world go test -run TestWriteBenchWorld ./report
//	time bulkhead report /tmp/world; time vegeta report /tmp/world/*/raw/*.json
func TestWriteBenchWorld(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_BENCH_WORLD", "writes the benchmark's run folder into the folder it names")
	dir := os.Getenv("BULKHEAD_BENCH_WORLD")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	w := goldenWorld()
	w.rate = 6250
	if r := os.Getenv("BULKHEAD_BENCH_RATE"); r != "" {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || v <= 0 {
			t.Fatalf("BULKHEAD_BENCH_RATE=%q: want a rate > 0", r)
		}
		w.rate = v
	}
	w.write(t, dir)
}
