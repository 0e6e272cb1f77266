package experiment

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// plainEvery is the default period of progress lines when they are printed as lines (not on a
// terminal), so that a log of a long run stays readable: one line per running configuration
// every 10 s.
const plainEvery = 10 * time.Second

// plainWidth is the width a plain progress line fits in (a log, not an 80-column screen).
const plainWidth = 160

// progressWidth is the width every progress line fits in, whatever the number of endpoints.
const progressWidth = 80

// staleAfter is the age from which a load's latest progress is shown as stale: a load generator
// child reports every half second (so that the figures follow a fault switch within about a
// second), so its figures are then at least four reports old.
const staleAfter = 2500 * time.Millisecond

// aging is a load whose progress is a report that can grow old (a load generator child's latest
// progress event); a load in this process reads its figures live.
type aging interface {
	// ProgressAge is how long ago the figures Progress returns were reported.
	ProgressAge() time.Duration
}

// board prints the progress of a run's configuration runs: a line for the whole run and, for
// each running configuration, its place on its time line and its endpoints over the last
// second. On a terminal (live) it redraws the block in place; otherwise it prints the block as
// plain lines every period. A board with no writer prints nothing.
type board struct {
	w     io.Writer
	live  bool
	every time.Duration

	mu     sync.Mutex
	plans  []*Plan
	slots  []*slot
	start  time.Time
	eta    time.Duration
	drawn  int // lines of the live block on screen
	tick   int
	stopCh chan struct{}
	done   chan struct{}
}

// slot is one configuration run's place on the board.
type slot struct {
	b     *board
	index int
	lr    Load // nil until started
	ended bool
}

func newBoard(plans []*Plan, parallel int, opts Options) *board {
	b := &board{w: opts.Progress, live: opts.Live, every: opts.ProgressEvery, plans: plans,
		start: time.Now(), eta: makespan(plans, parallel), stopCh: make(chan struct{}), done: make(chan struct{})}
	if b.every <= 0 {
		b.every = time.Second
		if !b.live {
			b.every = plainEvery
		}
	}
	for i := range plans {
		b.slots = append(b.slots, &slot{b: b, index: i})
	}
	if b.w == nil {
		close(b.done)
		return b
	}
	go b.loop()
	return b
}

func (b *board) slot(i int) *slot { return b.slots[i] }

func (b *board) loop() {
	defer close(b.done)
	t := time.NewTicker(b.every)
	defer t.Stop()
	for {
		select {
		case <-b.stopCh:
			return
		case <-t.C:
			b.mu.Lock()
			b.draw(b.render(time.Now()))
			b.tick++
			b.mu.Unlock()
		}
	}
}

// close stops the board and leaves the cursor below the last block.
func (b *board) close() {
	if b.w == nil {
		return
	}
	close(b.stopCh)
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	b.clear()
}

// start marks the slot's load started.
func (s *slot) start(lr Load) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.lr = lr
}

// end marks the slot ended and prints its closing lines above the live block.
func (s *slot) end(lines []string) {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	s.ended = true
	if b.w == nil {
		return
	}
	b.clear()
	for _, l := range lines {
		fmt.Fprintln(b.w, l)
	}
}

// note prints lines above the live block without ending the slot.
func (s *slot) note(lines []string) {
	b := s.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w == nil {
		return
	}
	b.clear()
	for _, l := range lines {
		fmt.Fprintln(b.w, l)
	}
}

// clear removes the live block from the screen (the cursor ends where it began).
func (b *board) clear() {
	if !b.live || b.drawn == 0 {
		return
	}
	fmt.Fprintf(b.w, "\r\033[%dA\033[J", b.drawn)
	b.drawn = 0
}

func (b *board) draw(lines []string) {
	if len(lines) == 0 {
		return
	}
	b.clear()
	for _, l := range lines {
		fmt.Fprintln(b.w, l)
	}
	if b.live {
		b.drawn = len(lines)
	}
}

// slotView is what a progress line shows of one running configuration.
type slotView struct {
	index   int
	plan    *Plan
	elapsed time.Duration // on its time line
	eps     []loadgen.Progress
	stale   time.Duration // the age of eps when it is staleAfter or more, else 0
}

func (b *board) render(now time.Time) []string {
	var running []slotView
	done := 0
	for _, s := range b.slots {
		switch {
		case s.ended:
			done++
		case s.lr != nil:
			v := slotView{index: s.index, plan: b.plans[s.index], elapsed: now.Sub(s.lr.T0()), eps: s.lr.Progress()}
			if a, ok := s.lr.(aging); ok && a.ProgressAge() >= staleAfter {
				v.stale = a.ProgressAge()
			}
			running = append(running, v)
		}
	}
	if len(running) == 0 {
		return nil
	}
	if !b.live {
		return plainLines(now.Sub(b.start), b.eta, len(b.plans), running, b.tick)
	}
	return progressLines(now.Sub(b.start), b.eta, len(b.plans), done, running, b.tick)
}

