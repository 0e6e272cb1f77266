//go:build !linux

package attack

// peakRSS is 0 outside Linux, where ru_maxrss has other units or none.
func peakRSS() int64 { return 0 }
