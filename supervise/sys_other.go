//go:build !linux

package supervise

import "syscall"

// sysProcAttr puts the child in its own process group, so Stop reaches its children too.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
