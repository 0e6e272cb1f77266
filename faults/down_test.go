package faults_test

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestDownEffect(t *testing.T) {
	f := faults.New("A", &faults.Down{})
	if e := f.Effect(); !e.ProxyDown || e.Toxic != nil || e.Status != 0 {
		t.Errorf("effect = %+v, want the proxy down and nothing else", e)
	}
	f.Toxicity = 0.5
	if p := f.Check(); len(p) != 1 || p[0].Field != "toxicity" {
		t.Errorf("down with toxicity: Check() = %v, want a toxicity problem (not a toxic)", p)
	}
}

// Every call is refused while the proxy is down.
func TestDownOutcomes(t *testing.T) {
	b := newBench(t, time.Second)
	b.mix(1) // a pooled connection, which down closes
	b.apply(faults.New("A", &faults.Down{}))
	if m := b.mix(3); !m.only("upstream/refused") {
		t.Fatalf("down: mix %v, want only upstream/refused", m)
	} else {
		t.Logf("down: %v", m)
	}
}
