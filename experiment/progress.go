package experiment

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// plainEvery is the default period of progress lines when they are printed as lines (not on a
// terminal), so that a log of a long run stays readable.
const plainEvery = 5 * time.Second

// progressWidth is the width every progress line fits in, whatever the number of endpoints.
const progressWidth = 80

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
	lr    load // nil until started
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
func (s *slot) start(lr load) {
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
}

func (b *board) render(now time.Time) []string {
	var running []slotView
	done := 0
	for _, s := range b.slots {
		switch {
		case s.ended:
			done++
		case s.lr != nil:
			running = append(running, slotView{index: s.index, plan: b.plans[s.index],
				elapsed: now.Sub(s.lr.T0()), eps: s.lr.Progress()})
		}
	}
	if len(running) == 0 {
		return nil
	}
	return progressLines(now.Sub(b.start), b.eta, len(b.plans), done, running, b.tick)
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
		out = append(out, fitWidth(head), endpointLine(v.eps, tick))
	}
	return out
}

// endpointLine is "  last 1 s: /a 50 done, 3% err, p99 450ms · /b ..." for every endpoint when
// they fit; otherwise as many as fit, starting at a rotating one, and "(+N)" for the ones left out.
func endpointLine(eps []loadgen.Progress, tick int) string {
	const head = "  last 1 s:"
	if len(eps) == 0 {
		return head + " -"
	}
	seg := func(p loadgen.Progress) string {
		return fmt.Sprintf(" %s %d done, %.0f%% err, p99 %s", p.Name, p.Window, 100*p.ErrorRate, millis(p.P99))
	}
	all := head
	for k, p := range eps {
		if k > 0 {
			all += " ·"
		}
		all += seg(p)
	}
	if len(all) <= progressWidth {
		return all // everything fits: no rotation
	}
	var parts []string
	width := len(head)
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
		if width+len(s)+len(more) > progressWidth && k > 0 {
			return head + strings.Join(parts, "") + fmt.Sprintf(" (+%d)", len(eps)-k)
		}
		parts = append(parts, s)
		width += len(s)
	}
	return fitWidth(head + strings.Join(parts, ""))
}

// fitWidth cuts s to progressWidth runes, marking the cut with "…".
func fitWidth(s string) string {
	r := []rune(s)
	if len(r) <= progressWidth {
		return s
	}
	return string(r[:progressWidth-1]) + "…"
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

// makespan estimates a run's wall time: the plans' time lines placed in order on parallel slots,
// each starting when a slot frees up.
func makespan(plans []*Plan, parallel int) time.Duration {
	free := make([]time.Duration, max(parallel, 1))
	var end time.Duration
	for _, p := range plans {
		k := 0
		for i := range free {
			if free[i] < free[k] {
				k = i
			}
		}
		free[k] += p.Duration
		end = max(end, free[k])
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
