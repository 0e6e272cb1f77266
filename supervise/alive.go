package supervise

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Alive reports whether a process with id pid exists on this host and has not exited: it exists
// even when it belongs to another user (signal 0 answers EPERM), and a zombie (exited, not yet
// reaped by its parent) counts as gone. It reads /proc where there is one and does not block.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		// The state follows the command in parentheses: "pid (comm) S ...".
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'Z' {
			return false
		}
		return true
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
