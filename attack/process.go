package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/supervise"
)

// DefaultStartTimeout bounds the wait for the child's started event.
const DefaultStartTimeout = 30 * time.Second

// DefaultStallAfter is how long a started child may go without sending an event (progress comes
// every Spec.ProgressEvery, a second in a run) before the runner holds it frozen: stopped,
// deadlocked or starved of CPU. The watchdog then kills it and Wait fails with ErrStalled.
const DefaultStallAfter = 5 * time.Second

// ErrStalled is wrapped by Wait's error when the watchdog killed a child that stopped sending
// events.
var ErrStalled = errors.New("stopped reporting")

// Options says how the runner starts the child.
type Options struct {
	// Name names the child in errors, e.g. "configuration shared-r1: load generator".
	Name string
	// Argv is the command up to the spec file, e.g. [os.Executable(), "attack"]; the spec file's
	// path is appended.
	Argv []string
	// Env is added to the child's environment.
	Env []string
	// Dir is the configuration's folder: the spec, the logs and (by the spec's relative paths)
	// the raw files go there. None of the spec's Files may exist yet.
	Dir string
	// StartTimeout bounds the wait for the started event; 0 means DefaultStartTimeout.
	StartTimeout time.Duration
	// StallAfter is how long the started child may send no event before the watchdog kills it;
	// 0 means DefaultStallAfter. It is at least three progress periods of the spec.
	StallAfter time.Duration
}

// Process is a load generator running as a child process, seen from the runner. Its methods are
// those of *loadgen.Run that the runner uses, and are safe for concurrent use.
type Process struct {
	spec  Spec
	dir   string
	argv  []string
	proc  *supervise.Process
	t0    time.Time
	names []string

	mu         sync.Mutex
	clock      *ClockOffset // from the started event
	slack      time.Duration
	progress   []loadgen.Progress
	progressAt time.Time // when the latest progress event came (the started event's, before one)
	lastEvent  time.Time // when the latest event of any kind came
	stalled    error     // set by the watchdog when it killed the child
	done       *Event
	badLines   []string // stdout lines that were not events
	stallAfter time.Duration

	started chan struct{} // closed at the started event

	waitOnce sync.Once
	checks   []loadgen.Check
	pooled   loadgen.Check
	peakRSS  int64
	err      error
}

// Start writes spec into o.Dir, starts the child `o.Argv... <spec file>` through supervise (its
// own process group, killed if the runner dies; stdout and stderr logged into o.Dir) and waits
// for its started event. It returns the running Process, or an error naming o.Name and the
// command (with the tail of its stderr when the child exited before it started); the child is
// then stopped. When ctx is done before the child started, the child is stopped and ctx's error
// returned (wrapped).
func Start(ctx context.Context, spec Spec, o Options) (*Process, error) {
	p, err := launch(ctx, spec, o)
	if err != nil {
		return nil, err
	}
	if err := p.awaitStarted(ctx, o); err != nil {
		return nil, err
	}
	return p, nil
}

