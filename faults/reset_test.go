package faults_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestResetEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.Reset{}))
	want := faults.Toxic{Type: "reset_peer", Stream: faults.Downstream, Toxicity: 1, Attributes: map[string]int64{"timeout": 0}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
	if p := (&faults.Reset{}).Check(); p != nil {
		t.Errorf("Check() = %v, want nil", p)
	}
}

// Every call is reset at once, well inside the client timeout.
func TestResetOutcomes(t *testing.T) {
	const timeout, n = time.Second, 5
	b := newBench(t, timeout)
	if m := b.mix(1); !m.only("ok") {
		t.Fatalf("before the fault: %v, want only ok", m)
	}
	b.apply(faults.New("A", &faults.Reset{}))
	start := time.Now()
	m := b.mix(n)
	if !m.only("upstream/reset") {
		t.Fatalf("reset: mix %v, want only upstream/reset", m)
	}
	if d := time.Since(start); d >= n*timeout/2 {
		t.Errorf("%d resets took %v, want them fast (timeout %v)", n, d, timeout)
	}
	t.Logf("reset: %v", m)
}
