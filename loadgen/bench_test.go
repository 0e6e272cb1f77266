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
//	BULKHEAD_LOADGEN_PACING=1    send lag against a trivial 200 server, 3 runs of
//	                             BULKHEAD_LOADGEN_DURATION (5s) per rate in BULKHEAD_LOADGEN_RATES
//	                             (50,1000,4000,8000) and per pacing in BULKHEAD_LOADGEN_PACINGS
//	                             (timer; also greedy, nanosleep, plain) and transport in
//	                             BULKHEAD_LOADGEN_TRANSPORTS (h1,nethttp), runs interleaved: lag p50/p99/max
//	                             and the process's CPU use, beside the machine's noise floor. The
//	                             server is BULKHEAD_LOADGEN_TARGET, or a child process on the CPUs
//	                             this one does not have (BULKHEAD_LOADGEN_SERVER=inprocess: in
//	                             this one). BULKHEAD_LOADGEN_KEEP names a folder for the raw
//	                             results, one file per run; BULKHEAD_LOADGEN_WARM_SPAN sets
//	                             warmSpan. For one core:
//	                             BULKHEAD_LOADGEN_PACING=1 taskset -c 0 go test -run FigurePacing -v ./loadgen
//	BULKHEAD_LOADGEN_START=1     BULKHEAD_LOADGEN_ATTACKS (500) attacks at 1/s for 2 s against a
//	                             trivial server, 3 runs: how long Start took, the largest start
//	                             skew (limit MaxStartSkew) and the heap Start allocated
//	BULKHEAD_LOADGEN_PLAIN_SLEEP=1  pace with vegeta's plain time.Sleep instead of the precise wait

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/loadgen/h1"
	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// setPacing applies BULKHEAD_LOADGEN_PLAIN_SLEEP for the duration of the test.
func setPacing(t *testing.T) {
	t.Helper()
	if os.Getenv("BULKHEAD_LOADGEN_PLAIN_SLEEP") != "" {
		usePacing(t, "plain")
	}
}

// usePacing switches the pacing to the named one for the duration of the test.
func usePacing(t *testing.T, name string) {
	t.Helper()
	p, ok := pacingNames[name]
	if !ok {
		t.Fatalf("no pacing %q", name)
	}
	old := pace
	pace = p
	t.Cleanup(func() { pace = old })
}

