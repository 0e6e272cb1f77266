package attack

// The sharded-load figure (issue 25), run by hand on a quiet machine under the load lock:
//
//	BULKHEAD_SHARDS_FIGURE=1  N shards (BULKHEAD_SHARDS, 2) as `attack --segment k/N` child
//	                          processes sending BULKHEAD_SHARDS_RATE (8000/s) between them, one
//	                          constant-rate attack against a trivial 200 server (a child on CPU
//	                          1, the shards on CPU 0, where taskset exists),
//	                          for BULKHEAD_SHARDS_DURATION (5s), BULKHEAD_SHARDS_RUNS (3) runs:
//	                          the merged sends' lag against the common schedule (p50, p99, max),
//	                          each shard's own lag p99, start skew and clock offset
//
//	flock /tmp/bulkhead-load.lock env BULKHEAD_SHARDS_FIGURE=1 go test -run FigureShards -v -count=1 ./attack

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
)

func envInt(t *testing.T, key string, def int) int {
	if v := os.Getenv(key); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		return n
	}
	return def
}

func TestFigureShards(t *testing.T) {
	testenv.Figure(t, "BULKHEAD_SHARDS_FIGURE", "sharded load's send lag and merge")
	shards := envInt(t, "BULKHEAD_SHARDS", 2)
	rate := envInt(t, "BULKHEAD_SHARDS_RATE", 8000)
	duration := 5 * time.Second
	if v := os.Getenv("BULKHEAD_SHARDS_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		duration = d
	}
	// The server in a process of its own on CPU 1 and the shards on CPU 0 (where taskset exists),
	// as the loadgen pacing figure places its load and server.
	var pin0 []string
	server := exec.Command(os.Args[0])
	if ts, err := exec.LookPath("taskset"); err == nil {
		server = exec.Command(ts, "-c", "1", os.Args[0])
		pin0 = []string{ts, "-c", "0"}
	}
	server.Env = append(os.Environ(), "BULKHEAD_FIGURE_SERVER=1")
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	srvURL := "http://" + strings.TrimSpace(addr)
	for run := range envInt(t, "BULKHEAD_SHARDS_RUNS", 3) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, rundir.RawDir), 0o755); err != nil {
			t.Fatal(err)
		}
		p, err := loadgen.NewConstantPacer(float64(rate))
		if err != nil {
			t.Fatal(err)
		}
		as, err := NewAttackSpec("/a", srvURL+"/a", p, filepath.Join(rundir.RawDir, "a.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		spec := Spec{Configuration: "figure", Duration: duration, Load: loadgen.Resolve(), Attacks: []AttackSpec{as}}
		s, err := StartShards(context.Background(), spec, shards, Options{Name: "figure", Argv: append(append([]string(nil), pin0...), os.Args[0], "attack"), Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		checks, err := s.Wait()
		if err != nil {
			t.Fatal(err)
		}
		c := checks[0]
		t.Logf("run %d: %d shards x %d/s for %v: merged sent %d of %d, lag against the common schedule p50 %v p99 %v max %v, valid %v %q",
			run+1, shards, rate/shards, duration, c.Sent, c.Scheduled, c.LagP50, c.LagP99, c.LagMax, c.Valid, c.Reasons)
		for _, r := range s.ShardRecords()[0] {
			t.Logf("  shard %s: own lag p50 %v p99 %v, start skew %v, clock offset %v ± %v, valid %v",
				r.Segment, r.LagP50, r.LagP99, r.StartSkew, r.ClockOffset, r.ClockUncertainty, r.Valid)
		}
	}
}

// figureServer answers every request 200 on a loopback port it prints, until killed.
func figureServer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
}
