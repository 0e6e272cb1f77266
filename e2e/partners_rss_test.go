package e2e_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/report/model"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// TestFigurePartnersPeakRSS is a figure, not a check: the peak resident memory of `bulkhead run
// partners` (seed 003's hub of 500 dependencies behind the embedded Toxiproxy, 549 requests/s,
// a 30 s time line per configuration) as its own process, for both configurations in one run and
// for each alone (--only), with each configuration's validity, the send-lag p99 of its dense
// attacks (those with loadgen.MinLagSamples sends or more: walmart; the 499 sparse ones are
// judged on their pooled sends, which the validity includes), the largest
// start skew of its 500 attacks, and goroutines and stacks; and both configurations again with
// GOGC=100 in the environment, which the run then keeps instead of its own collection pacing
// (experiment's gc.go). It builds the binary, runs only with BULKHEAD_PARTNERS_RSS=1 and takes
// about 4 minutes; run it on a quiet machine, with -v:
//
//	BULKHEAD_PARTNERS_RSS=1 go test -run FigurePartnersPeakRSS -v -timeout 10m ./e2e
//
// Two peaks: the largest single process's maximum resident set size (getrusage; the runner's, as
// it turns out), and the largest sum of the resident sets of the runner and every process under
// it, sampled, since each configuration's load generator is a child process with memory of its
// own. Both cover the whole command: the runs and the report built after them.
func TestFigurePartnersPeakRSS(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_PARTNERS_RSS", "memory of a 20-partner run")
	bin := filepath.Join(t.TempDir(), "bulkhead")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/bulkheadlab/bulkhead/cmd/bulkhead").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	for _, r := range []struct{ only, gogc string }{{"", ""}, {"", "100"}, {"semaphores", ""}, {"workers", ""}} {
		out := t.TempDir()
		args := []string{"run", "partners", "--plain", "--out", out}
		label := "both configurations"
		if r.only != "" {
			args = append(args, "--only", r.only)
			label = "--only " + r.only
		}
		cmd := exec.Command(bin, args...)
		if r.gogc != "" {
			// The peer: the Go runtime's own collection pacing instead of the run's.
			cmd.Env = append(os.Environ(), "GOGC="+r.gogc)
			label += ", GOGC=" + r.gogc
		}
		var stdout bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stdout
		began := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		treePeak := sampleTreeRSS(cmd.Process.Pid)
		err := cmd.Wait()
		took := time.Since(began)
		tree := <-treePeak
		var exit *exec.ExitError
		if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 99) {
			t.Fatalf("%s: %v\n%s", label, err, lastBytes(stdout.String(), 2000))
		}
		ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		peakMB := 0.0
		if ru != nil {
			peakMB = float64(ru.Maxrss) / 1024 // KB on Linux
		}
		t.Logf("%s: peak RSS %.0f MB of the largest process; %.0f MB of the runner and its children together (sampled every %v); %v wall, exit %d",
			label, peakMB, float64(tree)/(1<<20), treeSampleEvery, took.Round(100*time.Millisecond), cmd.ProcessState.ExitCode())
		runs, _ := filepath.Glob(filepath.Join(out, "*-partners"))
		if len(runs) != 1 {
			t.Fatalf("%s: want one run folder in %s, got %v", label, out, runs)
		}
		var run rundir.Run
		if err := rundir.ReadJSON(filepath.Join(runs[0], rundir.RunFile), &run); err != nil {
			t.Fatal(err)
		}
		t.Logf("  run.json gc_percent %d (0: the process's GOGC)", run.GCPercent)
		var sum model.Summary
		if err := rundir.ReadJSON(filepath.Join(runs[0], rundir.SummaryFile), &sum); err != nil {
			t.Fatal(err)
		}
		mem := map[string]*model.Memory{}
		for i := range sum.Configurations {
			mem[sum.Configurations[i].Name] = sum.Configurations[i].Memory
		}
		folders, _ := filepath.Glob(filepath.Join(runs[0], "*", rundir.ManifestFile))
		for _, f := range folders {
			var m rundir.Manifest
			if err := rundir.ReadJSON(f, &m); err != nil {
				t.Fatal(err)
			}
			var child int64
			if m.Load != nil {
				child = m.Load.PeakRSS
			}
			var dense []string
			var skew time.Duration
			for _, e := range m.Endpoints {
				skew = max(skew, e.StartSkew)
				if e.Sent >= loadgen.MinLagSamples {
					dense = append(dense, fmt.Sprintf("%s %v", e.Path, e.LagP99.Round(10*time.Microsecond)))
				}
			}
			line := ""
			if mm := mem[m.Configuration]; mm != nil {
				line = fmt.Sprintf(", goroutines mean %.0f (max %d), stacks max %.1f MB, heap max %.1f MB",
					mm.GoroutinesMean, mm.GoroutinesMax, float64(mm.StackBytesMax)/(1<<20), float64(mm.HeapBytesMax)/(1<<20))
			}
			t.Logf("  %s: valid %v %s, send-lag p99 %s (limit %v), largest start skew of %d attacks %v%s, load generator peak RSS %.0f MB",
				m.Configuration, m.Valid, strings.Join(m.Invalid, "; "), strings.Join(dense, ", "), m.LagLimit, len(m.Endpoints), skew.Round(10*time.Microsecond), line, float64(child)/(1<<20))
		}
	}
}

// lastBytes returns the last n bytes of s (all of s when shorter).
func lastBytes(s string, n int) string { return s[max(len(s)-n, 0):] }

// treeSampleEvery is how often sampleTreeRSS adds up the process tree's resident memory.
const treeSampleEvery = 50 * time.Millisecond

// sampleTreeRSS adds up the resident memory of pid and every process descended from it every
// treeSampleEvery until pid is gone, and then sends the largest sum in bytes. (getrusage gives
// only the largest single process: the load generators are children with their own peaks.)
func sampleTreeRSS(pid int) <-chan int64 {
	peak := make(chan int64, 1)
	page := int64(os.Getpagesize())
	go func() {
		var most int64
		defer func() { peak <- most }()
		for {
			parents := map[int]int{}
			resident := map[int]int64{}
			for _, p := range processes() {
				statm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p.pid), "statm"))
				if m := strings.Fields(string(statm)); err == nil && len(m) >= 2 {
					pages, _ := strconv.ParseInt(m[1], 10, 64)
					parents[p.pid], resident[p.pid] = p.ppid, pages*page
				}
			}
			if _, alive := resident[pid]; !alive {
				return
			}
			var sum int64
			for p, rss := range resident {
				for q := p; q > 1; q = parents[q] {
					if q == pid {
						sum += rss
						break
					}
				}
			}
			most = max(most, sum)
			time.Sleep(treeSampleEvery)
		}
	}()
	return peak
}
