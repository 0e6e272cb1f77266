package faults_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestBandwidthCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"64 KB/s", &faults.Bandwidth{RateKBps: 64}, nil},
		{"zero", &faults.Bandwidth{}, []string{"rate_kbps"}},
		{"negative", &faults.Bandwidth{RateKBps: -1}, []string{"rate_kbps"}},
	})
}

func TestBandwidthEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.Bandwidth{RateKBps: 64}))
	want := faults.Toxic{Type: "bandwidth", Stream: faults.Downstream, Toxicity: 1, Attributes: map[string]int64{"rate": 64}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
}

// The dependency's answer is about 200 bytes: at 100 KB/s it arrives in a few milliseconds, at
// 1 KB/s it takes about 200ms and every call times out at 100ms.
func TestBandwidthOutcomes(t *testing.T) {
	const n = 3
	tests := []struct {
		name    string
		rate    int
		timeout time.Duration
		want    string
	}{
		{"100 KB/s: in time", 100, time.Second, "ok"},
		{"1 KB/s: too slow for the timeout", 1, 100 * time.Millisecond, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			b := newBench(t, timeout)
			b.apply(faults.New("A", &faults.Bandwidth{RateKBps: tt.rate}))
			if m := b.mix(n); !m.only(tt.want) {
				t.Fatalf("bandwidth %d KB/s: mix %v, want only %s", tt.rate, m, tt.want)
			} else {
				t.Logf("bandwidth %d KB/s, timeout %v: %v", tt.rate, timeout, m)
			}
		})
	}
}
