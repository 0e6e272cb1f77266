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
			"configuration 1/2 shared · phase latency 29.0/48.0 s · run 0:29 of 2:10", 2},
		{"two at once: a summary line first",
			[]slotView{{index: 0, plan: shared, elapsed: 29 * time.Second, eps: endpoints(3)}, {index: 1, plan: split, elapsed: 3 * time.Second, eps: endpoints(3)}},
			"run 0:29 of 2:10 · 2 running, 0 of 2 configurations done", 5},
		{"500 endpoints still fit",
			[]slotView{{index: 1, plan: shared, elapsed: 70 * time.Second, eps: endpoints(500)}},
			"configuration 2/2 shared · phase end 48.0/48.0 s · run 0:29 of 2:10", 2},
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
	a, b := endpointLine(eps, 0), endpointLine(eps, 1)
	if !strings.HasPrefix(a, "  last 1 s: /partner-000") || !strings.HasPrefix(b, "  last 1 s: /partner-001") {
		t.Errorf("rotation: %q then %q", a, b)
	}
	if !strings.HasSuffix(a, "(+498)") && !strings.HasSuffix(a, "(+499)") {
		t.Errorf("no count of the endpoints left out: %q", a)
	}
	if got := endpointLine(endpoints(1), 7); strings.Contains(got, "(+") {
		t.Errorf("one endpoint, yet a count of more: %q", got)
	}
	if got := endpointLine(endpoints(2), 1); !strings.HasPrefix(got, "  last 1 s: /a") {
		t.Errorf("two endpoints that fit are rotated: %q", got)
	}
}

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
