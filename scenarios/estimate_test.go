package scenarios

import (
	"math"
	"strings"
	"testing"
	"time"
)

// perRunFiles is what one configuration run of base's shape writes besides its raw results over
// a time line of seconds, sampled 10 times a second: its two dependencies' rows of
// dependencies.csv and its two endpoints' progress events.
func perRunFiles(seconds float64) float64 {
	return 10*seconds*2*DependencyRowBytes + seconds*2*EventBytesPerEndpointSecond
}

// reportOf is what the report of runs configuration runs (of configs configurations) of base's
// two endpoints writes, with phases phases over seconds: the plots, summary.json and report.md.
func reportOf(runs, configs, phases int, seconds float64) (float64, int) {
	plots := runs*PlotsPerConfigurationRun + 2
	if configs > 1 {
		plots += PlotsSideBySide
	}
	return float64(plots)*PlotBytes + ReportBytesBase +
		float64(runs)*2*(float64(phases)*(SummaryBytesPerEndpointPhase+ReportBytesPerEndpointPhase)+seconds*SummaryBytesPerEndpointSecond), plots
}

func TestEstimate(t *testing.T) {
	// base: two endpoints at 10/s over a 1 s time line, one configuration without pools.
	r1, p1 := reportOf(1, 1, 1, 1)
	r6, p6 := reportOf(6, 2, 1, 1)
	rq, pq := reportOf(1, 1, 2, 2)
	tests := []struct {
		name     string
		old, new string
		parallel int
		want     Estimate
	}{
		{"base", "", "", 1, Estimate{
			Requests: 20, InFlight: 2 * 10 * 2, // 10/s x the load timeout (4 x 500ms) per endpoint
			RawBytes:    20*RawBytesPerRequest + 10*(5+2*2)*ResourceRowBytes + perRunFiles(1),
			ReportBytes: r1, Plots: p1,
			FileDescriptors: FDsBase + 2*FDsPerDependency + 2 + 40*FDsPerInFlight,
			MemoryBytes:     MemoryBase + 2*MemoryPerEndpoint + 40*MemoryPerInFlight + 2*MemoryPerDependency,
			Wall:            time.Second, Parallel: 1,
		}},
		{"repetitions and configurations multiply the totals, not the peaks", "  - name: none\n", "  - name: none\n  - name: other\nrepetitions: 3\n", 1, Estimate{
			Requests: 6 * 20, InFlight: 40,
			RawBytes:    6 * (20*RawBytesPerRequest + 10*(5+2*2)*ResourceRowBytes + perRunFiles(1)),
			ReportBytes: r6, Plots: p6,
			FileDescriptors: FDsBase + 2*FDsPerDependency + 2 + 40*FDsPerInFlight,
			MemoryBytes:     MemoryBase + 2*MemoryPerEndpoint + 40*MemoryPerInFlight + 2*MemoryPerDependency,
			Wall:            6 * time.Second, Parallel: 1,
		}},
		{"runs at once multiply the peaks and divide the wall time", "  - name: none\n", "  - name: none\n  - name: other\nrepetitions: 3\n", 4, Estimate{
			Requests: 6 * 20, InFlight: 4 * 40,
			RawBytes:    6 * (20*RawBytesPerRequest + 10*(5+2*2)*ResourceRowBytes + perRunFiles(1)),
			ReportBytes: r6, Plots: p6,
			FileDescriptors: FDsBase + 4*(2*FDsPerDependency+2+40*FDsPerInFlight),
			MemoryBytes:     MemoryBase + 4*(2*MemoryPerEndpoint+40*MemoryPerInFlight+2*MemoryPerDependency),
			Wall:            2 * time.Second, Parallel: 4, // 6 runs, 4 at a time: two rounds
		}},
		{"workers count their goroutines; phase rates their own segments", "    duration: 1s\n", "    duration: 1s\n    rates: {/a: 0}\n  - {name: q, duration: 1s, rates: {/a: 100/s}}\n", 1, Estimate{
			Requests: 100 + 20, InFlight: 100*2 + 10*2, // /a: 0 then 100/s; /b: 10/s for 2 s
			RawBytes:    120*RawBytesPerRequest + 20*(5+2*2)*ResourceRowBytes + perRunFiles(2),
			ReportBytes: rq, Plots: pq,
			FileDescriptors: FDsBase + 2*FDsPerDependency + 2 + 220*FDsPerInFlight,
			MemoryBytes:     MemoryBase + 2*MemoryPerEndpoint + 220*MemoryPerInFlight + 2*MemoryPerDependency,
			Wall:            2 * time.Second, Parallel: 1,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := base
			if tt.old != "" {
				src = edit(t, tt.old, tt.new)
			}
			s, err := Parse("t.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			got := s.Estimate(tt.parallel)
			near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
			if !near(got.Requests, tt.want.Requests) || !near(got.RawBytes, tt.want.RawBytes) || !near(got.InFlight, tt.want.InFlight) ||
				!near(got.ReportBytes, tt.want.ReportBytes) || got.Plots != tt.want.Plots ||
				!near(got.FileDescriptors, tt.want.FileDescriptors) || !near(got.MemoryBytes, tt.want.MemoryBytes) || got.Wall != tt.want.Wall || got.Parallel != tt.want.Parallel {
				t.Errorf("Estimate =\n  %+v\nwant\n  %+v", got, tt.want)
			}
		})
	}
}

// The absurd scenario of issue 10 (1e6 requests/s for 1,000 h) validates, and its estimate is
// what refuses it: petabytes of raw results, the load generator's worker cap in flight.
func TestEstimateOfTheAbsurd(t *testing.T) {
	src := strings.NewReplacer("rate: 10/s", "rate: 1000000/s", "duration: 1s", "duration: 1000h").Replace(base)
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	e := s.Estimate(1)
	if e.Requests != 2*1e6*3600*1000 || e.InFlight != 2*10000 || e.Wall != 1000*time.Hour {
		t.Errorf("estimate %+v", e)
	}
	machine := Machine{FreeDisk: 80 << 30, MaxFiles: 20000, Memory: 1 << 30}
	over := e.Exceeds(machine)
	if len(over) != 3 || !strings.Contains(over[0], "PiB of raw results and report, but 80.0 GiB free") ||
		!strings.Contains(over[1], "file descriptors, but the limit (RLIMIT_NOFILE) is 20.0k") || !strings.Contains(over[2], "of memory, but 1.0 GiB is available") {
		t.Errorf("Exceeds = %q", over)
	}
	if got := (Estimate{RawBytes: 1}).Exceeds(machine); got != nil {
		t.Errorf("a small run exceeds: %q", got)
	}
	if got := e.Exceeds(Machine{}); got != nil {
		t.Errorf("an unknown machine refuses: %q", got)
	}
}

// The report's plots dominate a short run's disk use (32 figures of 650-820 KB for hypothesis,
// against about 800 KB of raw results at a fifth of its time line), and a run with many
// endpoints plots those a fault touches and one group for the rest; the disk check counts both.
func TestEstimateCountsTheReport(t *testing.T) {
	hyp, err := Open("hypothesis")
	if err != nil {
		t.Fatal(err)
	}
	hyp.Repetitions = 1
	e := hyp.Estimate(2)
	want := len(hyp.Configurations)*PlotsPerConfigurationRun + PlotsSideBySide + len(hyp.Endpoints)
	if e.Plots != want || e.ReportBytes < float64(want)*600e3 {
		t.Errorf("hypothesis, 1 repetition: %d plots, %s of report; want %d plots (two configurations: the 32 files of a real report), over 600 KB each", e.Plots, Bytes(e.ReportBytes), want)
	}
	if over := e.Exceeds(Machine{FreeDisk: e.RawBytes + 1}); len(over) != 1 || !strings.Contains(over[0], "of raw results and report") {
		t.Errorf("room for the raw results only: Exceeds = %q, want the report counted", over)
	}
	partners, err := Open("partners")
	if err != nil {
		t.Fatal(err)
	}
	if n := partners.shownEndpoints(); n >= len(partners.Endpoints) || n < 2 {
		t.Errorf("partners: %d of %d endpoints shown; want those a fault touches and one group", n, len(partners.Endpoints))
	}
}

// The built-in service bounds what its pools guard: an endpoint whose every call takes a slot of
// a pool has at most the pools' slots and queues in flight, plus what is answered at once (its
// rate times the client timeout). Without pools, or on a system of the user's own, every request
// may take the load generator's whole timeout; the configuration run with the most in flight
// sets the peak.
func TestEstimateInFlightBoundedByThePools(t *testing.T) {
	const rate = "rate: 1000/s" // per endpoint; the load timeout is 4 x 500 ms
	unbounded := 1000 * 2.0     // one endpoint: 1,000/s x 2 s
	fast := 1000 * 0.5          // one endpoint: 1,000/s x the 500 ms client timeout
	tests := []struct {
		name, configurations string
		want                 float64
	}{
		{"no pools", "  - name: none\n", 2 * unbounded},
		{"one shared pool of 5 with a queue of 5", "  - {name: shared, pools: [{name: p, size: 5, queue: 5, max_wait: 100ms, dependencies: [A, B]}]}\n",
			10 + 2*fast},
		{"split, both guarded", "  - {name: split, pools: [{name: a, size: 5, dependencies: [A]}, {name: b, size: 5, queue: 3, max_wait: 100ms, dependencies: [B]}]}\n",
			13 + 2*fast},
		{"the same pools on a url target", "  - {name: own, pools: [{name: p, size: 5, queue: 5, max_wait: 100ms, dependencies: [A, B]}], target: {url: \"http://127.0.0.1:8080\"}}\n",
			2 * unbounded},
		{"the largest configuration sets the peak", "  - {name: shared, pools: [{name: p, size: 5, queue: 5, max_wait: 100ms, dependencies: [A, B]}]}\n  - name: none\n",
			2 * unbounded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := strings.Replace(edit(t, "  - name: none\n", tt.configurations), "rate: 10/s", rate, 1)
			s, err := Parse("t.yaml", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Estimate(1).InFlight; math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("InFlight = %v, want %v", got, tt.want)
			}
		})
	}
}

// Pools large enough that the bound is above the demand change nothing: the demand is the
// smaller.
func TestEstimateInFlightIsTheSmallerOfDemandAndPools(t *testing.T) {
	src := edit(t, "  - name: none\n", "  - {name: shared, pools: [{name: p, size: 1000, queue: 1000, max_wait: 100ms, dependencies: [A, B]}]}\n")
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Estimate(1).InFlight; got != 40 { // 10/s x 2 s per endpoint, under 2,000 + 10
		t.Errorf("InFlight = %v, want 40", got)
	}
}