// launch writes the spec and starts the child without waiting for its started event.
func launch(ctx context.Context, spec Spec, o Options) (*Process, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%s: attack spec: %w", o.Name, err)
	}
	specName, stdoutName, stderrName := Files(spec.Segment)
	specFile := filepath.Join(o.Dir, specName)
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeNew(specFile, append(b, '\n')); err != nil {
		return nil, fmt.Errorf("%s: %w", o.Name, err)
	}
	p := &Process{spec: spec, dir: o.Dir, argv: append(append([]string(nil), o.Argv...), specFile), started: make(chan struct{}),
		stallAfter: stallAfter(spec, o.StallAfter)}
	for _, a := range spec.Attacks {
		p.names = append(p.names, a.Name)
	}
	lines := &lineWriter{line: p.event}
	p.proc, err = supervise.Start(ctx, supervise.Spec{
		Name: o.Name, Argv: p.argv, Env: o.Env,
		Stdout: filepath.Join(o.Dir, stdoutName), Stderr: filepath.Join(o.Dir, stderrName),
		StdoutTo: lines,
		// Stop's grace: a stopped load drains its requests in flight, bounded by the timeout.
		Grace: spec.Load.Timeout + 5*time.Second,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// awaitStarted waits for the child's started event, bounded by o.StartTimeout; on failure the
// child is stopped and the error says why.
func (p *Process) awaitStarted(ctx context.Context, o Options) error {
	timeout := o.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	var why error
	select {
	case <-p.started:
		go p.watch()
		return nil
	case <-p.proc.Exited():
		why = p.proc.Wait(context.Background())
		var ee *supervise.ExitError
		if errors.As(why, &ee) {
			ee.Reason += " before it started the load"
		}
		if why == nil {
			why = fmt.Errorf("%s: %q exited before it started the load", o.Name, strings.Join(p.argv, " "))
		}
	case <-t.C:
		why = fmt.Errorf("%s: %q did not start the load within %v", o.Name, strings.Join(p.argv, " "), timeout)
	case <-ctx.Done():
		why = fmt.Errorf("%s: stopped before the load started: %w", o.Name, context.Cause(ctx))
	}
	p.proc.Stop()
	return why
}

// stallAfter is the watchdog's limit for spec: o (DefaultStallAfter when 0), and never less than
// three of the spec's progress periods.
func stallAfter(spec Spec, o time.Duration) time.Duration {
	if o <= 0 {
		o = DefaultStallAfter
	}
	every := spec.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	return max(o, 3*every)
}

// watch is the watchdog of a started child: it checks, a tenth of the limit apart, when the
// child's last event came, and once that is longer ago than the limit it records why in
// p.stalled and kills the child (its whole process group), so that Wait returns at once. It
// returns when the child has exited.
func (p *Process) watch() {
	tick := time.NewTicker(max(p.stallAfter/10, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.proc.Exited():
			return
		case now := <-tick.C:
			p.mu.Lock()
			quiet := now.Sub(p.lastEvent)
			if quiet > p.stallAfter {
				p.stalled = fmt.Errorf("%s (pid %d): %w: no event for %s (the last %.1f s into its time line, the limit %s); killed",
					p.procName(), p.Pid(), ErrStalled, quiet.Round(100*time.Millisecond), p.lastEvent.Sub(p.t0).Seconds(), p.stallAfter)
			}
			stalled := p.stalled != nil
			p.mu.Unlock()
			if stalled {
				p.proc.Kill()
				return
			}
		}
	}
}

func writeNew(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// event handles one stdout line of the child.
func (p *Process) event(line []byte) {
	var e Event
	if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
		p.mu.Lock()
		if len(p.badLines) < 5 {
			p.badLines = append(p.badLines, string(line))
		}
		p.mu.Unlock()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.lastEvent = now
	switch e.Type {
	case EventStarted:
		if p.t0.IsZero() {
			p.t0, p.clock, p.slack, p.progressAt = e.T0, e.Clock, e.Slack, now
			close(p.started)
		}
	case EventProgress:
		p.progress, p.progressAt = e.Progress, now
	case EventDone:
		p.done = &e
	}
}

// T0 returns the time line's zero as the child took it (wall clock).
func (p *Process) T0() time.Time { return p.t0 }

// Slack returns how long before the spec's common T0 the child was ready to send, as its
// started event said (Event.Slack).
func (p *Process) Slack() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.slack
}

// Clock returns the child's clock offset from its spec's clock reference, as its started event
// said; nil when it had none or could not measure it.
func (p *Process) Clock() *ClockOffset {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clock
}

// Pid returns the child's process id.
func (p *Process) Pid() int { return p.proc.Pid() }

// Argv returns the child's command line.
func (p *Process) Argv() []string { return append([]string(nil), p.argv...) }

// Progress returns the child's latest progress event (zero counts per attack before the first).
// It does not block.
func (p *Process) Progress() []loadgen.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.progress != nil {
		return append([]loadgen.Progress(nil), p.progress...)
	}
	out := make([]loadgen.Progress, len(p.names))
	for i, n := range p.names {
		out[i] = loadgen.Progress{Name: n}
	}
	return out
}

// ProgressAge returns how long ago the child's latest progress event came (the started event,
// before the first): the age of what Progress returns. Events come every Spec.ProgressEvery; an
// age of several periods means the child has stopped reporting. It does not block.
func (p *Process) ProgressAge() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.progressAt.IsZero() {
		return 0
	}
	return time.Since(p.progressAt)
}

