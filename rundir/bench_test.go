package rundir

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// BenchmarkResourceWriter writes one sample of the partners scenario's shape (1,000 pools and
// 500 dependencies: 2,000 exact rows of whole counts) per op: the cost the runner's sampler pays
// every 100 ms.
func BenchmarkResourceWriter(b *testing.B) {
	rs := make([]outcome.Resource, 0, 2000)
	for i := range 1000 {
		rs = append(rs, outcome.Resource{Name: fmt.Sprintf("pool:p%d", i), Capacity: 20, InUse: 3, Rejected: 7,
			Interval: 100 * time.Millisecond, MeanInUse: 2.5, MaxInUse: 5, FirstAtCapacity: -1})
	}
	for i := range 1000 {
		rs = append(rs, outcome.Resource{Name: fmt.Sprintf("calls:d%d", i), Capacity: 20, InUse: 1,
			Interval: 100 * time.Millisecond, MeanInUse: 0.75, MaxInUse: 2, AtCapacity: time.Millisecond, FirstAtCapacity: 50 * time.Millisecond})
	}
	w, err := NewResourceWriter(io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := w.Write(time.Second, rs); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}
