package attack

import "syscall"

// peakRSS returns this process's peak resident set size in bytes (getrusage's ru_maxrss, which
// Linux gives in KiB), or 0 if the kernel does not say.
func peakRSS() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss * 1024
}
