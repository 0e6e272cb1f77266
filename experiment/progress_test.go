package experiment

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

func endpoints(n int) []loadgen.Progress {
	eps := make([]loadgen.Progress, n)
	for i := range eps {
		eps[i] = loadgen.Progress{Name: fmt.Sprintf("/partner-%03d", i), Window: 50, ErrorRate: 0.03, P99: 450 * time.Millisecond}
	}
	if n <= 3 {
		for i := range eps {
			eps[i].Name = "/" + string(rune('a'+i))
		}
	}
	return eps
}

func hypPlan(t *testing.T, folder string) *Plan {
	sc := open(t, "hypothesis")
	p, err := NewPlan(sc, sc.Configurations[0], 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	p.Folder = folder
	return p
}

// Progress lines name the configuration, its phase and place on its time line and the whole
// run's time, label the per-second figures, and fit 80 columns however many endpoints.
func TestProgressLines(t *testing.T) {
	shared, split := hypPlan(t, "shared"), hypPlan(t, "split-r2")
	tests := []struct {
		name    string
		running []slotView
		first   string // the first line
		lines   int
	}{
		{"one configuration running: one line for it and one for its endpoints",
			[]slotView{{index: 0, plan: shared, elapsed: 29 * time.Second, eps: endpoints(2)}},
			"configuration 1/2 shared · phase latency 29.0/70.0 s · run 0:29 of 2:10", 2},
		{"two at once: a summary line first",
			[]slotView{{index: 0, plan: shared, elapsed: 29 * time.Second, eps: endpoints(3)}, {index: 1, plan: split, elapsed: 3 * time.Second, eps: endpoints(3)}},
			"run 0:29 of 2:10 · 2 running, 0 of 2 configurations done", 5},
		{"500 endpoints still fit",
			[]slotView{{index: 1, plan: shared, elapsed: 70 * time.Second, eps: endpoints(500)}},
			"configuration 2/2 shared · phase end 70.0/70.0 s · run 0:29 of 2:10", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := progressLines(29*time.Second, 130*time.Second, 2, 0, tt.running, 0)
			if len(lines) != tt.lines || lines[0] != tt.first {
				t.Errorf("got %d lines, first %q; want %d, %q", len(lines), lines[0], tt.lines, tt.first)
			}
			for _, l := range lines {
				if n := utf8.RuneCountInString(l); n > progressWidth {
					t.Errorf("%d columns: %q", n, l)
				}
			}
			if !strings.HasPrefix(lines[1], "  last 1 s:") && !strings.HasPrefix(lines[1], "configuration") {
				t.Errorf("endpoint figures not labelled with their window: %q", lines[1])
			}
		})
	}
}

// Endpoints that do not fit are rotated through: the next tick starts with the next one, and the
// count of those left out is shown.
func TestEndpointLineRotates(t *testing.T) {
	eps := endpoints(500)
	a, b := endpointLine(eps, 0, 0), endpointLine(eps, 1, 0)
	if !strings.HasPrefix(a, "  last 1 s: /partner-000") || !strings.HasPrefix(b, "  last 1 s: /partner-001") {
		t.Errorf("rotation: %q then %q", a, b)
	}
	if !strings.HasSuffix(a, "(+498)") && !strings.HasSuffix(a, "(+499)") {
		t.Errorf("no count of the endpoints left out: %q", a)
	}
	if got := endpointLine(endpoints(1), 7, 0); strings.Contains(got, "(+") {
		t.Errorf("one endpoint, yet a count of more: %q", got)
	}
	if got := endpointLine(endpoints(2), 1, 0); !strings.HasPrefix(got, "  last 1 s: /a") {
		t.Errorf("two endpoints that fit are rotated: %q", got)
	}
}

// A load generator that stopped reporting has its last figures labelled stale, with their age,
// instead of passing them off as the last second's; within 80 columns still.
func TestEndpointLineStale(t *testing.T) {
	got := endpointLine(endpoints(2), 0, 4200*time.Millisecond)
	if !strings.HasPrefix(got, "  STALE, no report for 4.2 s: /a 50/s") || strings.Contains(got, "last 1 s") {
		t.Errorf("stale figures shown as %q", got)
	}
	if got := endpointLine(endpoints(500), 0, time.Minute); utf8.RuneCountInString(got) > progressWidth || !strings.HasPrefix(got, "  STALE") {
		t.Errorf("stale, 500 endpoints: %q", got)
	}
	shared := hypPlan(t, "shared")
	lines := progressLines(time.Minute, time.Minute, 1, 0, []slotView{{plan: shared, elapsed: 30 * time.Second, eps: endpoints(2), stale: 3 * time.Second}}, 0)
	if len(lines) != 2 || !strings.HasPrefix(lines[1], "  STALE, no report for 3.0 s:") {
		t.Errorf("progress of a stale configuration: %q", lines)
	}
}