// useTransport switches attacks to the named transport (h1 or nethttp) for the duration of the
// test.
func useTransport(t *testing.T, name string) {
	t.Helper()
	if name != "h1" && name != "nethttp" {
		t.Fatalf("no transport %q (h1 or nethttp)", name)
	}
	old := netHTTP
	netHTTP = name == "nethttp"
	t.Cleanup(func() { netHTTP = old })
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
	testenv.Figure(t, "BULKHEAD_LOADGEN_FIDELITY", "requests sent against the schedule with every call stalled 900 ms")
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
	testenv.Figure(t, "BULKHEAD_LOADGEN_CEILING", "the highest rate sent on time")
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

func TestFigurePacing(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_LOADGEN_PACING", "send lag against the schedule")
	target := os.Getenv("BULKHEAD_LOADGEN_TARGET")
	where := "given " + target
	switch {
	case target != "":
	case os.Getenv("BULKHEAD_LOADGEN_SERVER") == "inprocess":
		srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		defer srv.Close()
		target, where = srv.URL+"/", "in this process "+srv.URL+"/"
	default:
		where = "in a child process, " + trivialServerProcess(t)
		target = where[strings.LastIndex(where, " ")+1:]
	}
	duration := envDuration(t, "BULKHEAD_LOADGEN_DURATION", 5*time.Second)
	old := warmSpan
	warmSpan = envDuration(t, "BULKHEAD_LOADGEN_WARM_SPAN", warmSpan)
	t.Cleanup(func() { warmSpan = old })
	var rates []float64
	for _, s := range strings.Split(envOr(t, "BULKHEAD_LOADGEN_RATES", "50,1000,4000,8000"), ",") {
		r, err := ParseRate(s)
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, r)
	}
	names := strings.Split(envOr(t, "BULKHEAD_LOADGEN_PACINGS", pace.String()), ",")
	transports := strings.Split(envOr(t, "BULKHEAD_LOADGEN_TRANSPORTS", "h1,nethttp"), ",")
	// The raw results go to BULKHEAD_LOADGEN_KEEP when it names a folder, to follow a run send by
	// send afterwards; to a temporary one otherwise.
	keep := os.Getenv("BULKHEAD_LOADGEN_KEEP")
	if keep == "" {
		keep = t.TempDir()
	} else if err := os.MkdirAll(keep, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("pacing: load generator on GOMAXPROCS %d, trivial server %s, %v per run", runtime.GOMAXPROCS(0), where, duration)
	// Runs valid, of all and of those the hypervisor left alone (no CPU lost NotableSteal), per
	// transport, pacing and rate, in the order first run.
	type tally struct{ valid, runs, quietValid, quiet int }
	tallies := map[string]*tally{}
	var order []string
	for _, rate := range rates {
		for run := range 3 {
			t.Logf("pacing noise floor before %5.0f rps run %d: %s", rate, run+1, noiseFloor())
			for _, tname := range transports {
				for _, name := range names {
					useTransport(t, tname)
					usePacing(t, name)
					f, err := os.Create(filepath.Join(keep, fmt.Sprintf("%s-%s-%.0f-%d.json", tname, name, rate, run+1)))
					if err != nil {
						t.Fatal(err)
					}
					cpu0, wall0 := cpuTime(t), time.Now()
					r := startRun(t, []Attack{{Name: "/", URL: target, Pacer: mustPacer(t, rate, ArrivalsConstant, 0), Out: f}}, duration)
					checks, err := r.Wait()
					cpu, wall := cpuTime(t)-cpu0, time.Since(wall0)
					if err != nil {
						t.Fatal(err)
					}
					f.Close()
					c := checks[0]
					dials := "?"
					if h, ok := r.attacks[0].transport.(*h1.Transport); ok {
						dials = strconv.FormatUint(h.Dials(), 10)
					}
					t.Logf("pacing %-8s %-9s %5.0f rps run %d: sent %d of %d, lag p50 %v p99 %v max %v, cpu %.1f%% of a core, %s dials, steal %.1f%% of a CPU, valid %v %q",
						tname, name, rate, run+1, c.Sent, c.Scheduled, c.LagP50, c.LagP99, c.LagMax, 100*cpu.Seconds()/wall.Seconds(), dials, 100*c.Steal, c.Valid, c.Reasons)

					key := fmt.Sprintf("%-8s %-9s %5.0f rps", tname, name, rate)
					k := tallies[key]
					if k == nil {
						k = &tally{}
						tallies[key] = k
						order = append(order, key)
					}
					quiet := c.Steal >= 0 && c.Steal < NotableSteal
					k.runs++
					if quiet {
						k.quiet++
					}
					if c.Valid {
						k.valid++
						if quiet {
							k.quietValid++
						}
					}
				}
			}
		}
	}
	for _, key := range order {
		k := tallies[key]
		t.Logf("pacing %s: valid in %d of %d runs; in %d of the %d runs with under %.0f%% of a CPU stolen",
			key, k.valid, k.runs, k.quietValid, k.quiet, 100*NotableSteal)
	}
}

// noiseFloor measures what the machine alone does to a precise sleeper: one locked thread asks
// nanosleep(2) for 1 ms, 1,000 times, and the lateness quantiles are returned in words. A p99 above
// the lag limit here means the machine (other processes on the same core) is too busy to judge
// the pacing.
func noiseFloor() string {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var late samples
	next := time.Now()
	for range 1000 {
		next = next.Add(time.Millisecond)
		if d := time.Until(next); d > 0 {
			sleepPrecise(d)
		}
		late.add(time.Since(next))
	}
	return fmt.Sprintf("a bare thread's nanosleep lateness p50 %v p99 %v max %v", late.quantile(0.5), late.quantile(0.99), late.quantile(1))
}

// trivialServerProcess starts this test binary as a trivial 200 server (TestTrivialServer) on
// the CPUs this process does not use, and returns "on N CPUs <URL>". It ends when the test does
// (its stdin closes).
func trivialServerProcess(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestTrivialServer$")
	cmd.Env = append(os.Environ(), "BULKHEAD_LOADGEN_TRIVIAL_SERVER=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if where, ok := strings.CutPrefix(sc.Text(), "trivial server "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return where
		}
	}
	t.Fatalf("trivial server did not start: %v", sc.Err())
	return ""
}

// TestTrivialServer is the child of trivialServerProcess: a 200 server on a loopback port, on
// the CPUs the load generator does not have (every CPU if it has them all), until its stdin
// closes.
func TestTrivialServer(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_LOADGEN_TRIVIAL_SERVER", "the trivial server, a child process of TestFigurePacing")
	cpus, err := useOtherCPUs()
	if err != nil {
		t.Fatalf("affinity: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	fmt.Printf("trivial server on %d CPUs %s/\n", cpus, srv.URL)
	_, _ = io.Copy(io.Discard, os.Stdin)
}

func TestFigureStart(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_LOADGEN_START", "start skew between attacks")
	n, err := strconv.Atoi(envOr(t, "BULKHEAD_LOADGEN_ATTACKS", "500"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	for run := range 3 {
		attacks := make([]Attack, n)
		for i := range attacks {
			attacks[i] = Attack{Name: fmt.Sprintf("/p%03d", i), URL: srv.URL + "/", Pacer: mustPacer(t, 1, ArrivalsConstant, 0), Out: io.Discard}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		began := time.Now()
		r := startRun(t, attacks, 2*time.Second)
		took := time.Since(began)
		runtime.ReadMemStats(&after)
		checks, err := r.Wait()
		if err != nil {
			t.Fatal(err)
		}
		var skew time.Duration
		valid := 0
		for _, c := range checks {
			skew = max(skew, c.StartSkew)
			if c.Valid {
				valid++
			}
		}
		t.Logf("start run %d: %d attacks, Start took %v, largest start skew %v (limit %v), Start allocated %.1f MB (%d B per attack), %d of %d attacks valid",
			run+1, n, took, skew, MaxStartSkew, float64(after.TotalAlloc-before.TotalAlloc)/1e6, (after.TotalAlloc-before.TotalAlloc)/uint64(n), valid, n)
	}
}

// cpuTime returns the user and system CPU time the process has used so far.
func cpuTime(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestFigureRSS(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_LOADGEN_RSS", "the load generator's memory")
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
