package service

import "runtime/metrics"

// Process-wide memory, read with runtime/metrics: unlike runtime.ReadMemStats it does not stop the
// world, so sampling it every 100 ms costs microseconds.
const (
	metricHeapObjects = "/memory/classes/heap/objects:bytes"
	metricStacks      = "/memory/classes/heap/stacks:bytes"
)

// readMemory returns the bytes of live and not yet swept heap objects and of goroutine stacks
// (including OS thread stacks in a program without cgo), for the whole process: whatever else
// runs in it (an embedded Toxiproxy, the load generator) is counted too.
func readMemory() (heap, stacks uint64) {
	s := []metrics.Sample{{Name: metricHeapObjects}, {Name: metricStacks}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		heap = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		stacks = s[1].Value.Uint64()
	}
	return heap, stacks
}
