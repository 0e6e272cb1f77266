package faults_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestLatencyCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"450ms", &faults.Latency{Latency: 450 * time.Millisecond}, nil},
		{"with jitter", &faults.Latency{Latency: time.Second, Jitter: 100 * time.Millisecond}, nil},
		{"rounds up to 1ms", &faults.Latency{Latency: 600 * time.Microsecond}, nil},
		{"zero", &faults.Latency{}, []string{"latency"}},
		{"rounds down to 0ms", &faults.Latency{Latency: 400 * time.Microsecond}, []string{"latency"}},
		{"negative jitter", &faults.Latency{Latency: time.Second, Jitter: -1}, []string{"jitter"}},
	})
}

func TestLatencyEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.Latency{Latency: 450 * time.Millisecond, Jitter: 20 * time.Millisecond}))
	want := faults.Toxic{Type: "latency", Stream: faults.Downstream, Toxicity: 1,
		Attributes: map[string]int64{"latency": 450, "jitter": 20}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
}

// A latency below the client timeout makes answers late; above it, every call times out.
func TestLatencyOutcomes(t *testing.T) {
	const n = 3
	tests := []struct {
		name             string
		latency, timeout time.Duration
		want             string
	}{
		// Margins are wide: a busy machine adds its own delay on top of the toxic's.
		{"below the client timeout: answered late", 30 * time.Millisecond, time.Second, "ok"},
		{"above the client timeout: timed out", 300 * time.Millisecond, 100 * time.Millisecond, "timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			b := newBench(t, timeout)
			b.apply(faults.New("A", &faults.Latency{Latency: tt.latency}))
			start := time.Now()
			m := b.mix(n)
			if !m.only(tt.want) {
				t.Fatalf("latency %v, timeout %v: mix %v, want only %s", tt.latency, timeout, m, tt.want)
			}
			if d := time.Since(start); d < n*min(tt.latency, timeout) {
				t.Errorf("%d calls took %v, want at least %v", n, d, n*min(tt.latency, timeout))
			}
			t.Logf("latency %v, timeout %v: %v", tt.latency, timeout, m)
		})
	}
}
