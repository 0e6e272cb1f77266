package experiment

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults/proxy/apiserver"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/scenarios"
)

// syncWriter is a progress writer safe for the runner's goroutines; it calls at once at the
// first progress line of a running load.
type syncWriter struct {
	mu   sync.Mutex
	b    strings.Builder
	once sync.Once
	at   func()
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.b.Write(p)
	w.mu.Unlock()
	if strings.Contains(string(p), "last 1 s:") {
		w.once.Do(w.at)
	}
	return len(p), nil
}

func (w *syncWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }

// fakePinger is a fake Toxiproxy for watchHealth: it answers until dead is set.
type fakePinger struct{ dead atomic.Bool }

func (f *fakePinger) Ping(context.Context) error {
	if f.dead.Load() {
		return errors.New("connection refused")
	}
	return nil
}
func (f *fakePinger) URL() string { return "http://127.0.0.1:8474" }

// watchHealth halts the time line at the first failed check, with an error naming the server's
// address and the offset into the time line, and returns it; while the server answers it halts
// nothing and returns nil once stopped.
func TestWatchHealth(t *testing.T) {
	t.Run("alive until stopped", func(t *testing.T) {
		stop := make(chan struct{})
		done := make(chan error, 1)
		halted := false
		go func() { done <- watchHealth(stop, time.Now(), &fakePinger{}, func(error) { halted = true }) }()
		time.Sleep(3 * healthEvery)
		close(stop)
		if err := <-done; err != nil || halted {
			t.Errorf("watchHealth = %v, halted %v; want nil and no halt", err, halted)
		}
	})
	t.Run("dies", func(t *testing.T) {
		p := &fakePinger{}
		p.dead.Store(true)
		var got error
		err := watchHealth(make(chan struct{}), time.Now(), p, func(e error) { got = e })
		if err == nil || got != err {
			t.Fatalf("watchHealth = %v, halt got %v; want the same error in both", err, got)
		}
		for _, want := range []string{"toxiproxy at http://127.0.0.1:8474 stopped answering", "s into the time line", "connection refused"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not say %q", err, want)
			}
		}
	})
}

// An external Toxiproxy that dies mid-run fails the configuration: the load is stopped at once
// instead of running on at 100% errors, the progress says so, the manifest says failed and why
// (the address), and Run returns the error.
func TestExternalToxiproxyDeathFailsTheConfiguration(t *testing.T) {
	testenv.Long(t, "runs a configuration of the smoke scenario for a few seconds")
	api := apiserver.NewToxiproxy()
	srv := httptest.NewServer(apiserver.Handler(api))
	t.Cleanup(func() { srv.Close(); _ = apiserver.Clear(context.Background(), api) })
	sc := open(t, "smoke")
	if _, err := sc.Override(scenarios.Overrides{Scale: 20, Only: []string{sc.Configurations[0].Name}}); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	progress := &syncWriter{}
	var killed time.Time
	progress.at = func() { // the load is running: kill the Toxiproxy's API
		srv.CloseClientConnections()
		srv.Listener.Close()
		killed = time.Now()
	}
	start := time.Now()
	res, err := Run(context.Background(), sc, Options{ResultsRoot: root, Toxiproxy: srv.URL, Parallel: 1,
		Progress: progress, ProgressEvery: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "toxiproxy at "+srv.URL+" stopped answering") {
		t.Fatalf("Run = %v; want the configuration failed, naming %s\nprogress:\n%s", err, srv.URL, progress.String())
	}
	if killed.IsZero() {
		t.Fatal("the load never reported progress")
	}
	if took := time.Since(start); took > sc.Duration()/2 {
		t.Errorf("Run took %s of a %s time line after the Toxiproxy died; want it stopped at once", took, sc.Duration())
	}
	if !strings.Contains(progress.String(), "FAILED: toxiproxy at "+srv.URL) {
		t.Errorf("the progress did not say the configuration failed:\n%s", progress.String())
	}
	var m rundir.Manifest
	if err := rundir.ReadJSON(filepath.Join(res.Dir, sc.Configurations[0].Name, rundir.ManifestFile), &m); err != nil {
		t.Fatal(err)
	}
	if m.State != rundir.StateFailed || m.Valid || !m.Partial || !strings.Contains(strings.Join(m.Invalid, "; "), srv.URL) {
		t.Errorf("manifest: state %q valid %v partial %v invalid %q; want failed, invalid, partial, naming %s", m.State, m.Valid, m.Partial, m.Invalid, srv.URL)
	}
}
