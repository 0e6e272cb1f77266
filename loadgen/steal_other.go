//go:build !linux

package loadgen

// readCPUTimes is not ok: steal time is read from Linux's /proc/stat only.
func readCPUTimes() cpuTimes { return cpuTimes{} }