// Stop asks the child to stop sending (SIGTERM to its group): it drains, writes its results and
// sends its checks. It does not block and may be called more than once.
func (p *Process) Stop() { p.proc.Terminate() }

// Wait blocks until the child has exited, then returns its checks, as loadgen.Run.Wait does, and
// the error of results that could not be written. If the child ended without its checks (it
// crashed or was killed), the checks are nil and the error names the child, its command, how it
// ended and the tail of its stderr; what it wrote before stays in the raw files. A child that
// sent no event for the watchdog's limit (Options.StallAfter) was killed by it: the error wraps
// ErrStalled and says how long it had been quiet. A child still
// running well past its time line (duration, StopGrace, the timeout and a minute more) is
// stopped and then killed. Calling Wait again returns the same.
func (p *Process) Wait() ([]loadgen.Check, error) {
	p.waitOnce.Do(func() {
		bound := time.Until(p.t0.Add(p.spec.Duration + loadgen.StopGrace + p.spec.Load.Timeout + time.Minute))
		ctx, cancel := context.WithTimeout(context.Background(), max(bound, time.Minute))
		exitErr := p.proc.Wait(ctx)
		cancel()
		if errors.Is(exitErr, context.DeadlineExceeded) {
			stopErr := p.proc.Stop()
			exitErr = fmt.Errorf("still running %v after its time line ended: %w", p.spec.Load.Timeout+time.Minute, stopErr)
		} else {
			p.proc.Stop() // closes the log files; the child has exited
		}
		p.mu.Lock()
		done, bad, stalled := p.done, p.badLines, p.stalled
		p.mu.Unlock()
		if done == nil {
			why := exitErr
			if stalled != nil {
				why = stalled // what killed it, rather than the SIGKILL it died of
			}
			if why == nil {
				why = fmt.Errorf("%s: %q exited without sending its checks", p.procName(), strings.Join(p.argv, " "))
			}
			if len(bad) > 0 {
				why = fmt.Errorf("%w (its stdout had lines that are not events: %q)", why, bad)
			}
			p.err = fmt.Errorf("load generator ended without its checks: %w", why)
			// What it wrote stays; a result cut off mid-line by the crash is dropped so that the
			// file reads (vegeta, the report) up to the last whole result.
			if terr := p.trimRaw(); terr != nil {
				p.err = errors.Join(p.err, terr)
			}
			return
		}
		p.checks, p.peakRSS = done.Checks, done.PeakRSS
		if done.Pooled != nil {
			p.pooled = *done.Pooled
		}
		if done.Error != "" {
			p.err = errors.New(done.Error)
		}
	})
	return p.checks, p.err
}

// PeakRSS returns the child's peak resident set size in bytes, from its done event; 0 when the
// child ended without its checks or the system does not say. Call it after Wait returned.
func (p *Process) PeakRSS() int64 { return p.peakRSS }

// trimRaw cuts every raw file after its last complete line.
func (p *Process) trimRaw() error {
	var errs []error
	for _, a := range p.spec.Attacks {
		if err := trimPartialLine(p.spec.rawPath(p.dir, a)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// trimPartialLine truncates the file at path after its last newline (to empty when it has none).
func trimPartialLine(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			if keep := start + int64(i) + 1; keep < size {
				return f.Truncate(keep)
			}
			return nil
		}
		end = start
	}
	if size > 0 {
		return f.Truncate(0)
	}
	return nil
}

func (p *Process) procName() string {
	if p.spec.Configuration != "" {
		return "configuration " + p.spec.Configuration + ": load generator"
	}
	return "load generator"
}

// Pooled returns the child's pooled check (loadgen.Run.Pooled). Call it after Wait; it is the
// zero Check (invalid) when the child sent none.
func (p *Process) Pooled() loadgen.Check {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done == nil || p.done.Pooled == nil {
		return loadgen.Check{Name: "all", Reasons: []string{"the load generator sent no checks"}}
	}
	return *p.done.Pooled
}

// lineWriter calls line with every complete line written to it (without the newline). Writes
// come from one goroutine (exec's copier).
type lineWriter struct {
	buf  []byte
	line func([]byte)
}

func (w *lineWriter) Write(b []byte) (int, error) {
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if i > 0 {
			w.line(w.buf[:i])
		}
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) == 0 {
		w.buf = nil // do not keep the backing array of a long run
	}
	return len(b), nil
}
