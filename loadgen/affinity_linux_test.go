package loadgen

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// useEveryCPU lets the process run on every CPU, whatever affinity it inherited.
func useEveryCPU() error {
	var all unix.CPUSet
	for i := range runtime.NumCPU() {
		all.Set(i)
	}
	return unix.SchedSetaffinity(0, &all)
}
