//go:build !linux

package loadgen

import "runtime"

// useOtherCPUs does nothing outside Linux and returns the CPUs in use.
func useOtherCPUs() (int, error) { return runtime.GOMAXPROCS(0), nil }
