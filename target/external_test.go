package target_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
	"github.com/bulkheadlab/bulkhead/target"
)

// The test binary plays a user's service when TARGET_CHILD is set: it listens on --port, answers
// /healthz, serves Resilience4j-named /metrics (unless TARGET_NO_METRICS), echoes --dep on /dep,
// and /quit makes it exit 3. --host sets the address it binds (default 127.0.0.1).
func TestMain(m *testing.M) {
	if os.Getenv("TARGET_CHILD") == "" {
		os.Exit(m.Run())
	}
	var port, dep, host = "", "", "127.0.0.1"
	for i, a := range os.Args {
		switch a {
		case "--host":
			host = os.Args[i+1]
		case "--port":
			port = os.Args[i+1]
		case "--dep":
			dep = os.Args[i+1]
		}
	}
	if os.Getenv("TARGET_CHILD") == "exit" {
		fmt.Fprintln(os.Stderr, "cannot bind: port", port)
		os.Exit(1)
	}
	fmt.Println("serving on", port)
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(http.ResponseWriter, *http.Request) {})
	mux.HandleFunc("/dep", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, dep+" "+os.Getenv("DEP_ENV")) })
	mux.HandleFunc("/quit", func(http.ResponseWriter, *http.Request) { os.Exit(3) })
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) {
		if os.Getenv("TARGET_NO_METRICS") != "" {
			fmt.Fprint(w, "not { prometheus")
			return
		}
		fmt.Fprint(w, "resilience4j_bulkhead_available_concurrent_calls{name=\"shared\"} 3\nresilience4j_bulkhead_max_allowed_concurrent_calls{name=\"shared\"} 4\n")
	})
	fmt.Fprintln(os.Stderr, http.ListenAndServe(net.JoinHostPort(host, port), mux))
	os.Exit(2)
}

// commandSpec is the spec of a command target running this test binary as child, with args,
// the common keys of c and DEP_ENV set to {dep.A}.
func commandSpec(t *testing.T, child string, args []string, c target.Config) target.Spec {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c.Kind = target.Command{}.Name()
	c.Params = &target.CommandParams{
		Command: append([]string{exe}, args...),
		Env:     map[string]string{"TARGET_CHILD": child, "DEP_ENV": "{dep.A}"},
	}
	return target.Spec{
		Name:         "shared",
		Config:       &c,
		Dependencies: map[string]string{"A": "http://127.0.0.1:21001"},
		Folder:       t.TempDir(),
	}
}

// start starts spec's target through its registered kind, as the runner does.
func start(ctx context.Context, t *testing.T, spec target.Spec) (target.Target, error) {
	t.Helper()
	k, err := target.Of(spec.Config)
	if err != nil {
		t.Fatal(err)
	}
	return k.Start(ctx, spec)
}

func get(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A command target is started with its placeholders filled, is ready when its ready URL answers,
// reports the resources its metrics page declares, logs into the run folder and stops on Close.
func TestCommandTarget(t *testing.T) {
	spec := commandSpec(t, "serve", []string{"--port", "{port}", "--dep", "http://{dep.A}"}, target.Config{
		Ready: "http://127.0.0.1:{port}/healthz", Metrics: "http://127.0.0.1:{port}/metrics",
	})
	tg, err := start(context.Background(), t, spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, tg.URL()+"/dep"); got != "http://127.0.0.1:21001 127.0.0.1:21001" {
		t.Errorf("the child was told %q, want the dependency's address in its argument and env", got)
	}
	rs := tg.Resources()
	if len(rs) != 1 || rs[0].Name != "pool:shared" || rs[0].InUse != 1 || rs[0].Capacity != 4 {
		t.Errorf("resources %+v, want pool:shared 1 of 4", rs)
	}
	if p := tg.(target.Checker).Problems(); len(p) != 0 {
		t.Errorf("problems %v, want none", p)
	}
	if err := tg.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(tg.URL() + "/healthz"); err == nil {
		t.Error("still serving after Close")
	}
	out, _ := os.ReadFile(filepath.Join(spec.Folder, target.StdoutFile))
	if !strings.Contains(string(out), "serving on") {
		t.Errorf("%s = %q, want the child's stdout", target.StdoutFile, out)
	}
}

// A command target whose service listens elsewhere than 127.0.0.1 (another host or network
// namespace, here 127.0.0.2) is reached at its url: readiness, metrics and the load's base URL
// all use that address; without url the runner waits on 127.0.0.1:{port} and says so.
func TestCommandTargetElsewhere(t *testing.T) {
	if l, err := net.Listen("tcp", "127.0.0.2:0"); err != nil {
		testenv.SkipOrFail(t, "127.0.0.2 cannot be bound here (%v): the loopback is not a /8", err)
	} else {
		l.Close()
	}
	cases := []struct {
		name    string
		url     string
		wantErr string // "" means it starts, reached at 127.0.0.2
	}{
		{"url names the host", "http://127.0.0.2:{port}/", ""},
		{"no url: 127.0.0.1 is waited for", "", "nothing listens on 127.0.0.1:"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spec := commandSpec(t, "serve", []string{"--host", "127.0.0.2", "--port", "{port}", "--dep", "http://{dep.A}"}, target.Config{
				URL: c.url, Metrics: "http://127.0.0.2:{port}/metrics",
			})
			ctx := context.Background()
			if c.wantErr != "" { // the service never listens where it is waited for: stop waiting sooner
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Second)
				defer cancel()
			}
			tg, err := start(ctx, t, spec)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "configuration shared: target") {
					t.Fatalf("err = %v, want it to name the configuration and say %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close(context.Background())
			if !strings.HasPrefix(tg.URL(), "http://127.0.0.2:") || strings.HasSuffix(tg.URL(), "/") {
				t.Errorf("URL() = %q, want http://127.0.0.2:PORT", tg.URL())
			}
			if got := get(t, tg.URL()+"/dep"); !strings.HasPrefix(got, "http://127.0.0.1:21001") {
				t.Errorf("/dep at the target's URL = %q", got)
			}
			if rs := tg.Resources(); len(rs) != 1 || rs[0].Name != "pool:shared" {
				t.Errorf("resources scraped from 127.0.0.2: %+v", rs)
			}
		})
	}
}

