package loadgen

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// at is a reading of two CPUs: steal and total ticks of CPU 0, then of CPU 1.
func at(steal0, total0, steal1, total1 uint64) cpuTimes {
	return cpuTimes{steal: []uint64{steal0, steal1}, total: []uint64{total0, total1}, ok: true}
}

func TestStealFraction(t *testing.T) {
	for _, tc := range []struct {
		name string
		a, b cpuTimes
		want float64
	}{
		{"none stolen", at(5, 1000, 7, 1000), at(5, 2000, 7, 2000), 0},
		{"a tenth of CPU 1 stolen, none of CPU 0: the most one CPU lost", at(5, 1000, 7, 1000), at(5, 2000, 107, 2000), 0.1},
		{"both lost some", at(0, 1000, 0, 1000), at(20, 2000, 50, 2000), 0.05},
		{"first reading failed", cpuTimes{}, at(5, 2000, 7, 2000), -1},
		{"second reading failed", at(5, 1000, 7, 1000), cpuTimes{}, -1},
		{"a CPU came or went", cpuTimes{steal: []uint64{1}, total: []uint64{10}, ok: true}, at(5, 2000, 7, 2000), -1},
		{"no time accounted", at(5, 1000, 7, 1000), at(5, 1000, 7, 1000), -1},
		{"counters went back on one CPU", at(50, 1000, 0, 1000), at(5, 2000, 30, 2000), 0.03},
	} {
		if got := stealFraction(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: stealFraction = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestStealNoteNamesOnlyNotableSteal(t *testing.T) {
	for _, tc := range []struct {
		steal float64
		want  string
	}{
		{-1, ""},
		{0, ""},
		{NotableSteal / 2, ""},
		{NotableSteal, "; the hypervisor took 1.0% of a CPU's time during the run (steal time)"},
		{0.163, "; the hypervisor took 16.3% of a CPU's time during the run (steal time)"},
	} {
		if got := stealNote(tc.steal); got != tc.want {
			t.Errorf("stealNote(%v) = %q, want %q", tc.steal, got, tc.want)
		}
	}
}

// fakeCPUTimes makes the run read the given readings in turn (the last one again after them).
func fakeCPUTimes(t *testing.T, readings ...cpuTimes) {
	t.Helper()
	var mu sync.Mutex
	old := cpuTimesNow
	cpuTimesNow = func() cpuTimes {
		mu.Lock()
		defer mu.Unlock()
		r := readings[0]
		if len(readings) > 1 {
			readings = readings[1:]
		}
		return r
	}
	t.Cleanup(func() { cpuTimesNow = old })
}

// lateRun runs a sparse attack whose every send is late (a lag limit of 1 ns) while the
// machine's accounting reads start, then end, and returns its attack check and the pooled one.
// The attack is too sparse for a p99 of its own, so the pooled check is the one that fails.
func lateRun(t *testing.T, start, end cpuTimes) (attack, pooled Check) {
	t.Helper()
	fakeCPUTimes(t, start, end)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	attacks := []Attack{{Name: "/a", URL: srv.URL, Pacer: mustPacer(t, 200, ArrivalsConstant, 0), Out: io.Discard}}
	r := startRun(t, attacks, 500*time.Millisecond, WithLagLimit(time.Nanosecond))
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	return checks[0], r.Pooled()
}

// A run whose sends were late on a machine the hypervisor starved says so in its reasons, with
// the most one CPU lost between its start and its end; every check carries that share.
func TestLateSendsOnAStarvedMachineNameTheSteal(t *testing.T) {
	attack, c := lateRun(t, at(100, 10_000, 50, 10_000), at(142, 11_000, 60, 11_000))
	if attack.Steal != 0.042 {
		t.Errorf("attack check: Steal %v, want 0.042", attack.Steal)
	}
	if c.Steal != 0.042 || c.Valid || len(c.Reasons) != 1 ||
		!strings.HasSuffix(c.Reasons[0], "; the hypervisor took 4.2% of a CPU's time during the run (steal time)") {
		t.Errorf("pooled check: steal %v valid %v reasons %q; want 0.042 and the lag reason naming 4.2%% stolen", c.Steal, c.Valid, c.Reasons)
	}
}

// Without steal worth naming, the reason is the lag alone.
func TestLateSendsOnAQuietMachineDoNotNameSteal(t *testing.T) {
	_, c := lateRun(t, at(100, 10_000, 50, 10_000), at(101, 11_000, 50, 11_000))
	if c.Steal != 0.001 || c.Valid || len(c.Reasons) != 1 || strings.Contains(c.Reasons[0], "steal") {
		t.Errorf("steal %v valid %v reasons %q; want 0.001 and the lag reason alone", c.Steal, c.Valid, c.Reasons)
	}
}

// On Linux the real accounting is read: a run's steal is a share, not unknown.
func TestStealIsReadOnLinux(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.SkipOrFail(t, "steal time is read from /proc/stat, which %s has not", runtime.GOOS)
	}
	if got := readCPUTimes(); !got.ok || len(got.total) == 0 {
		t.Fatalf("readCPUTimes() = %+v; want a reading of /proc/stat", got)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	attacks := []Attack{{Name: "/a", URL: srv.URL, Pacer: mustPacer(t, 50, ArrivalsConstant, 0), Out: io.Discard}}
	r := startRun(t, attacks, 300*time.Millisecond)
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if s := checks[0].Steal; s < 0 || s > 1 {
		t.Errorf("Steal %v; want a share in [0, 1]", s)
	}
}
