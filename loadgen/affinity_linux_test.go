package loadgen

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// useOtherCPUs moves the process onto the CPUs outside the affinity it inherited (the load
// generator's, under taskset), or onto every CPU when it inherited all of them, sets GOMAXPROCS
// to match, and returns how many CPUs it now has.
func useOtherCPUs() (int, error) {
	var inherited, other unix.CPUSet
	if err := unix.SchedGetaffinity(0, &inherited); err != nil {
		return 0, err
	}
	for i := range len(other) * 64 {
		if !inherited.IsSet(i) {
			other.Set(i)
		}
	}
	// The kernel keeps only CPUs that exist; no other CPU at all is an error, then use every one.
	if err := unix.SchedSetaffinity(0, &other); err != nil {
		other.Zero()
		for i := range len(other) * 64 {
			other.Set(i)
		}
		if err := unix.SchedSetaffinity(0, &other); err != nil {
			return 0, err
		}
	}
	var now unix.CPUSet
	if err := unix.SchedGetaffinity(0, &now); err != nil {
		return 0, err
	}
	runtime.GOMAXPROCS(now.Count())
	return now.Count(), nil
}