// The board asks a load that reports from elsewhere how old its figures are: fresh ones are the
// last second's, old ones stale.
func TestBoardMarksStaleLoad(t *testing.T) {
	shared := hypPlan(t, "shared")
	for _, c := range []struct {
		age  time.Duration
		want string
	}{{time.Second, "  last 1 s:"}, {staleAfter, "  STALE, no report for 2.5 s:"}} {
		b := &board{plans: []*Plan{shared}, start: time.Now(), live: true}
		b.slots = []*slot{{b: b, lr: agedLoad{age: c.age, t0: time.Now()}}}
		lines := b.render(time.Now())
		if len(lines) != 2 || !strings.HasPrefix(lines[1], c.want) {
			t.Errorf("age %s: %q, want the endpoint line to start %q", c.age, lines, c.want)
		}
	}
}

// agedLoad is a fake load whose progress is age old.
type agedLoad struct {
	age time.Duration
	t0  time.Time
}

func (a agedLoad) T0() time.Time                  { return a.t0 }
func (a agedLoad) Progress() []loadgen.Progress   { return endpoints(2) }
func (a agedLoad) Stop()                          {}
func (a agedLoad) Wait() ([]loadgen.Check, error) { return nil, nil }
func (a agedLoad) Pooled() loadgen.Check          { return loadgen.Check{} }
func (a agedLoad) ProgressAge() time.Duration     { return a.age }

// Off a terminal the board prints plain lines, never cursor movements.
func TestBoardPlainLines(t *testing.T) {
	var buf bytes.Buffer
	b := &board{w: &buf}
	b.draw([]string{"x", "y"})
	b.draw([]string{"z"})
	b.clear()
	if got := buf.String(); got != "x\ny\nz\n" {
		t.Errorf("plain output %q", got)
	}
	buf.Reset()
	b = &board{w: &buf, live: true}
	b.draw([]string{"x", "y"})
	b.draw([]string{"z"})
	if got := buf.String(); got != "x\ny\n\r\033[2A\033[Jz\n" {
		t.Errorf("live output %q", got)
	}
}

// A configuration's closing lines give each attack's self-check, and the machine's steal time
// only when the hypervisor took a notable share of the CPU.
func TestCheckLinesNameNotableStealOnly(t *testing.T) {
	checks := func(steal float64) []loadgen.Check {
		return []loadgen.Check{
			{Name: "/a", Sent: 10, Scheduled: 10, LagP99: 1500 * time.Microsecond, Steal: steal},
			{Name: "/b", Sent: 9, Scheduled: 10, Dropped: 1, Steal: steal},
		}
	}
	quiet := checkLines("shared", checks(0.002))
	want := []string{
		"  shared /a: sent 10 of 10 scheduled, dropped 0, send lag p99 1.5ms",
		"  shared /b: sent 9 of 10 scheduled, dropped 1, send lag p99 0s",
	}
	if strings.Join(quiet, "\n") != strings.Join(want, "\n") {
		t.Errorf("quiet machine:\n%s\nwant\n%s", strings.Join(quiet, "\n"), strings.Join(want, "\n"))
	}
	if unknown := checkLines("shared", checks(-1)); len(unknown) != 2 {
		t.Errorf("steal not accounted: %q; want the two checks alone", unknown)
	}
	starved := checkLines("shared", checks(0.087))
	if len(starved) != 3 || starved[2] != "  shared: the hypervisor took 8.7% of a CPU's time during the load (steal time)" {
		t.Errorf("starved machine: %q; want the checks, then the steal", starved)
	}
}

// Off a terminal the progress is one line per running configuration, with the run's time, the
// phase and place on the time line and each endpoint's last second as a rate.
func TestPlainLines(t *testing.T) {
	shared, split := hypPlan(t, "shared"), hypPlan(t, "split-r2")
	lines := plainLines(29*time.Second, 130*time.Second, 4, []slotView{
		{index: 0, plan: shared, elapsed: 29 * time.Second, eps: endpoints(2)},
		{index: 3, plan: split, elapsed: 3 * time.Second, eps: endpoints(500), stale: 3 * time.Second}}, 0)
	want := "0:29 of 2:10 · configuration 1/4 shared · phase latency 29.0/70.0 s · last 1 s: /a 50/s, 3% err, p99 450ms · /b 50/s, 3% err, p99 450ms"
	if len(lines) != 2 || lines[0] != want {
		t.Fatalf("lines %q, want two, the first %q", lines, want)
	}
	if l := lines[1]; !strings.HasPrefix(l, "0:29 of 2:10 · configuration 4/4 split-r2 · phase baseline 3.0/70.0 s · STALE, no report for 3.0 s: /partner-000") ||
		utf8.RuneCountInString(l) > plainWidth || !strings.Contains(l, "(+") {
		t.Errorf("500 endpoints, stale: %q", l)
	}
}

// A board off a terminal prints a line per configuration every plainEvery by default.
func TestPlainBoardPeriod(t *testing.T) {
	b := newBoard(nil, 1, Options{})
	b.close()
	if b.every != 10*time.Second || plainEvery != 10*time.Second {
		t.Errorf("plain period %v, want 10 s", b.every)
	}
}
