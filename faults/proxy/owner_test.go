package proxy

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

func TestOwnerPID(t *testing.T) {
	tests := []struct {
		name string
		pid  int
		ok   bool
	}{
		{OwnedName(4242, "20261130T090000Z-hypothesis", "shared", "A"), 4242, true},
		{OwnedName(7, "run-with-dashes", "conf-r2", "dep-x"), 7, true},
		{"bulkhead-", 0, false},
		{"bulkhead-12", 0, false}, // no part after the pid
		{ownedNameOn("0badc0de", 99, "run", "shared", "A"), 99, true},
		{"bulkhead-4242-run-shared-A", 4242, true}, // an earlier version's name: no host tag
		{"bulkhead-4242.xyz-run", 0, false},        // not a host tag
		{"bulkhead-4242.-run", 0, false},
		{"bulkhead-shared-A-4242", 0, false}, // the old layout: pid last
		{"bulkhead-012-x", 0, false},         // not as OwnedName writes it
		{"bulkhead--5-x", 0, false},
		{"someone-else", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pid, ok := OwnerPID(tt.name)
			if pid != tt.pid || ok != tt.ok {
				t.Errorf("OwnerPID(%q) = %d, %v; want %d, %v", tt.name, pid, ok, tt.pid, tt.ok)
			}
		})
	}
}

// CleanStale removes the proxies (and their toxics) of dead owners only: a live owner's, this
// process's and a stranger's stay.
func TestCleanStale(t *testing.T) {
	t.Run("in-process API", func(t *testing.T) { cleanStaleSuite(t, newAPIServer(t)) })
	t.Run("toxiproxy-server", func(t *testing.T) {
		testenv.Long(t, "builds and starts a toxiproxy-server process")
		cleanStaleSuite(t, startToxiproxyServer(t, toxiproxyServerBinary(t)))
	})
}

func cleanStaleSuite(t *testing.T, apiURL string) {
	ctx := context.Background()
	x, err := NewExternal(ctx, apiURL)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(ctx)
	const dead, live = 900001, 900002
	names := map[string]string{
		"dead":  OwnedName(dead, "run", "shared", "A"),
		"dead2": OwnedName(dead, "run", "shared", "B"),
		"live":  OwnedName(live, "run", "shared", "A"),
		"self":  OwnedName(os.Getpid(), "run", "shared", "A"),
		// Another host's runner with a process id that is dead here: not ours to judge.
		"elsewhere": ownedNameOn(otherHost(), dead, "run", "shared", "A"),
		// An earlier version's name, without a host tag: taken as this host's.
		"untagged": "bulkhead-900001-run-shared-C",
		"stranger": "someone-else",
	}
	for _, n := range names {
		if _, err := x.AddProxy(ctx, n, "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
	}
	f := faults.New("A", &faults.Latency{Latency: 50 * time.Millisecond})
	if err := x.Apply(ctx, names["dead"], f.Effect()); err != nil {
		t.Fatal(err)
	}
	removed, err := x.CleanStale(ctx, func(pid int) bool { return pid == live })
	if err != nil {
		t.Fatal(err)
	}
	want := []Stale{{names["dead"], dead}, {names["dead2"], dead}, {names["untagged"], dead}}
	slices.SortFunc(want, func(a, b Stale) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(removed, want) {
		t.Errorf("removed %v, want %v", removed, want)
	}
	left, err := x.Proxies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantLeft := []string{names["elsewhere"], names["live"], names["self"], names["stranger"]}
	slices.Sort(wantLeft)
	if !slices.Equal(left, wantLeft) {
		t.Errorf("left %v, want %v", left, wantLeft)
	}
	// Nothing stale is left: a second clean removes nothing.
	if again, err := x.CleanStale(ctx, func(pid int) bool { return pid == live }); err != nil || len(again) != 0 {
		t.Errorf("second clean removed %v, %v", again, err)
	}
	for _, n := range []string{names["elsewhere"], names["live"], names["stranger"]} {
		if err := x.Remove(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
}

// otherHost is a host tag that is not this host's.
func otherHost() string {
	if HostTag() == "0badc0de" {
		return "0badf00d"
	}
	return "0badc0de"
}

// toxiproxyServerBinary builds toxiproxy-server from the Toxiproxy module go.mod pins (the same
// code the embedded injector links) into a temporary folder and returns its path, so the
// external injector is tested against the release it declares. go build reads the module cache,
// where the module is whenever this package builds.
func toxiproxyServerBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "toxiproxy-server")
	out, err := exec.Command("go", "build", "-o", bin, toxiproxyModule+"/cmd/server").CombinedOutput()
	if err != nil {
		t.Fatalf("go build toxiproxy-server: %v\n%s", err, out)
	}
	return bin
}
