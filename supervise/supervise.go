package supervise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// DefaultGrace is how long Stop waits after SIGTERM before SIGKILL.
const DefaultGrace = 5 * time.Second

// DefaultReadyTimeout bounds the readiness check when Spec.ReadyTimeout is 0.
const DefaultReadyTimeout = 30 * time.Second

// tailBytes is how much of stderr an error quotes.
const tailBytes = 2048

// Spec is one child process to start.
type Spec struct {
	// Name names the child in errors, e.g. "configuration shared: target".
	Name string
	// Argv is the command and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Env is added to the runner's environment ("KEY=value"); later entries win.
	Env []string
	// Dir is the working directory; "" means the runner's.
	Dir string
	// Stdout and Stderr are the files the child's output goes to; "" discards it.
	Stdout, Stderr string
	// StdoutTo, when set, also receives the child's stdout as it comes (after the Stdout file),
	// from one goroutine; the last write happens before Exited is closed. A child that talks to
	// the runner over stdout (the load generator's events) is read through it.
	StdoutTo io.Writer
	// Ready is polled with GET until it answers 2xx; "" means ready once started.
	Ready string
	// ReadyTimeout bounds the wait for Ready; 0 means DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Grace is the time between SIGTERM and SIGKILL on Stop; 0 means DefaultGrace.
	Grace time.Duration
}

// Process is a started child.
type Process struct {
	spec Spec
	cmd  *exec.Cmd // the process this one started: the shim, or the child itself
	// pid is the child's process id (and its process group's): the one signals go to.
	pid    int
	files  []*os.File
	done   chan struct{} // closed when the child (and its shim) has exited
	err    error         // the child's exit error, set before done closes
	stderr *tail
	once   sync.Once
}

// ExitError says a child exited (or never became ready); it names the command and the address
// it was checked at, and quotes the tail of its stderr.
type ExitError struct {
	Name   string
	Argv   []string
	Ready  string
	Reason string // "exited with status 1 before it was ready", "not ready after 30s", ...
	Stderr string // the last bytes of its stderr
}

func (e *ExitError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %q", e.Name, strings.Join(e.Argv, " "))
	if e.Ready != "" {
		fmt.Fprintf(&b, " (ready check %s)", e.Ready)
	}
	b.WriteString(": " + e.Reason)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		b.WriteString("; its stderr ends:\n" + s)
	}
	return b.String()
}

// Start starts the child described by s and waits until it is ready: until s.Ready answers 2xx
// (polled every 50 ms, each GET bounded), the child exits, ReadyTimeout passes, or ctx ends. It
// returns the running Process, or an *ExitError (or a start error naming the command) with the
// child stopped and its files closed.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if len(s.Argv) == 0 {
		return nil, fmt.Errorf("%s: empty command", s.Name)
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	p := &Process{spec: s, done: make(chan struct{}), stderr: &tail{max: tailBytes}}
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), s.Env...)
	// A process that outlives the child holding its output open must not keep Wait (and so Err
	// and Exited) from seeing the child's end.
	cmd.WaitDelay = time.Second
	out, err := openOut(s.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	errf, err := openOut(s.Stderr)
	if err != nil {
		closeAll(out)
		return nil, fmt.Errorf("%s: %w", s.Name, err)
	}
	p.files = []*os.File{out, errf}
	cmd.Stdout = writerOf(out)
	if s.StdoutTo != nil {
		cmd.Stdout = io.MultiWriter(writerOf(out), s.StdoutTo)
	}
	cmd.Stderr = io.MultiWriter(writerOf(errf), p.stderr)
	pid, err := launch(cmd)
	if err != nil {
		closeAll(p.files...)
		return nil, fmt.Errorf("%s: start %q: %w", s.Name, strings.Join(s.Argv, " "), err)
	}
	p.cmd, p.pid = cmd, pid
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := p.waitReady(ctx); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

func (p *Process) waitReady(ctx context.Context) error {
	if p.spec.Ready == "" {
		return nil
	}
	deadline := time.NewTimer(p.spec.ReadyTimeout)
	defer deadline.Stop()
	client := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last string
	for {
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		req, err := http.NewRequestWithContext(rctx, http.MethodGet, p.spec.Ready, nil)
		if err != nil {
			cancel()
			return p.exitError("ready address does not parse: " + err.Error())
		}
		resp, err := client.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
			last = fmt.Sprintf("last answer status %d", resp.StatusCode)
		} else {
			last = "last try: " + err.Error()
		}
		select {
		case <-p.done:
			return p.exitError(exitReason(p.err) + " before it was ready")
		case <-deadline.C:
			return p.exitError(fmt.Sprintf("not ready after %s (%s)", p.spec.ReadyTimeout, last))
		case <-ctx.Done():
			return p.exitError("stopped before it was ready: " + context.Cause(ctx).Error())
		case <-tick.C:
		}
	}
}

