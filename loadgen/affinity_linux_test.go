package loadgen

import (
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// useOtherCPUs moves the process onto the CPUs outside the affinity it inherited (the load
// generator's, under taskset), or onto every CPU when it inherited all of them, sets GOMAXPROCS
// to match, and returns how many CPUs it now has. sched_setaffinity(2) moves one thread, so
// every thread of the process is moved (threads started later inherit the mask of the thread
// that starts them).
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
	if err := setAffinity(&other); err != nil {
		other.Zero()
		for i := range len(other) * 64 {
			other.Set(i)
		}
		if err := setAffinity(&other); err != nil {
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

// setAffinity sets the CPU affinity of every thread of the process.
func setAffinity(set *unix.CPUSet) error {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			continue
		}
		// A thread may have ended since the listing; that is no error.
		if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
			return err
		}
	}
	return nil
}
