package supervise

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ShimName is argv[0] of a shim process: what ps shows for it, and how Init recognises one.
const ShimName = "bulkhead-supervise"

// shimEnabled is set by Init in a program that can be its own shim.
var shimEnabled atomic.Bool

// deathSignal is what the kernel sends a shim when the runner dies (its Pdeathsig).
const deathSignal = syscall.SIGUSR1

// orphanPoll is how often a shim checks that the runner is still its parent, behind the death
// signal.
const orphanPoll = 250 * time.Millisecond

// shimReportTimeout bounds the wait for a started shim to say its child's pid.
const shimReportTimeout = 10 * time.Second

// Init makes this program its own shim (see the package documentation). Call it first thing in
// main, before anything else runs. In a process started as a shim it runs the shim and exits
// with its child's status, never returning; otherwise it returns at once, and from then on Start
// starts every child through a shim.
func Init() {
	if filepath.Base(os.Args[0]) == ShimName {
		os.Exit(runShim(os.Args[1:]))
	}
	shimEnabled.Store(true)
}

// launch starts cmd (its Path, Args, Dir, Env and stdio set by Start) in its own process group
// and returns the pid its signals go to: through a shim when Init was called, else directly with
// the death signal SIGKILL.
func launch(cmd *exec.Cmd) (int, error) {
	if !shimEnabled.Load() {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return 0, err
		}
		return cmd.Process.Pid, nil
	}
	if cmd.Err != nil { // exec.Command's lookup of the command in PATH
		return 0, cmd.Err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer r.Close()
	args := append([]string{ShimName, strconv.Itoa(os.Getpid()), cmd.Path, "--"}, cmd.Args...)
	cmd.Path, cmd.Args = "/proc/self/exe", args // this very binary, even if its file was replaced
	cmd.ExtraFiles = []*os.File{w}              // fd 3 in the shim: where it says the child's pid
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
	err = cmd.Start()
	w.Close()
	if err != nil {
		return 0, err
	}
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		got <- answer{strings.TrimSpace(line), err}
	}()
	var a answer
	select {
	case a = <-got:
	case <-time.After(shimReportTimeout):
		a.err = fmt.Errorf("the supervising shim did not report within %s", shimReportTimeout)
	}
	if pid, ok := strings.CutPrefix(a.line, "pid "); ok {
		if n, err := strconv.Atoi(pid); err == nil && n > 0 {
			return n, nil
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if why, ok := strings.CutPrefix(a.line, "error "); ok {
		return 0, errors.New(why)
	}
	if a.err == nil {
		a.err = fmt.Errorf("the supervising shim said %q", a.line)
	}
	return 0, fmt.Errorf("supervising shim: %w", a.err)
}

// runShim is the shim's main: args are the runner's pid, the child's path, "--" and its argv.
// It starts the child in its own process group, says "pid N" (or "error ...") on fd 3, and
// returns the exit code to leave with once the child and everything below the shim are gone.
func runShim(args []string) int {
	report := os.NewFile(3, "shim-report")
	syscall.CloseOnExec(3) // the child must not inherit it
	if len(args) < 4 || args[2] != "--" {
		fmt.Fprintf(os.Stderr, "%s: usage: %s <parent pid> <path> -- <argv...>\n", ShimName, ShimName)
		return 2
	}
	parent, err := strconv.Atoi(args[0])
	if err != nil || os.Getppid() != parent {
		return 1 // the runner is gone already: start nothing
	}
	path, argv := args[1], args[3:]
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, deathSignal, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	// Descendants that leave the child's process group come to the shim when their parent dies.
	_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
	child := &exec.Cmd{Path: path, Args: argv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	if err := child.Start(); err != nil {
		fmt.Fprintf(report, "error %v\n", err)
		return 127
	}
	pid := child.Process.Pid
	fmt.Fprintf(report, "pid %d\n", pid)
	report.Close()

	exited := make(chan struct{})
	go func() {
		_ = child.Wait()
		close(exited)
	}()
	poll := time.NewTicker(orphanPoll)
	defer poll.Stop()
	for {
		select {
		case <-exited:
			clearBelow(pid)
			return mirrorExit(child.ProcessState, argv[0])
		case sig := <-sigs:
			if sig != deathSignal { // someone signalled the shim itself: it is meant for the child
				_ = syscall.Kill(-pid, sig.(syscall.Signal))
				continue
			}
			if os.Getppid() != parent {
				killBelow(pid)
			}
			// Otherwise the runner's thread that started the shim ended, not the runner: stay.
		case <-poll.C:
			if os.Getppid() != parent {
				killBelow(pid)
			}
		}
	}
}

// killBelow sends SIGKILL to the child's process group and to every process below the shim.
func killBelow(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	for _, pid := range descendants(os.Getpid()) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// clearBelow, once the child has been reaped, kills whatever it left behind (its process group
// and every process below the shim) and reaps what comes to the shim, until nothing is left
// below it or a second has passed.
func clearBelow(pgid int) {
	deadline := time.Now().Add(time.Second)
	for {
		killBelow(pgid)
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if len(descendants(os.Getpid())) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// descendants lists the processes below pid (children, their children, ...), from /proc.
func descendants(root int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses; read after the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 2 {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(st)))
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children[p] {
			out = append(out, c)
			queue = append(queue, c)
		}
	}
	return out
}

// mirrorExit returns the exit code that repeats the child's ending to the runner: its status,
// or, killed by a signal the Go runtime lets a program die of, that same signal (the shim raises
// it on itself and does not return); for other signals (SIGSEGV, SIGQUIT, ...) it says so on
// stderr and returns 128+n, as a shell does.
func mirrorExit(st *os.ProcessState, name string) int {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return st.ExitCode()
	}
	sig := ws.Signal()
	switch sig {
	case syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1,
		syscall.SIGUSR2, syscall.SIGALRM:
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
		time.Sleep(time.Second) // the signal ends the shim meanwhile
	}
	fmt.Fprintf(os.Stderr, "%s: %s was killed by %s\n", ShimName, name, signalName(sig))
	return 128 + int(sig)
}
