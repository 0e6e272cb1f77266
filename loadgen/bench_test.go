package loadgen

// Figures, not tests: each runs only when its environment variable is set, and logs what it
// measured (run with -v). All traffic is loopback and bounded in count and time.
//
//	BULKHEAD_LOADGEN_FIDELITY=1  every request stalled 900 ms, BULKHEAD_LOADGEN_RATE (50) for
//	                             BULKHEAD_LOADGEN_DURATION (30s): sent vs rate x duration, lag
//	BULKHEAD_LOADGEN_CEILING=1   against a trivial 200 server (BULKHEAD_LOADGEN_TARGET, or one
//	                             in-process), 3 runs of 5 s per rate in BULKHEAD_LOADGEN_RATES
//	                             (2000,4000,...,16000): the highest rate held at >= 99% in 3 of 3
//	BULKHEAD_LOADGEN_RSS=1       1000 rps for BULKHEAD_LOADGEN_DURATION (60s) streaming to a file:
//	                             RSS every 5 s and the peak (VmHWM)
//	BULKHEAD_LOADGEN_PLAIN_SLEEP=1  pace with vegeta's plain time.Sleep instead of the precise wait

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// setPacing applies BULKHEAD_LOADGEN_PLAIN_SLEEP for the duration of the test.
func setPacing(t *testing.T) {
	t.Helper()
	if os.Getenv("BULKHEAD_LOADGEN_PLAIN_SLEEP") != "" {
		precise = false
		t.Cleanup(func() { precise = true })
		t.Log("pacing with vegeta's plain time.Sleep")
	}
}

func envOr(t *testing.T, key, def string) string {
	t.Helper()
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func envDuration(t *testing.T, key string, def time.Duration) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(envOr(t, key, def.String()))
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return d
}

func TestFigureFidelity(t *testing.T) {
	if os.Getenv("BULKHEAD_LOADGEN_FIDELITY") == "" {
		t.Skip("set BULKHEAD_LOADGEN_FIDELITY=1 to measure")
	}
	setPacing(t)
	rate, err := ParseRate(envOr(t, "BULKHEAD_LOADGEN_RATE", "50"))
	if err != nil {
		t.Fatal(err)
	}
	duration := envDuration(t, "BULKHEAD_LOADGEN_DURATION", 30*time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(900 * time.Millisecond):
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	f, err := os.Create(filepath.Join(t.TempDir(), "a.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := startRun(t, []Attack{{Name: "/a", URL: srv.URL + "/a", Pacer: mustPacer(t, rate, ArrivalsConstant, 0), Out: f}},
		duration, WithTimeout(5*time.Second))
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	c := checks[0]
	nominal := rate * duration.Seconds()
	t.Logf("fidelity: %g rps x %v, every request stalled 900ms: scheduled %d, sent %d (%.2f%% of rate x duration = %g), dropped %d, lag p50 %v p99 %v max %v, start skew %v, valid %v %q",
		rate, duration, c.Scheduled, c.Sent, 100*float64(c.Sent)/nominal, nominal, c.Dropped,
		c.LagP50, c.LagP99, c.LagMax, c.StartSkew, c.Valid, c.Reasons)
}

func TestFigureCeiling(t *testing.T) {
	if os.Getenv("BULKHEAD_LOADGEN_CEILING") == "" {
		t.Skip("set BULKHEAD_LOADGEN_CEILING=1 to measure")
	}
	setPacing(t)
	target := os.Getenv("BULKHEAD_LOADGEN_TARGET")
	if target == "" {
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer srv.Close()
		target = srv.URL + "/"
	}
	duration := envDuration(t, "BULKHEAD_LOADGEN_DURATION", 5*time.Second)
	var rates []float64
	for _, s := range strings.Split(envOr(t, "BULKHEAD_LOADGEN_RATES", "2000,4000,6000,8000,10000,12000,14000,16000"), ",") {
		r, err := ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, r)
	}
	best := 0.0
	for _, rate := range rates {
		held := 0
		for run := range 3 {
			m, c := ceilingRun(t, target, rate, duration)
			ok := m.Rate >= 0.99*rate && float64(c.Sent) >= 0.99*rate*duration.Seconds() && m.Success > 0.99
			if ok {
				held++
			}
			t.Logf("ceiling %6.0f rps run %d: sent %d of %d scheduled, send rate %.1f (%.2f%%), throughput %.1f, success %.4f, lag p50 %v p99 %v max %v, valid %v, held %v",
				rate, run+1, c.Sent, c.Scheduled, m.Rate, 100*m.Rate/rate, m.Throughput, m.Success, c.LagP50, c.LagP99, c.LagMax, c.Valid, ok)
		}
		if held == 3 {
			best = rate
		}
	}
	t.Logf("ceiling: highest rate held at >= 99%% in 3 of 3 runs of %v: %.0f rps", duration, best)
}

// ceilingRun attacks target at rate for duration, writing to a file, and returns vegeta's own
// metrics of that file next to the check.
func ceilingRun(t *testing.T, target string, rate float64, duration time.Duration) (vegeta.Metrics, Check) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	r := startRun(t, []Attack{{Name: "/", URL: target, Pacer: mustPacer(t, rate, ArrivalsConstant, 0), Out: f}}, duration)
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var m vegeta.Metrics
	dec := vegeta.NewJSONDecoder(bufio.NewReader(in))
	for {
		var res vegeta.Result
		if err := dec.Decode(&res); err != nil {
			break
		}
		m.Add(&res)
	}
	m.Close()
	return m, checks[0]
}

func TestFigureRSS(t *testing.T) {
	if os.Getenv("BULKHEAD_LOADGEN_RSS") == "" {
		t.Skip("set BULKHEAD_LOADGEN_RSS=1 to measure")
	}
	setPacing(t)
	duration := envDuration(t, "BULKHEAD_LOADGEN_DURATION", 60*time.Second)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "raw.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	t.Logf("before: %s", procStatus(t))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				t.Logf("during: %s", procStatus(t))
			}
		}
	}()
	r := startRun(t, []Attack{{Name: "/", URL: srv.URL + "/", Pacer: mustPacer(t, 1000, ArrivalsConstant, 0), Out: f}}, duration)
	checks, err := r.Wait()
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	c := checks[0]
	t.Logf("after %d requests (%d bytes written; process includes the in-process server): %s; lag p99 %v, valid %v %q",
		c.Sent, st.Size(), procStatus(t), c.LagP99, c.Valid, c.Reasons)
}

func procStatus(t *testing.T) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "no /proc/self/status"
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		if k == "VmRSS" || k == "VmHWM" {
			out = append(out, k+" "+strings.Join(strings.Fields(v), " "))
		}
	}
	return strings.Join(out, ", ") + fmt.Sprintf(" (pid %s)", strconv.Itoa(os.Getpid()))
}
