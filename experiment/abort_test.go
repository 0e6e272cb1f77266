package experiment_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/faults/proxy/proxytest"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// lockedBuffer is a progress writer safe for the runner's goroutines; it calls at once at the
// first progress line (the load is running).
type lockedBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	once sync.Once
	at   func()
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	b.buf.Write(p)
	b.mu.Unlock()
	if strings.Contains(string(p), "t=") || strings.Contains(string(p), "%") {
		b.once.Do(b.at)
	}
	return len(p), nil
}

func (b *lockedBuffer) String() string { b.mu.Lock(); defer b.mu.Unlock(); return b.buf.String() }

// A run against an external Toxiproxy removes at its start the proxies a dead run left there
// (and says so), names its own proxies after its process, and Abort (the second interrupt)
// removes them all at once and marks run.json interrupted, while the run is still going.
func TestExternalToxiproxyLeftClean(t *testing.T) {
	testenv.Long(t, "runs the smoke scenario (about 1 s)")
	api := proxytest.NewAPIServer(t)
	ctx := context.Background()
	x, err := proxy.NewExternal(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	const deadPID = 999_999_9 // above the kernel's pid_max: never alive
	stale := proxy.OwnedName(deadPID, "20260101T000000Z-smoke", "shared", "A")
	if _, err := x.AddProxy(ctx, stale, "127.0.0.1:1"); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var during, afterAbort []string
	var runAfterAbort rundir.Run
	var abortErr error
	progress := &lockedBuffer{}
	progress.at = func() {
		during, _ = x.Proxies(ctx)
		abortCtx, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		abortErr = experiment.Abort(abortCtx)
		afterAbort, _ = x.Proxies(ctx)
		runs, _ := filepath.Glob(filepath.Join(root, "*", rundir.RunFile))
		if len(runs) == 1 {
			_ = rundir.ReadJSON(runs[0], &runAfterAbort)
		}
		cancel()
	}
	_, _ = experiment.Run(runCtx, smoke(t), experiment.Options{
		ResultsRoot: root, Toxiproxy: api, Parallel: 1, Progress: progress, ProgressEvery: 100 * time.Millisecond,
	})
	if !strings.Contains(progress.String(), "removed 1 stale proxies") || !strings.Contains(progress.String(), stale) {
		t.Errorf("the run did not say it removed %s:\n%s", stale, progress.String())
	}
	if len(during) == 0 {
		t.Fatal("no proxy on the external Toxiproxy while the run was running")
	}
	for _, n := range during {
		if n == stale {
			t.Errorf("stale proxy %s still there while running", n)
		}
		if pid, ok := proxy.OwnerPID(n); !ok || !supervise.Alive(pid) {
			t.Errorf("proxy %q is not named after a live owner", n)
		}
	}
	if abortErr != nil || len(afterAbort) != 0 {
		t.Errorf("after Abort: %v, proxies left %v", abortErr, afterAbort)
	}
	if runAfterAbort.State != rundir.StateInterrupted || !runAfterAbort.Partial {
		t.Errorf("run.json after Abort: state %q partial %v; want interrupted, partial", runAfterAbort.State, runAfterAbort.Partial)
	}
	if left, _ := x.Proxies(ctx); len(left) != 0 {
		t.Errorf("proxies left after the run: %v", left)
	}
}
