package report

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/rundir"
)

// TestAgreesWithVegetaMetrics checks one endpoint and phase against vegeta's own Metrics over the
// same raw file: counts and success ratio exactly, p50 and p99 within t-digest error (2%).
func TestAgreesWithVegetaMetrics(t *testing.T) {
	var a []req
	for i := range 2000 {
		r := req{t: time.Duration(i) * 5 * ms_, lat: time.Duration(1+(i*7919)%1000) * ms_, class: "ok", dep: "A"}
		if i%10 == 3 {
			r.class = "rejected:full"
		}
		a = append(a, r)
	}
	phases := []rundir.Phase{{Name: "p1", Start: 0, End: 5 * time.Second}, {Name: "p2", Start: 5 * time.Second, End: 10 * time.Second}}
	w := world{phases: phases, rate: 1, timeout: 500 * ms_, cfgs: []cfgDef{{name: "shared", mode: "shared",
		pools: sharedPools(10), valid: true, extra: map[string][]req{"/a": a}}}}
	dir := w.write(t, t.TempDir())
	s, err := Analyze(dir)
	if err != nil {
		t.Fatal(err)
	}
	ours := s.Configurations[0].Phases[1].Endpoints["/a"]

	var m vegeta.Metrics
	err = rundir.ReadRaw(filepath.Join(dir, "shared", rundir.RawDir, "a.json"), func(r *vegeta.Result) error {
		if off := r.Timestamp.Sub(t0); off >= 5*time.Second && off < 10*time.Second {
			m.Add(r)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	if uint64(ours.Requests) != m.Requests || ours.SuccessRate != m.Success {
		t.Errorf("requests %d success %v, vegeta %d %v", ours.Requests, ours.SuccessRate, m.Requests, m.Success)
	}
	for _, q := range []struct {
		name   string
		ours   float64
		vegeta time.Duration
	}{{"p50", ours.P50MS, m.Latencies.P50}, {"p99", ours.P99MS, m.Latencies.P99}, {"max", ours.MaxMS, m.Latencies.Max}} {
		v := float64(q.vegeta) / 1e6
		if math.Abs(q.ours-v) > 0.02*v {
			t.Errorf("%s: ours %.2f ms, vegeta %.2f ms", q.name, q.ours, v)
		}
	}
}
