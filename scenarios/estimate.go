package scenarios

import (
	"fmt"
	"math"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/service"
)

// Costs Estimate counts per unit. They are measured or reasoned upper-side figures, not
// guarantees: the point is to catch the run that needs a thousand times what the machine has,
// before it starts.
const (
	// RawBytesPerRequest is one vegeta JSON line of a raw results file: the mean over the 14,000
	// lines of results/example (339 bytes; the longest, a rejection with every header, 449).
	RawBytesPerRequest = 340
	// ResourceRowBytes is one row of resources.csv (results/example: 784,803 bytes in 15,446
	// rows, 51 each, since a row carries its interval's mean, maximum and time at capacity).
	ResourceRowBytes = 52
	// FDsPerInFlight: a request in flight holds three connections whose both ends are in this
	// process (load generator to service, service to proxy, proxy to dependency).
	FDsPerInFlight = 6
	// FDsPerDependency: the fake dependency's listener and its proxy's.
	FDsPerDependency = 2
	// FDsBase: the process, its standard files, the Toxiproxy API, the service's listener,
	// resources.csv and slack.
	FDsBase = 64
	// MemoryBase is the process without load: binary, embedded Toxiproxy, the service.
	MemoryBase = 64 << 20
	// MemoryPerEndpoint is one attack: its vegeta attacker and transport, its send-lag histogram
	// (221 KB at 1 ns..1 min, 3 digits) and its 11 window histograms (27 KB each).
	MemoryPerEndpoint = 512 << 10
	// MemoryPerInFlight is one request in flight: the goroutines of its three connections' ends
	// and of the proxy, their stacks and their read and write buffers.
	MemoryPerInFlight = 96 << 10
	// MemoryPerDependency is one fake dependency, its proxy and the service's transport to it.
	MemoryPerDependency = 64 << 10
	// MemoryPerWorker is one worker goroutine of a workers pool.
	MemoryPerWorker = 8 << 10
	// resourcesPerSample is the rows one resources sample writes besides the pools' and the
	// dependencies' (goroutines, heap, stack, inbound and outbound connections).
	resourcesPerSample = 5
	// DependencyRowBytes is one row of dependencies.csv, per dependency per sample (a hypothesis
	// run: 15,852 bytes in 192 rows, 83 each; its answer-time columns widen with their spread).
	DependencyRowBytes = 128
	// PlotBytes is one figure of the report, PNG and SVG together (the SVG embeds its fonts): 650
	// to 820 KB each in a hypothesis report, the latency heatmaps the largest.
	PlotBytes = 820 << 10
	// PlotsPerConfigurationRun are the figures of each configuration run (latency, outcomes,
	// throughput, latency heatmap, send lag, resources: report/output's PlotsOf); a run of several
	// configurations adds PlotsSideBySide, and every endpoint shown one percentile figure.
	PlotsPerConfigurationRun = 6
	PlotsSideBySide          = 2
	// SummaryBytesPerEndpointPhase is summary.json's account of one endpoint in one phase of one
	// configuration run (statistics, percentile curve, histogram); SummaryBytesPerEndpointSecond
	// its time line per second; report.md adds ReportBytesBase and ReportBytesPerEndpointPhase.
	// results/example (2 runs x 2 endpoints x 7 phases, 70 s): summary.json 586 KB, report.md 31 KB.
	SummaryBytesPerEndpointPhase  = 16 << 10
	SummaryBytesPerEndpointSecond = 1 << 10
	ReportBytesBase               = 32 << 10
	ReportBytesPerEndpointPhase   = 1 << 10
	// EventBytesPerEndpointSecond is the load generator child's event log (attack.stdout.jsonl):
	// one progress entry per endpoint a second.
	EventBytesPerEndpointSecond = 128
	// reportGroupFrom is report/ingest's groupFrom: above this many endpoints, those that call no
	// faulted dependency are reported (and plotted) as one group.
	reportGroupFrom = 8
)

