package loadgen

import (
	"errors"
	"math"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

func TestParseRate(t *testing.T) {
	tests := []struct {
		in      string
		want    float64
		wantErr bool
	}{
		{in: "50/s", want: 50},
		{in: "50/1s", want: 50},
		{in: "3000/1m", want: 50},
		{in: "5/100ms", want: 50},
		{in: "50", want: 50},
		{in: " 0.5 ", want: 0.5},
		{in: "1.5/s", want: 1.5},
		{in: "", wantErr: true},
		{in: "fast", wantErr: true},
		{in: "50/", wantErr: true},
		{in: "50/fortnight", wantErr: true},
		{in: "50/-1s", wantErr: true},
		{in: "0/s", wantErr: true},
		{in: "-5", wantErr: true},
		{in: "NaN", wantErr: true},
		{in: "Inf", wantErr: true},
		{in: "2e9", wantErr: true}, // above MaxRate
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseRate(tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("ParseRate(%q) = %v, %v; want an error wrapping ErrInvalid", tt.in, got, err)
				}
				if want := `"` + tt.in + `"`; !contains(err.Error(), want) {
					t.Errorf("error %q does not name the bad text %s", err, want)
				}
				return
			}
			if err != nil || math.Abs(got-tt.want) > 1e-9 {
				t.Fatalf("ParseRate(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestParseArrivals(t *testing.T) {
	tests := []struct {
		in      string
		want    Arrivals
		wantErr bool
	}{
		{in: "constant", want: ArrivalsConstant},
		{in: "", want: ArrivalsConstant}, // the default
		{in: "Poisson", want: ArrivalsPoisson},
		{in: "uniform", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseArrivals(tt.in)
			if tt.wantErr != (err != nil) || got != tt.want {
				t.Fatalf("ParseArrivals(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

func TestNewPacerRejects(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		arrivals Arrivals
	}{
		{"zero rate", 0, ArrivalsConstant},
		{"negative rate", -1, ArrivalsPoisson},
		{"NaN rate", math.NaN(), ArrivalsConstant},
		{"rate above MaxRate", 2 * MaxRate, ArrivalsConstant},
		{"unknown arrivals", 10, "bursty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if p, err := NewPacer(tt.rate, tt.arrivals, 1); !errors.Is(err, ErrInvalid) {
				t.Fatalf("NewPacer = %v, %v; want an error wrapping ErrInvalid", p, err)
			}
		})
	}
}

// simulate runs vegeta's attack loop on a virtual clock, as if every send left the instant the
// pacer allowed it, and returns the send offsets of the first n hits.
func simulate(t *testing.T, p vegeta.Pacer, n int) []time.Duration {
	t.Helper()
	sends := make([]time.Duration, 0, n)
	var elapsed time.Duration
	for hits := uint64(0); len(sends) < n; hits++ {
		wait, stop := p.Pace(elapsed, hits)
		if stop {
			t.Fatalf("pacer stopped at hit %d", hits)
		}
		if wait < 0 {
			t.Fatalf("negative wait %v at hit %d", wait, hits)
		}
		elapsed += wait
		sends = append(sends, elapsed)
	}
	return sends
}

func mustPacer(t *testing.T, rate float64, arrivals Arrivals, seed int64) Pacer {
	t.Helper()
	p, err := NewPacer(rate, arrivals, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Pace, Scheduled and Hits describe one schedule: the loop sends hit k at Scheduled(k), and
// Hits counts exactly the hits scheduled at or before an instant.
func TestPacerScheduleAgrees(t *testing.T) {
	tests := []struct {
		name     string
		rate     float64
		arrivals Arrivals
	}{
		{"constant 50/s", 50, ArrivalsConstant},
		{"constant 3/s (interval not whole ns)", 3, ArrivalsConstant},
		{"constant 33.3/s (fractional)", 33.3, ArrivalsConstant},
		{"constant 12000/s", 12000, ArrivalsConstant},
		{"constant 0.5/s", 0.5, ArrivalsConstant},
		{"poisson 50/s", 50, ArrivalsPoisson},
		{"poisson 12000/s", 12000, ArrivalsPoisson},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustPacer(t, tt.rate, tt.arrivals, 7)
			const n = 3000 // crosses two Poisson checkpoints
			sends := simulate(t, p, n)
			for k, at := range sends {
				if s := p.Scheduled(uint64(k)); s != at {
					t.Fatalf("hit %d: the loop sent at %v, Scheduled says %v", k, at, s)
				}
				if k > 0 && at < sends[k-1] {
					t.Fatalf("hit %d scheduled at %v before hit %d at %v", k, at, k-1, sends[k-1])
				}
			}
			for _, k := range []int{0, 1, 2, 1023, 1024, 1025, 2047, 2999} {
				at := sends[k]
				if k+1 < n && sends[k+1] == at {
					continue // ties: Hits counts both
				}
				if got := p.Hits(at); got != uint64(k+1) {
					t.Errorf("Hits(%v) = %d; want %d (hits 0..%d are due)", at, got, k+1, k)
				}
				if at > 0 && (k == 0 || sends[k-1] < at-1) {
					if got := p.Hits(at - 1); got != uint64(k) {
						t.Errorf("Hits(%v - 1ns) = %d; want %d", at, got, k)
					}
				}
			}
			if got := p.Hits(-time.Second); got != 0 {
				t.Errorf("Hits(-1s) = %d; want 0", got)
			}
			if got := p.Rate(0); math.Abs(got-tt.rate)/tt.rate > 1e-6 {
				t.Errorf("Rate = %v; want %v", got, tt.rate)
			}
		})
	}
}

func TestConstantPacerIsVegetas(t *testing.T) {
	p := mustPacer(t, 50, ArrivalsConstant, 0).(ConstantPacer)
	if want := (vegeta.ConstantPacer{Freq: 50, Per: time.Second}); p.ConstantPacer != want {
		t.Fatalf("NewPacer(50, constant) = %v; want %v", p.ConstantPacer, want)
	}
	if got := p.Hits(time.Second); got != 50 {
		t.Errorf("Hits(1s) = %d; want rate x duration = 50", got)
	}
}

func TestPoissonPacerDeterministic(t *testing.T) {
	const n = 5000
	a := mustPacer(t, 100, ArrivalsPoisson, 42)
	b := mustPacer(t, 100, ArrivalsPoisson, 42)
	other := mustPacer(t, 100, ArrivalsPoisson, 43)

	// b is read out of order and after a Hits call far ahead; a in order.
	_ = b.Hits(time.Hour)
	order := []uint64{4999, 3, 2048, 1023, 1024, 0, 4000, 4001, 17}
	want := make([]time.Duration, n)
	for k := range want {
		want[k] = a.Scheduled(uint64(k))
	}
	for _, k := range order {
		if got := b.Scheduled(k); got != want[k] {
			t.Errorf("seed 42, hit %d: %v read out of order, %v in order", k, got, want[k])
		}
	}
	same := 0
	for k := range uint64(n) {
		if other.Scheduled(k) == want[k] {
			same++
		}
	}
	if same > n/100 {
		t.Errorf("seeds 42 and 43 agree on %d of %d arrivals", same, n)
	}
}

func TestPoissonPacerRate(t *testing.T) {
	const (
		rate = 200.0
		n    = 100_000
	)
	p := mustPacer(t, rate, ArrivalsPoisson, 1)
	// The mean gap of n exponentials has a relative standard deviation of 1/sqrt(n) = 0.3%.
	mean := p.Scheduled(n-1).Seconds() / n
	if want := 1 / rate; math.Abs(mean-want)/want > 0.02 {
		t.Errorf("mean gap %v s; want %v s within 2%%", mean, want)
	}
	if got := p.Hits(500 * time.Second); math.Abs(float64(got)-rate*500)/(rate*500) > 0.02 {
		t.Errorf("Hits(500s) = %d; want about %v", got, rate*500)
	}
	// Exponential gaps: the standard deviation equals the mean (a constant pacer's is 0).
	var sum, sumsq float64
	prev := time.Duration(0)
	for k := range uint64(n) {
		g := (p.Scheduled(k) - prev).Seconds()
		prev = p.Scheduled(k)
		sum += g
		sumsq += g * g
	}
	m := sum / n
	cv := math.Sqrt(sumsq/n-m*m) / m
	if math.Abs(cv-1) > 0.03 {
		t.Errorf("coefficient of variation of gaps %v; want 1 (exponential) within 0.03", cv)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// The kernel timer sleeps at least as long as asked, several times in a row on one timer (each
// expiry is consumed before the next is armed); zero and negative waits return at once.
func TestHRTimerSleeps(t *testing.T) {
	tm, err := newHRTimer()
	if err != nil {
		testenv.SkipOrFail(t, "no high-resolution timer here: %v", err)
	}
	defer tm.close()
	for _, d := range []time.Duration{0, -time.Millisecond, 50 * time.Microsecond, 2 * time.Millisecond, 300 * time.Microsecond} {
		start := time.Now()
		if err := tm.sleep(d); err != nil {
			t.Fatalf("sleep(%v): %v", d, err)
		}
		if took := time.Since(start); took < d {
			t.Errorf("sleep(%v) returned after %v", d, took)
		}
	}
}

// Regression: waits so short that the timer expires before the goroutine reaches the netpoller
// must still return (a wait that skipped the first read hung forever here, in a figure run at
// 4,000 rps on two cores). Were it to hang again, this test would run into go test's timeout.
func TestHRTimerExpiredBeforeTheWait(t *testing.T) {
	tm, err := newHRTimer()
	if err != nil {
		testenv.SkipOrFail(t, "no high-resolution timer here: %v", err)
	}
	defer tm.close()
	for i := range 2000 {
		if err := tm.sleep(time.Duration(1 + i%1000)); err != nil {
			t.Fatalf("sleep %d: %v", i, err)
		}
	}
}

// Pace waits out a hit that is not yet due itself and returns 0, unless the kernel refused a
// timer: then it hands the wait to vegeta. A hit already due is never waited for (vegeta's own
// pacer may then return a negative wait, which its sleep ignores).
func TestBoundedPacerWaits(t *testing.T) {
	const iv = 2 * time.Millisecond // 500/s: hit 0 is due at 2 ms
	tests := []struct {
		name    string
		noTimer bool
		elapsed time.Duration
		// wantWait is the wait returned; for hits already due any wait <= 0 will do.
		wantWait time.Duration
		minTook  time.Duration
	}{
		{name: "not due: waited here", elapsed: iv / 2, wantWait: 0, minTook: iv / 2},
		{name: "not due, no timer: left to vegeta", noTimer: true, elapsed: iv / 2, wantWait: iv / 2},
		{name: "already due", elapsed: 3 * iv, wantWait: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &boundedPacer{Pacer: mustPacer(t, 500, ArrivalsConstant, 0), limit: 10, noTimer: tt.noTimer}
			defer func() {
				if p.timer != nil {
					p.timer.close()
				}
			}()
			start := time.Now()
			wait, stop := p.Pace(tt.elapsed, 0)
			if took := time.Since(start); took < tt.minTook {
				t.Errorf("Pace returned after %v; want at least %v", took, tt.minTook)
			}
			if stop || (tt.wantWait > 0 && wait != tt.wantWait) || (tt.wantWait == 0 && wait > 0) {
				t.Errorf("Pace = %v, %v; want %v, false", wait, stop, tt.wantWait)
			}
		})
	}
}

// A pacer that is behind sends every hit already due at once, but parks on its timer after
// every catchUpBurst of them, so that the netpoller runs in between (catchUp); a pacer on time
// never parks that way, and the greedy pacing never does.
func TestBoundedPacerYieldsWhileCatchingUp(t *testing.T) {
	tests := []struct {
		name       string
		pacing     string
		behind     uint64 // hits already due when the pacer first asks
		wantYields uint64
	}{
		{"far behind", "timer", 5*catchUpBurst + 3, 5},
		{"one burst behind", "timer", catchUpBurst, 1},
		{"less than a burst behind", "timer", catchUpBurst - 1, 0},
		{"far behind, greedy", "greedy", 5*catchUpBurst + 3, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			usePacing(t, tt.pacing)
			const rate = 1000 // hit k due at k ms
			p := &boundedPacer{Pacer: mustPacer(t, rate, ArrivalsConstant, 0), limit: 1000}
			defer func() {
				if p.timer != nil {
					p.timer.close()
				}
			}()
			// The attack began long enough ago for tt.behind hits to be due: each of them is
			// sent at once (wait <= 0).
			elapsed := time.Duration(tt.behind) * time.Millisecond
			for k := range tt.behind {
				if wait, stop := p.Pace(elapsed, k); wait > 0 || stop {
					t.Fatalf("hit %d of %d due: Pace = %v, %v; want it sent at once", k, tt.behind, wait, stop)
				}
			}
			if p.yields != tt.wantYields {
				t.Errorf("%d hits due: %d yields, want %d", tt.behind, p.yields, tt.wantYields)
			}
			// Caught up: the next hit is waited for, and the count of hits in a row starts again.
			p.Pace(elapsed, tt.behind+1)
			if p.behind != 0 {
				t.Errorf("after a wait, %d hits counted in a row; want 0", p.behind)
			}
		})
	}
}
