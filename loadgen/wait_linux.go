package loadgen

import (
	"syscall"
	"time"
)

// sleepPrecise blocks the calling thread for d with the kernel's high-resolution timer (about
// 50 µs of slack), where the Go runtime's idle timers wake with millisecond granularity.
func sleepPrecise(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var left syscall.Timespec
		if err := syscall.Nanosleep(&ts, &left); err != syscall.EINTR {
			return
		}
		ts = left
	}
}