// Estimate is what a run of a scenario needs, computed from the scenario alone (see
// (*Scenario).Estimate). The totals are the sum over every configuration run (configuration x
// repetition); the peaks are those of the largest configuration run times the number that run at
// once.
type Estimate struct {
	// Requests is the number of requests sent over the whole run.
	Requests float64
	// RawBytes is what the run writes: raw results, resources.csv, dependencies.csv and the load
	// generator's event log.
	RawBytes float64
	// ReportBytes is what `bulkhead report` writes beside them: Plots figures (PNG and SVG),
	// summary.json and report.md.
	ReportBytes float64
	// Plots is the number of figures the report draws.
	Plots int
	// InFlight is the peak number of requests in flight, in the configuration run with the most,
	// times the runs at once. An endpoint at its highest rate may have every request take the
	// load generator's whole timeout, capped by the load generator's workers
	// (loadgen.DefaultMaxWorkers). Where the built-in service bounds an endpoint (every call it
	// makes takes a slot of a pool, or it is an inbound endpoint, which answers at once), its
	// requests either hold a slot or a place in a pool's queue, or are answered without waiting
	// for anything: the bounded endpoints of a configuration then have at most its pools' slots
	// and queues in flight, plus their rate times the client timeout (a generous bound on the
	// requests answered at once).
	InFlight float64
	// FileDescriptors is the peak number of open files and sockets.
	FileDescriptors float64
	// MemoryBytes is the peak memory.
	MemoryBytes float64
	// Wall is how long the run takes: the time line once per configuration run, parallel of
	// them at a time.
	Wall time.Duration
	// Parallel is the number of configuration runs at once the peaks count.
	Parallel int
}

// Estimate returns what running s needs with parallel configuration runs at once (at least 1, at
// most all of them). It is a pure function of the scenario: it does not look at the machine (the
// caller compares) and does not block. Call it on a scenario that validates; the figures are
// floats so that absurd scenarios do not overflow.
func (s *Scenario) Estimate(parallel int) Estimate {
	nruns := len(s.Configurations) * max(s.Repetitions, 1)
	runs := float64(nruns)
	k := float64(min(max(parallel, 1), max(nruns, 1)))
	timeline := s.Duration()
	loadTimeout := s.Load.Timeout
	if loadTimeout <= 0 {
		loadTimeout = DefaultLoadTimeoutFactor * s.Timeout
	}
	sample := s.SampleEvery
	if sample <= 0 {
		sample = DefaultSampleEvery
	}

	var perRun float64
	demands := make([]endpointDemand, len(s.Endpoints))
	for i, e := range s.Endpoints {
		peak := e.Rate
		if e.Rate == 0 {
			peak = s.Load.Rate
		}
		sent := peak * timeline.Seconds()
		if segs, ok := s.RateSegments(e); ok {
			sent, peak = 0, 0
			for i, g := range segs {
				end := timeline
				if i+1 < len(segs) {
					end = segs[i+1].Start
				}
				sent += g.Rate * (end - g.Start).Seconds()
				peak = max(peak, g.Rate)
			}
		}
		perRun += sent
		demands[i] = endpointDemand{EndpointConfig: e.EndpointConfig, peak: peak,
			inFlight: min(peak*loadTimeout.Seconds(), float64(loadgen.DefaultMaxWorkers))}
	}
	var inFlight float64
	for _, c := range s.Configurations {
		inFlight = max(inFlight, s.inFlight(c, demands))
	}

	var est Estimate
	est.Parallel = int(k)
	est.Requests = perRun * runs
	est.InFlight = inFlight * k
	samples := timeline.Seconds() / sample.Seconds()
	var workers, pools float64
	for _, c := range s.Configurations {
		w := 0.0
		for _, p := range c.Pools {
			w += float64(service.PoolGoroutines(p.PoolConfig))
		}
		workers, pools = max(workers, w), max(pools, float64(len(c.Pools)))
	}
	rows := samples * (resourcesPerSample + 2*float64(len(s.Dependencies)) + 2*pools)
	est.RawBytes = est.Requests*RawBytesPerRequest + rows*ResourceRowBytes*runs +
		runs*samples*float64(len(s.Dependencies))*DependencyRowBytes +
		runs*timeline.Seconds()*float64(len(s.Endpoints))*EventBytesPerEndpointSecond
	shown := float64(s.shownEndpoints())
	est.Plots = nruns*PlotsPerConfigurationRun + int(shown)
	if len(s.Configurations) > 1 {
		est.Plots += PlotsSideBySide
	}
	phases := float64(len(s.Phases))
	est.ReportBytes = float64(est.Plots)*PlotBytes + ReportBytesBase +
		runs*shown*(phases*(SummaryBytesPerEndpointPhase+ReportBytesPerEndpointPhase)+timeline.Seconds()*SummaryBytesPerEndpointSecond)
	deps, eps := float64(len(s.Dependencies)), float64(len(s.Endpoints))
	est.FileDescriptors = FDsBase + k*(deps*FDsPerDependency+eps+inFlight*FDsPerInFlight)
	est.MemoryBytes = MemoryBase + k*(eps*MemoryPerEndpoint+inFlight*MemoryPerInFlight+
		deps*MemoryPerDependency+workers*MemoryPerWorker)
	wall := timeline.Seconds() * math.Ceil(runs/k)
	if wall >= float64(time.Duration(1<<63-1))/float64(time.Second) {
		est.Wall = time.Duration(1<<63 - 1)
	} else {
		est.Wall = time.Duration(wall * float64(time.Second))
	}
	return est
}

