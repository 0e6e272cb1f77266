package nodebulkhead

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/report"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// scaledDown is scenario.yaml with every phase 3 s long (21 s per configuration).
func scaledDown(t *testing.T) *scenarios.Scenario {
	t.Helper()
	raw, err := os.ReadFile("scenario.yaml")
	if err != nil {
		t.Fatal(err)
	}
	raw = regexp.MustCompile(`duration: \d+s`).ReplaceAll(raw, []byte("duration: 3s"))
	sc, err := scenarios.Parse("scenario.yaml", raw)
	if err != nil {
		t.Fatal(err)
	}
	// One repetition: the test reads the configurations' folders by name (a repeated run names
	// them <configuration>-r<n>).
	sc.Repetitions = 1
	return sc
}

// bRejected returns, from configuration conf's raw results, the share of /b requests sent during
// phase that were rejected.
func bRejected(t *testing.T, dir, conf, phase string) (rejected, total int) {
	t.Helper()
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(dir, conf, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	var from, to time.Duration
	for _, p := range m.Phases {
		if p.Name == phase {
			from, to = p.Start, p.End
		}
	}
	var raw string
	for _, e := range m.Endpoints {
		if e.Path == "/b" {
			raw = e.RawFile
		}
	}
	err := rundir.ScanRaw(filepath.Join(dir, conf, raw), func(s *rundir.Sent) error {
		if at := s.Timestamp.Sub(m.Started); at >= from && at < to {
			total++
			if strings.HasPrefix(s.Class, "rejected") {
				rejected++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rejected, total
}

// The scenario runs as `bulkhead run examples/node-bulkhead/scenario.yaml` does: server.js is
// started per configuration under the supervisor, behind proxies on the fixed listen addresses.
// With A slow, /b is starved under shared (its requests rejected by the shared limit) and not
// under split, read from the raw results; the report's "what ran out" names server.js's shared
// pool, known only from scraping its /metrics.
func TestScenarioRuns(t *testing.T) {
	testenv.Long(t, "runs two 21 s time lines")
	if _, err := exec.LookPath("node"); err != nil {
		testenv.SkipOrFail(t, "node (Node.js) is not installed")
	}
	res, err := experiment.Run(context.Background(), scaledDown(t), experiment.Options{ResultsRoot: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rej, n := bRejected(t, res.Dir, "shared", "latency")
	if n == 0 || float64(rej) < 0.5*float64(n) {
		t.Errorf("shared, latency: /b %d of %d rejected, want most: starved by A", rej, n)
	}
	rej, n = bRejected(t, res.Dir, "split", "latency")
	if n == 0 || rej != 0 {
		t.Errorf("split, latency: /b %d of %d rejected, want none", rej, n)
	}
	sum, err := report.Generate(res.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Configurations {
		if c.Name != "shared" {
			continue
		}
		for _, p := range c.Phases {
			if p.Name == "latency" && (p.Cause == nil || p.Cause.Resource != "pool:shared") {
				t.Errorf("shared, latency: cause %+v (%s), want pool:shared", p.Cause, p.Sentence)
			}
		}
	}
	// Seed 004's P1 and P2 claims, judged on the scaled-down run: with 3 s phases some may be
	// inconclusive, but none may be judged false.
	for _, cl := range sum.Verdict.Claims {
		t.Logf("%s: %s", cl.ID, verdictText(cl.Holds))
		if cl.Holds != nil && !*cl.Holds {
			t.Errorf("claim %s (%s) does not hold", cl.ID, cl.Says)
		}
	}
	md, err := os.ReadFile(filepath.Join(res.Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"the shared pool saturated", "system under test command `node server.js --mode shared", "outcomes classed by 502 upstream:status-502; 503 rejected:full"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md does not say %q", w)
		}
	}
}

func verdictText(h *bool) string {
	switch {
	case h == nil:
		return "inconclusive or not measurable"
	case *h:
		return "holds"
	}
	return "does not hold"
}
