package attack

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// The test binary plays `bulkhead attack`: started as "<test binary> attack <spec>", it serves
// the spec as the real command does.
func TestMain(m *testing.M) {
	if os.Getenv("BULKHEAD_FIGURE_SERVER") == "1" {
		figureServer() // the figure's trivial server, in a process of its own
		return
	}
	supervise.Init() // children start through the shim, as bulkhead's do
	if len(os.Args) == 3 && os.Args[1] == "attack" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := Serve(ctx, os.Args[2], os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "bulkhead:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ok answers every request 200 with the built-in outcome header.
func ok(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(outcome.HeaderOutcome, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// testSpec is two attacks on srv, constant and Poisson, for d, results in raw/.
func testSpec(t *testing.T, srv *httptest.Server, d time.Duration) Spec {
	t.Helper()
	c, err := loadgen.NewConstantPacer(100)
	if err != nil {
		t.Fatal(err)
	}
	p, err := loadgen.NewPoissonPacer(50, 7)
	if err != nil {
		t.Fatal(err)
	}
	s := Spec{Configuration: "shared-r1", Duration: d, Load: loadgen.Resolve(loadgen.WithTimeout(2*time.Second), loadgen.WithLagLimit(50*time.Millisecond)),
		ProgressEvery: 50 * time.Millisecond}
	for _, a := range []struct {
		name  string
		pacer loadgen.Pacer
	}{{"/a", loadgen.Shifted{Pacer: c, Lead: 3 * time.Millisecond}}, {"/b", p}} {
		as, err := NewAttackSpec(a.name, srv.URL+a.name, a.pacer, filepath.Join(rundir.RawDir, rundir.RawFileName(a.name)))
		if err != nil {
			t.Fatal(err)
		}
		s.Attacks = append(s.Attacks, as)
	}
	return s
}

// folder is a configuration folder with its raw/ subfolder.
func folder(t *testing.T) string {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, rundir.RawDir), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func start(t *testing.T, s Spec, dir string) *Process {
	t.Helper()
	p, err := Start(context.Background(), s, Options{Name: "configuration shared-r1: load generator", Argv: []string{os.Args[0], "attack"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.proc.Stop() })
	return p
}

// readRaw returns the raw file's results in order.
func readRaw(t *testing.T, path string) []*vegeta.Result {
	t.Helper()
	var out []*vegeta.Result
	if err := rundir.ReadRaw(path, func(r *vegeta.Result) error { c := *r; out = append(out, &c); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// The child sends every scheduled hit, writes each result to its raw file with the scheduled
// offset of the runner's pacer, and reports the checks the runner would have computed.
func TestProcessRunsTheLoad(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, 700*time.Millisecond)
	p := start(t, spec, dir)
	if p.T0().IsZero() || time.Since(p.T0()) > time.Minute {
		t.Fatalf("T0 = %v; want the child's start", p.T0())
	}
	checks, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 2 {
		t.Fatalf("%d checks; want 2", len(checks))
	}
	for i, c := range checks {
		a := spec.Attacks[i]
		pacer, _ := a.Pacer.Pacer()
		if c.Name != a.Name || c.Scheduled != pacer.Hits(spec.Duration) || c.Sent != c.Scheduled || c.Dropped != 0 {
			t.Errorf("%s: check %+v; want all %d scheduled hits sent", a.Name, c, pacer.Hits(spec.Duration))
		}
		res := readRaw(t, filepath.Join(dir, a.RawFile))
		if uint64(len(res)) != c.Sent {
			t.Errorf("%s: %d results in the raw file; the check says %d sent", a.Name, len(res), c.Sent)
		}
		for _, r := range res {
			want := strconv.FormatInt(int64(pacer.Scheduled(r.Seq)), 10)
			if got := r.Headers.Get(outcome.HeaderScheduled); got != want {
				t.Fatalf("%s seq %d: scheduled %s; want %s", a.Name, r.Seq, got, want)
			}
			if got := r.Headers.Get(outcome.HeaderClass); got != "ok" {
				t.Fatalf("%s seq %d: class %q; want ok", a.Name, r.Seq, got)
			}
		}
	}
	if pooled := p.Pooled(); pooled.Name != "all" || pooled.Sent != checks[0].Sent+checks[1].Sent {
		t.Errorf("pooled %+v; want the sum of both", pooled)
	}
	// A Go program's resident set is megabytes; the child reports its own, in bytes.
	if rss := p.PeakRSS(); runtime.GOOS == "linux" && (rss < 1<<20 || rss > 1<<30) {
		t.Errorf("PeakRSS = %d bytes; want the child's peak resident set, 1 MiB to 1 GiB", rss)
	}
	for _, f := range []string{SpecFile, StdoutFile, StderrFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	back, err := ReadSpec(filepath.Join(dir, SpecFile))
	if err != nil {
		t.Fatal(err)
	}
	if back.Duration != spec.Duration || !slices.EqualFunc(back.Attacks, spec.Attacks, func(a, b AttackSpec) bool {
		return a.Name == b.Name && a.URL == b.URL && a.Pacer.Kind == b.Pacer.Kind && a.Pacer.Lead == b.Pacer.Lead && a.RawFile == b.RawFile
	}) {
		t.Errorf("spec file reads back as %+v; want %+v", back, spec)
	}
}

// Stop is the first Ctrl-C: the child stops sending, writes every result and still sends its
// checks, marked stopped.
func TestProcessStop(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, time.Minute)
	p := start(t, spec, dir)
	waitProgress(p, func(g loadgen.Progress) bool { return g.Sent >= 10 })
	p.Stop()
	checks, err := p.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range checks {
		if !c.Stopped || c.Sent == 0 || c.Scheduled >= 6000 {
			t.Errorf("%s: %+v; want a check of a stopped attack", c.Name, c)
		}
		if n := len(readRaw(t, filepath.Join(dir, spec.Attacks[i].RawFile))); uint64(n) != c.Sent {
			t.Errorf("%s: %d results written; the check says %d sent", c.Name, n, c.Sent)
		}
	}
}

// A child killed mid-run gives an error naming the configuration, the command, how it ended and
// the tail of its stderr; the results it wrote stay readable.
func TestProcessKilled(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, time.Minute)
	p := start(t, spec, dir)
	waitProgress(p, func(g loadgen.Progress) bool { return g.Done >= 20 })
	if err := syscall.Kill(p.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	checks, err := p.Wait()
	if checks != nil || err == nil {
		t.Fatalf("Wait = %v, %v; want no checks and an error", checks, err)
	}
	if rss := p.PeakRSS(); rss != 0 {
		t.Errorf("PeakRSS = %d of a child that never sent its checks; want 0 (not known)", rss)
	}
	for _, want := range []string{"configuration shared-r1: load generator", " attack ", SpecFile, "killed", "bulkhead attack: configuration shared-r1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	for _, a := range spec.Attacks {
		readRaw(t, filepath.Join(dir, a.RawFile)) // fails the test on a cut-off line
	}
}

// A child that stops sending events (frozen by SIGSTOP here; a deadlock or a starved CPU alike)
// is killed by the watchdog once it has been quiet for the limit: Wait returns at once, without
// checks, with ErrStalled saying how long it was quiet, and the results it wrote stay readable.
// ProgressAge meanwhile shows its last progress growing old.
func TestProcessStalled(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, time.Minute)
	p, err := Start(context.Background(), spec, Options{Name: "configuration shared-r1: load generator",
		Argv: []string{os.Args[0], "attack"}, Dir: dir, StallAfter: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.proc.Stop() })
	waitProgress(p, func(g loadgen.Progress) bool { return g.Done >= 20 })
	if age := p.ProgressAge(); age > 300*time.Millisecond {
		t.Errorf("ProgressAge = %s while the child reports every %s", age, spec.ProgressEvery)
	}
	if err := syscall.Kill(p.Pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	checks, err := p.Wait()
	if checks != nil || !errors.Is(err, ErrStalled) {
		t.Fatalf("Wait = %v, %v; want no checks and ErrStalled", checks, err)
	}
	for _, want := range []string{"configuration shared-r1: load generator", "stopped reporting: no event for", "the limit 400ms", "killed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if age := p.ProgressAge(); age < 400*time.Millisecond {
		t.Errorf("ProgressAge = %s after the watchdog fired; want at least its limit", age)
	}
	for _, a := range spec.Attacks {
		readRaw(t, filepath.Join(dir, a.RawFile)) // fails the test on a cut-off line
	}
}

// The watchdog's limit is the one asked for, DefaultStallAfter by default, and never under three
// progress periods (a child reporting every second is not frozen after two).
func TestStallAfter(t *testing.T) {
	for _, c := range []struct {
		every, asked, want time.Duration
	}{
		{time.Second, 0, DefaultStallAfter},
		{time.Second, 10 * time.Second, 10 * time.Second},
		{time.Second, time.Second, 3 * time.Second},
		{0, 0, DefaultStallAfter}, // DefaultProgressEvery
	} {
		if got := stallAfter(Spec{ProgressEvery: c.every}, c.asked); got != c.want {
			t.Errorf("progress every %s, asked %s: limit %s, want %s", c.every, c.asked, got, c.want)
		}
	}
}

// A child that cannot start its load (here: a raw file already exists) exits before its started
// event; Start says why, quoting its stderr.
func TestProcessStartFails(t *testing.T) {
	srv := ok(t)
	dir := folder(t)
	spec := testSpec(t, srv, time.Second)
	if err := os.WriteFile(filepath.Join(dir, spec.Attacks[1].RawFile), []byte("earlier results\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Start(context.Background(), spec, Options{Name: "configuration shared-r1: load generator", Argv: []string{os.Args[0], "attack"}, Dir: dir})
	var ee interface{ Error() string }
	if err == nil {
		t.Fatal("Start succeeded over an existing raw file")
	}
	ee = err
	for _, want := range []string{"configuration shared-r1: load generator", "exited with status 1 before it started the load", "file exists"} {
		if !strings.Contains(ee.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, spec.Attacks[1].RawFile)); string(b) != "earlier results\n" {
		t.Errorf("the earlier file was changed: %q", b)
	}
}

// A bad spec is refused before anything starts, naming the field.
func TestSpecValidate(t *testing.T) {
	good := func() Spec {
		return Spec{Duration: time.Second, Attacks: []AttackSpec{{Name: "/a", URL: "http://127.0.0.1:1/a", RawFile: "raw/a.json",
			Pacer: loadgen.PacerSpec{Kind: loadgen.PacerConstant, Freq: 1, Per: time.Second}}}}
	}
	tests := []struct {
		name   string
		change func(*Spec)
		want   string // "" means valid
	}{
		{"valid", func(*Spec) {}, ""},
		{"no duration", func(s *Spec) { s.Duration = 0 }, "duration_ns"},
		{"no attacks", func(s *Spec) { s.Attacks = nil }, "attacks: none"},
		{"relative URL", func(s *Spec) { s.Attacks[0].URL = "/a" }, "attacks[0].url"},
		{"no raw file", func(s *Spec) { s.Attacks[0].RawFile = "" }, "attacks[0].raw_file"},
		{"bad pacer", func(s *Spec) { s.Attacks[0].Pacer.Kind = "burst" }, "attacks[0].pacer: kind"},
		{"bad outcome mapping", func(s *Spec) { s.Outcomes = &outcome.Mapping{Statuses: map[int]string{503: "nonsense"}} }, "outcomes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good()
			tt.change(&s)
			err := s.Validate()
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Errorf("Validate() = %v; want %q", err, tt.want)
			}
		})
	}
	_, err := ReadSpec(filepath.Join(t.TempDir(), "missing.json"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadSpec(missing) = %v; want not exist", err)
	}
}

// lineWriter hands over whole lines, however the writes cut them.
func TestLineWriter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one line per write", []string{"a\n", "b\n"}, []string{"a", "b"}},
		{"a line across writes", []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}},
		{"several lines in one write", []string{"a\nb\n\nc\n"}, []string{"a", "b", "c"}},
		{"no newline yet", []string{"abc"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			w := &lineWriter{line: func(b []byte) { got = append(got, string(b)) }}
			for _, s := range tt.writes {
				w.Write([]byte(s))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines %q; want %q", got, tt.want)
			}
		})
	}
}

// trimPartialLine keeps every whole line and drops a cut-off last one.
func TestTrimPartialLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a\nb\n", "a\nb\n"},
		{"a\nb\n{\"cut", "a\nb\n"},
		{"{\"cut", ""},
		{strings.Repeat("x", 70<<10) + "\n" + strings.Repeat("y", 70<<10), strings.Repeat("x", 70<<10) + "\n"},
	}
	for i, tt := range tests {
		p := filepath.Join(t.TempDir(), fmt.Sprint(i))
		os.WriteFile(p, []byte(tt.in), 0o644)
		if err := trimPartialLine(p); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != tt.want {
			t.Errorf("case %d: %d bytes left; want %d", i, len(b), len(tt.want))
		}
	}
}

// waitProgress polls the first attack's progress until done says so, for at most 30 s (the
// assertions that follow tell whether it got there).
func waitProgress(p *Process, done func(loadgen.Progress) bool) {
	deadline := time.Now().Add(30 * time.Second)
	for !done(p.Progress()[0]) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
}