func exitReason(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by " + signalName(ws.Signal())
		}
		return fmt.Sprintf("exited with status %d", ee.ExitCode())
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		return "exited with status 0, leaving a process that held its output open"
	}
	if err != nil {
		return "exited: " + err.Error()
	}
	return "exited with status 0"
}

func (p *Process) exitError(reason string) *ExitError {
	return &ExitError{Name: p.spec.Name, Argv: p.spec.Argv, Ready: p.spec.Ready, Reason: reason, Stderr: p.stderr.String()}
}

// Pid returns the child's process id, which is also its process group's id. Under the shim it
// is the child's own, not the shim's.
func (p *Process) Pid() int { return p.pid }

// Exited returns a channel closed when the child has exited.
func (p *Process) Exited() <-chan struct{} { return p.done }

// Err returns an *ExitError if the child has exited on its own (without Stop), else nil. It does
// not block.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.exitError(exitReason(p.err) + " while running")
	default:
		return nil
	}
}

// Terminate sends SIGTERM to the child's process group and returns at once, without waiting or
// closing anything: a child that stops cleanly on SIGTERM (the load generator drains and writes
// its checks) is then waited for with Wait, and Stop still ends it for good.
func (p *Process) Terminate() { signalGroup(p.pid, syscall.SIGTERM) }

// Kill sends SIGKILL to the child's process group at once and returns without waiting: for a
// child that no longer answers (a watchdog's verdict), where SIGTERM and a grace period would
// only add the wait. Exited and Wait then report the end; Stop still closes the files.
func (p *Process) Kill() { signalGroup(p.pid, syscall.SIGKILL) }

// Wait blocks until the child has exited or ctx is done. It returns nil when the child exited
// with status 0, an *ExitError saying how it ended otherwise (status, signal, stderr tail), and
// ctx's error when ctx ended first (the child keeps running). It closes nothing: call Stop after.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	var ee *exec.ExitError
	if p.err == nil || (errors.As(p.err, &ee) && ee.Success()) || errors.Is(p.err, exec.ErrWaitDelay) {
		return nil
	}
	return p.exitError(exitReason(p.err))
}

// Stop sends SIGTERM to the child's process group, waits up to the grace period for it to exit,
// then sends SIGKILL to the group and waits for the exit. It closes the output files and is safe
// to call more than once (later calls wait for the first). It returns nil when the child ended
// on SIGTERM or exited 0 on it, the *ExitError when it had already exited on its own, and an
// error saying it had to be killed otherwise.
func (p *Process) Stop() error {
	var err error
	p.once.Do(func() {
		err = p.Err()
		if err == nil {
			signalGroup(p.pid, syscall.SIGTERM)
			t := time.NewTimer(p.spec.Grace)
			select {
			case <-p.done:
				t.Stop()
			case <-t.C:
				signalGroup(p.pid, syscall.SIGKILL)
				p.awaitExit()
				err = p.exitError(fmt.Sprintf("did not stop within %s of SIGTERM; killed", p.spec.Grace))
			}
		}
		// Whatever else is left in the group (grandchildren) goes too.
		signalGroup(p.pid, syscall.SIGKILL)
		closeAll(p.files...)
	})
	return err
}

// shimExitWait is how long awaitExit gives a shim to follow its killed child out.
const shimExitWait = 2 * time.Second

// awaitExit blocks until the process this one started has exited, after its child was sent
// SIGKILL: a shim follows its child within milliseconds; one that does not (stopped, say) is
// killed itself after shimExitWait.
func (p *Process) awaitExit() {
	t := time.NewTimer(shimExitWait)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func signalGroup(pid int, sig syscall.Signal) {
	_ = syscall.Kill(-pid, sig) // the group may be gone already
}

func openOut(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
}

func writerOf(f *os.File) io.Writer {
	if f == nil {
		return io.Discard
	}
	return f
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf bytes.Buffer
	max int
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(b)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}
