package supervise

import "syscall"

// sysProcAttr puts the child in its own process group (so Stop reaches its children too) and
// has the kernel kill it when the runner's thread dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
