package experiment_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/target"
)

// recording is a Starter around the built-in one that records what the runner asks of it.
type recording struct {
	mu      sync.Mutex
	specs   []target.Spec
	sampled atomic.Int64
}

func (r *recording) Start(ctx context.Context, spec target.Spec) (target.Target, error) {
	r.mu.Lock()
	r.specs = append(r.specs, spec)
	r.mu.Unlock()
	t, err := target.BuiltIn{}.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return &counted{Target: t, n: &r.sampled}, nil
}

// counted counts Resources calls and hides the built-in target's Describe.
type counted struct {
	target.Target
	n *atomic.Int64
}

func (c *counted) Resources() []outcome.Resource { c.n.Add(1); return c.Target.Resources() }

// The runner reaches the system under test only through the target seam: one Start per
// configuration run, told every dependency's proxied address, its resources sampled into
// resources.csv; a target that cannot describe itself leaves the manifest's service config
// empty, its topology planned from the scenario.
func TestRunUsesTheTargetSeam(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 3 s)")
	sc := smoke(t)
	rec := &recording{}
	res, err := experiment.Run(context.Background(), sc, experiment.Options{ResultsRoot: t.TempDir(), Target: rec, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.specs) != len(sc.Configurations) {
		t.Fatalf("%d targets started, want %d", len(rec.specs), len(sc.Configurations))
	}
	for _, s := range rec.specs {
		if len(s.Dependencies) != len(sc.Dependencies) {
			t.Errorf("%s: told %d dependencies, want %d", s.Name, len(s.Dependencies), len(sc.Dependencies))
		}
		for name, u := range s.Dependencies {
			if !strings.HasPrefix(u, "http://127.0.0.1:") {
				t.Errorf("%s: dependency %s at %q, want a loopback proxy", s.Name, name, u)
			}
		}
	}
	if rec.sampled.Load() < 2 {
		t.Errorf("resources sampled %d times", rec.sampled.Load())
	}
	// Validity (send lag) depends on the machine's load, so it is not asserted here.
	if res.Parallel != 2 {
		t.Errorf("parallel %d, want 2", res.Parallel)
	}
	for _, c := range sc.Configurations {
		m := readManifest(t, filepath.Join(res.Dir, c.Name))
		if m.Service != nil || m.Topology == nil || m.Parallel != 2 {
			t.Errorf("%s manifest: service %s, topology %v, parallel %d", c.Name, m.Service, m.Topology, m.Parallel)
		}
		rs, err := rundir.ReadResources(filepath.Join(res.Dir, c.Name, rundir.ResourcesFile))
		if err != nil || len(rs) == 0 {
			t.Errorf("%s: %d resource samples, %v", c.Name, len(rs), err)
		}
	}
}
