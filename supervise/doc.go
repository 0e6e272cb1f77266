// Package supervise runs child processes for the runner: the system under test of a `command:`
// target (`bulkhead serve` among them) and the load generator (`bulkhead attack`). A child is
// started with its own argv, environment and working directory, its stdout and stderr written to
// files (in the run folder), waited for until a readiness URL answers 2xx, and stopped with
// SIGTERM to its whole process group, then SIGKILL after a grace period.
//
// # Nothing left behind when the runner dies
//
// A runner killed by SIGKILL (or by the OOM killer, which sends SIGKILL) runs no code: whatever
// must end its children has to outlive it. On Linux, in a program that called Init first thing
// in main (bulkhead does), every child is started through a small shim, the same executable
// re-executed (/proc/self/exe with argv[0] "bulkhead-supervise"):
//
//	runner ── shim (own process group; death signal SIGUSR1 when the runner dies)
//	            └─ child (its own process group, which its forks inherit; death signal SIGKILL)
//	                 └─ grandchildren ...
//
// The shim is a child subreaper (PR_SET_CHILD_SUBREAPER), so a descendant that leaves the
// child's process group (setsid, a daemonizing fork) is reparented to the shim instead of init
// when its parent exits. When the runner dies the kernel sends the shim SIGUSR1; the shim checks
// that its parent really is gone (the signal is tied to the runner's thread, and Go may end
// threads: a parent that is still there is ignored), polls the same every 250 ms as a backstop,
// then sends SIGKILL to the child's process group and to every process below itself, reaps them
// and exits. When the child exits on its own, the shim does the same to whatever the child left
// behind, then exits with the child's status (the same signal for the ones Go lets it die of,
// 128+n with a line on stderr for the rest), so the runner sees the child's own ending. The shim
// tells the runner the child's pid over a pipe; the runner signals the child's process group
// directly (SIGTERM, then SIGKILL) and never depends on the shim to stop a child.
//
// Judged against the alternatives: the runner as a subreaper with every child in its own group
// dies with the runner, leaving nobody to kill the groups; the child's own death signal
// (Pdeathsig) reaches the child only, not its forks; a cgroup per child (killed as a whole)
// needs root or a delegated cgroup v2 hierarchy; a PID namespace needs privileges and makes the
// child PID 1, which ignores SIGTERM without a handler. The shim needs nothing but the binary.
//
// A program that does not call Init (a test binary, another embedder) starts children directly:
// each in its own process group with the death signal SIGKILL, which ends the child but not the
// processes it forked. Elsewhere than Linux children are started directly, without a death signal.
package supervise
