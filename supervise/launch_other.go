//go:build !linux

package supervise

import (
	"os/exec"
	"syscall"
)

// Init does nothing where there is no shim (see the package documentation).
func Init() {}

// launch starts cmd in its own process group, so Stop reaches its children too, and returns its
// pid.
func launch(cmd *exec.Cmd) (int, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	return cmd.Process.Pid, nil
}
