package supervise

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// signalName names sig as a person reads it in an error: "SIGKILL", not Go's "killed" (which
// made "killed by killed").
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}