// shownEndpoints is how many endpoints the report shows one by one: all of them up to
// reportGroupFrom, else those that call a faulted dependency and one group for the rest.
func (s *Scenario) shownEndpoints() int {
	if len(s.Endpoints) <= reportGroupFrom {
		return len(s.Endpoints)
	}
	faulted := map[string]bool{}
	for _, ph := range s.Phases {
		for _, f := range ph.Faults {
			faulted[f.Dependency] = true
		}
	}
	n := 1
	for _, e := range s.Endpoints {
		for _, d := range e.Calls {
			if faulted[d] {
				n++
				break
			}
		}
	}
	return n
}

// endpointDemand is what one endpoint asks of a configuration run: its highest rate, and how
// many of its requests may be in flight if each took the load generator's whole timeout.
type endpointDemand struct {
	service.EndpointConfig
	peak, inFlight float64
}

// inFlight is the most requests configuration c may have in flight (see Estimate.InFlight).
func (s *Scenario) inFlight(c Configuration, demands []endpointDemand) float64 {
	var free, bounded, fast float64
	covered := map[string]bool{}
	var slots float64
	for _, p := range c.Pools {
		slots += float64(p.Size + p.QueueCapacity)
		for _, d := range p.Dependencies {
			covered[d] = true
		}
	}
	for _, d := range demands {
		pooled := c.Target == nil // a system of the user's own: nothing known of its bounds
		if d.Inbound == nil {
			for _, call := range d.Calls {
				pooled = pooled && covered[call]
			}
		}
		if !pooled {
			free += d.inFlight
			continue
		}
		bounded += d.inFlight
		fast += d.peak * s.Timeout.Seconds()
	}
	return free + min(bounded, slots+fast)
}

// String writes the estimate on one line.
func (e Estimate) String() string {
	return fmt.Sprintf("%s requests, %s of raw results and %s of report (%d plots), %s requests in flight at the peak, %s file descriptors, %s of memory, %v of wall time (%d configuration %s at once)",
		Count(e.Requests), Bytes(e.RawBytes), Bytes(e.ReportBytes), e.Plots, Count(e.InFlight), Count(e.FileDescriptors), Bytes(e.MemoryBytes), e.Wall, e.Parallel,
		map[bool]string{true: "run", false: "runs"}[e.Parallel == 1])
}

// Bytes writes n bytes with a binary unit ("1.5 GiB").
func Bytes(n float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for n >= 1024 && i < len(units)-1 {
		n /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", n)
	}
	return fmt.Sprintf("%.1f %s", n, units[i])
}

// Count writes a count with a decimal suffix ("3.6e+12" style for the absurd, "12.5k", "42").
func Count(n float64) string {
	switch {
	case n >= 1e12:
		return fmt.Sprintf("%.2g", n)
	case n >= 1e9:
		return fmt.Sprintf("%.1fG", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1fM", n/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.1fk", n/1e3)
	}
	return fmt.Sprintf("%.0f", n)
}

// Machine is what a machine offers a run; a zero field is unknown and not compared.
type Machine struct {
	// FreeDisk is the bytes free to an unprivileged user where the results go.
	FreeDisk float64
	// MaxFiles is the process's limit on open files (RLIMIT_NOFILE).
	MaxFiles float64
	// Memory is the memory available without swapping (Linux MemAvailable).
	Memory float64
}

// Exceeds returns, one per line, what e needs beyond what m has, or nil when it fits.
func (e Estimate) Exceeds(m Machine) []string {
	var over []string
	if disk := e.RawBytes + e.ReportBytes; m.FreeDisk > 0 && disk > m.FreeDisk {
		over = append(over, fmt.Sprintf("%s of raw results and report, but %s free where they go", Bytes(disk), Bytes(m.FreeDisk)))
	}
	if m.MaxFiles > 0 && e.FileDescriptors > m.MaxFiles {
		over = append(over, fmt.Sprintf("%s file descriptors, but the limit (RLIMIT_NOFILE) is %s", Count(e.FileDescriptors), Count(m.MaxFiles)))
	}
	if m.Memory > 0 && e.MemoryBytes > m.Memory {
		over = append(over, fmt.Sprintf("%s of memory, but %s is available", Bytes(e.MemoryBytes), Bytes(m.Memory)))
	}
	return over
}

// String writes what the machine offers on one line.
func (m Machine) String() string {
	show := func(v float64, f func(float64) string) string {
		if v <= 0 {
			return "unknown"
		}
		return f(v)
	}
	return fmt.Sprintf("%s free disk, %s file descriptors, %s of memory available",
		show(m.FreeDisk, Bytes), show(m.MaxFiles, Count), show(m.Memory, Bytes))
}
