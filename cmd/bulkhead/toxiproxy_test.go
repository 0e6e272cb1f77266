package main

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/faults/proxy/proxytest"
)

// `toxiproxy clean` removes the proxies of dead bulkhead processes, says which, and leaves a
// live one's and a stranger's; a second clean finds nothing.
func TestToxiproxyClean(t *testing.T) {
	api := proxytest.NewAPIServer(t)
	ctx := context.Background()
	x, err := proxy.NewExternal(ctx, api)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close(ctx)
	dead := proxy.OwnedName(9_999_999, "20260101T000000Z-smoke", "shared", "A") // above pid_max
	live := proxy.OwnedName(1, "20260101T000000Z-smoke", "shared", "A")         // init is alive
	for _, n := range []string{dead, live, "someone-else"} {
		if _, err := x.AddProxy(ctx, n, "127.0.0.1:1"); err != nil {
			t.Fatal(err)
		}
	}
	out, err := executeCommand(t, "toxiproxy", "clean", "--toxiproxy", api)
	if err != nil {
		t.Fatalf("clean: %v\n%s", err, out)
	}
	if !strings.Contains(out, "removed "+dead+" (pid 9999999 is not running)") || !strings.Contains(out, "removed 1 stale") {
		t.Errorf("clean said:\n%s", out)
	}
	left, err := x.Proxies(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(left, ",") != live+",someone-else" {
		t.Errorf("left %v, want the live owner's and the stranger's", left)
	}
	out, err = executeCommand(t, "toxiproxy", "clean", "--toxiproxy", api)
	if err != nil || !strings.Contains(out, "no stale bulkhead proxies") {
		t.Errorf("second clean: %v\n%s", err, out)
	}
	if _, err := executeCommand(t, "toxiproxy", "clean", "--toxiproxy", "http://127.0.0.1:1"); err == nil || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("unreachable toxiproxy: err = %v", err)
	}
}

// `toxiproxy serve` on an address already taken says which flag and address, and returns
// instead of exiting the process (toxiproxy-server's own Listen would os.Exit).
func TestToxiproxyServeTakenAddress(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = executeCommand(t, "toxiproxy", "serve", "--listen", l.Addr().String())
	if err == nil || !strings.Contains(err.Error(), "--listen") || !strings.Contains(err.Error(), l.Addr().String()) {
		t.Fatalf("err = %v, want --listen and %s named", err, l.Addr())
	}
}