// plainLines renders the progress for a log: one line per running configuration, with the run's
// time, the configuration, its phase and place on its time line, and its endpoints' last second,
// within plainWidth columns.
func plainLines(elapsed, eta time.Duration, total int, running []slotView, tick int) []string {
	var out []string
	for _, v := range running {
		head := fmt.Sprintf("%s of %s · configuration %d/%d %s · phase %s %s/%s s · ", clock(elapsed), clock(max(eta, elapsed)),
			v.index+1, total, v.plan.Folder, phaseAt(v.plan, v.elapsed), seconds(min(v.elapsed, v.plan.Duration)), seconds(v.plan.Duration))
		out = append(out, head+endpointFigures(v.eps, tick, v.stale, plainWidth-utf8.RuneCountInString(head)))
	}
	return out
}

// progressLines renders the progress block: with one configuration running, its line names the
// configuration, its phase and time line position and the whole run's time; with several, a
// summary line comes first and each running configuration gets its own line. Every
// configuration line is followed by its endpoints' last second. Every line fits in
// progressWidth columns: endpoints that do not fit are rotated through, tick by tick.
func progressLines(elapsed, eta time.Duration, total, done int, running []slotView, tick int) []string {
	runPart := fmt.Sprintf("run %s of %s", clock(elapsed), clock(max(eta, elapsed)))
	var out []string
	if len(running) != 1 {
		out = append(out, fitWidth(fmt.Sprintf("%s · %d running, %d of %d configurations done", runPart, len(running), done, total)))
	}
	for _, v := range running {
		phase := phaseAt(v.plan, v.elapsed)
		tl := fmt.Sprintf("phase %s %s/%s s", phase, seconds(min(v.elapsed, v.plan.Duration)), seconds(v.plan.Duration))
		head := fmt.Sprintf("configuration %d/%d %s · %s", v.index+1, total, v.plan.Folder, tl)
		if len(running) == 1 {
			head += " · " + runPart
		}
		out = append(out, fitWidth(head), endpointLine(v.eps, tick, v.stale))
	}
	return out
}

// endpointLine is "  last 1 s: /a 50/s, 3% err, p99 450ms · /b ..." (see endpointFigures)
// within progressWidth columns.
func endpointLine(eps []loadgen.Progress, tick int, stale time.Duration) string {
	return "  " + endpointFigures(eps, tick, stale, progressWidth-2)
}

// endpointFigures is "last 1 s: /a 50/s, 3% err, p99 450ms · /b ...": each endpoint's
// completions in the last complete second (its rate at steady state), their error share and p99,
// for every endpoint when they fit in width columns; otherwise as many as fit, starting at a
// rotating one, and "(+N)" for the ones left out. Figures reported stale ago (> 0) are labelled
// "STALE, no report for 4.2 s:" instead: they are the load generator's last, not the last
// second's.
func endpointFigures(eps []loadgen.Progress, tick int, stale time.Duration, width int) string {
	head := "last 1 s:"
	if stale > 0 {
		head = fmt.Sprintf("STALE, no report for %s s:", seconds(stale))
	}
	if len(eps) == 0 {
		return head + " -"
	}
	seg := func(p loadgen.Progress) string {
		return fmt.Sprintf(" %s %d/s, %.0f%% err, p99 %s", p.Name, p.Window, 100*p.ErrorRate, millis(p.P99))
	}
	all := head
	for k, p := range eps {
		if k > 0 {
			all += " ·"
		}
		all += seg(p)
	}
	if len(all) <= width {
		return all // everything fits: no rotation
	}
	var parts []string
	used := len(head)
	first := tick % len(eps)
	for k := range eps {
		s := seg(eps[(first+k)%len(eps)])
		if k > 0 {
			s = " ·" + s
		}
		more := fmt.Sprintf(" (+%d)", len(eps)-k-1)
		if k == len(eps)-1 {
			more = ""
		}
		if used+len(s)+len(more) > width && k > 0 {
			return head + strings.Join(parts, "") + fmt.Sprintf(" (+%d)", len(eps)-k)
		}
		parts = append(parts, s)
		used += len(s)
	}
	return fitTo(head+strings.Join(parts, ""), width)
}

// fitWidth cuts s to progressWidth runes, marking the cut with "…".
func fitWidth(s string) string { return fitTo(s, progressWidth) }

// fitTo cuts s to width runes, marking the cut with "…".
func fitTo(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	return string(r[:max(width-1, 0)]) + "…"
}

// phaseAt names the phase of p's time line at elapsed ("done" after the last).
func phaseAt(p *Plan, elapsed time.Duration) string {
	for _, ph := range p.Manifest.Phases {
		if elapsed >= ph.Start && elapsed < ph.End {
			return ph.Name
		}
	}
	return "end"
}

// makespan estimates a run's wall time as executeAll spends it: the plans in batches of
// parallel, each batch as long as its longest time line.
func makespan(plans []*Plan, parallel int) time.Duration {
	n := max(parallel, 1)
	var end time.Duration
	for start := 0; start < len(plans); start += n {
		var longest time.Duration
		for _, p := range plans[start:min(start+n, len(plans))] {
			longest = max(longest, p.Duration)
		}
		end += longest
	}
	return end
}

// clock formats d as m:ss (h:mm:ss from an hour).
func clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// seconds formats d in seconds with one decimal, the precision a scaled time line needs.
func seconds(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }

func millis(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0fms", float64(d)/float64(time.Millisecond))
}