// What goes wrong with a command target is an error naming the configuration and the address,
// or, while it runs, a problem the manifest records; nothing is left running.
func TestCommandTargetFailures(t *testing.T) {
	t.Run("exits before ready", func(t *testing.T) {
		spec := commandSpec(t, "exit", []string{"--port", "{port}"}, target.Config{Ready: "http://127.0.0.1:{port}/healthz"})
		_, err := target.Command{}.Start(context.Background(), spec)
		for _, w := range []string{"configuration shared: target", "exited with status 1 before it was ready", "/healthz", "cannot bind"} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("err = %v, want it to say %q", err, w)
			}
		}
	})
	t.Run("metrics garbage, then the command exits", func(t *testing.T) {
		spec := commandSpec(t, "serve", []string{"--port", "{port}"}, target.Config{
			Ready: "http://127.0.0.1:{port}/healthz", Metrics: "http://127.0.0.1:{port}/metrics"})
		spec.Config.Params.(*target.CommandParams).Env["TARGET_NO_METRICS"] = "1"
		tg, err := target.Command{}.Start(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close(context.Background())
		if rs := tg.Resources(); rs != nil {
			t.Errorf("resources from garbage: %v", rs)
		}
		http.Get(tg.URL() + "/quit") //nolint:errcheck // the child exits mid-answer
		<-tg.(*target.External).Exited()
		probs := strings.Join(tg.(target.Checker).Problems(), "\n")
		for _, w := range []string{"1 scrape(s) of http://127.0.0.1:", "/metrics failed", "exited with status 3 while running"} {
			if !strings.Contains(probs, w) {
				t.Errorf("problems %q, want %q", probs, w)
			}
		}
		if err := tg.Close(context.Background()); err != nil {
			t.Errorf("Close after the child exited = %v, want nil (Problems reports it)", err)
		}
	})
}

// A URL target is checked to answer; one that does not is an error naming the address.
func TestURLTarget(t *testing.T) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(404) })}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l) //nolint:errcheck // closed below
	defer srv.Close()
	spec := target.Spec{Name: "ext", Config: &target.Config{Kind: "url", URL: "http://" + l.Addr().String() + "/"}}
	tg, err := start(context.Background(), t, spec)
	if err != nil {
		t.Fatal(err)
	}
	if tg.URL() != "http://"+l.Addr().String() || tg.Resources() != nil {
		t.Errorf("URL %q resources %v", tg.URL(), tg.Resources())
	}
	tg.Close(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	dead := target.Spec{Name: "ext", Config: &target.Config{Kind: "url", URL: "http://127.0.0.1:1"}}
	_, err = target.URL{}.Start(ctx, dead)
	if err == nil || !strings.Contains(err.Error(), "configuration ext: target: http://127.0.0.1:1/ does not answer") {
		t.Errorf("err = %v, want one naming the configuration and the address", err)
	}
}
