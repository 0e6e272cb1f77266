package faults_test

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

// Direction picks the stream a toxic acts on. A reset looks the same to the caller either way,
// but downstream the dependency has served every request before its answer is reset, and upstream
// it never sees one: the difference between a lost answer and a lost request.
func TestDirectionOutcomes(t *testing.T) {
	const n = 5
	tests := []struct {
		direction faults.Direction
		served    uint64
	}{
		{faults.Downstream, n},
		{faults.Upstream, 0},
	}
	for _, tt := range tests {
		t.Run(string(tt.direction), func(t *testing.T) {
			b := newBench(t, time.Second)
			b.apply(faults.Fault{Type: "reset", Params: &faults.Reset{}, Direction: tt.direction})
			m := b.mix(n)
			if !m.only("upstream/reset") {
				t.Errorf("reset %s: mix %v, want only upstream/reset", tt.direction, m)
			}
			if got := b.dep.Stats().Served; got != tt.served {
				t.Errorf("reset %s: the dependency served %d of %d requests, want %d", tt.direction, got, n, tt.served)
			}
			t.Logf("reset %s: %v; dependency served %d", tt.direction, m, b.dep.Stats().Served)
		})
	}
}
