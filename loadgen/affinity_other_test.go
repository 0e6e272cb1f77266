//go:build !linux

package loadgen

// useEveryCPU does nothing outside Linux.
func useEveryCPU() error { return nil }
