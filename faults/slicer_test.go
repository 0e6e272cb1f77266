package faults_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestSlicerCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"64 bytes", &faults.Slicer{AverageSize: 64}, nil},
		{"with variation and delay", &faults.Slicer{AverageSize: 64, SizeVariation: 16, Delay: time.Millisecond}, nil},
		{"no size", &faults.Slicer{}, []string{"average_size"}},
		{"variation as large as the size", &faults.Slicer{AverageSize: 8, SizeVariation: 8}, []string{"size_variation"}},
		{"negative variation", &faults.Slicer{AverageSize: 8, SizeVariation: -1}, []string{"size_variation"}},
		{"negative delay", &faults.Slicer{AverageSize: 8, Delay: -time.Millisecond}, []string{"delay"}},
		{"delay below 1µs", &faults.Slicer{AverageSize: 8, Delay: 400 * time.Nanosecond}, []string{"delay"}},
	})
}

func TestSlicerEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.Slicer{AverageSize: 64, SizeVariation: 16, Delay: 1500 * time.Microsecond}))
	want := faults.Toxic{Type: "slicer", Stream: faults.Downstream, Toxicity: 1,
		Attributes: map[string]int64{"average_size": 64, "size_variation": 16, "delay": 1500}} // delay in µs
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
}

// The dependency's answer (headers and body, a few hundred bytes) cut into 16-byte chunks still
// reads whole; with 20ms between chunks it takes some 15 chunks x 20ms: answered late within a 1s
// timeout, timed out within 100ms.
func TestSlicerOutcomes(t *testing.T) {
	const n = 3
	tests := []struct {
		name           string
		delay, timeout time.Duration
		want           string
		atLeast        time.Duration // per call
	}{
		{"sliced, no delay: whole answers", 0, time.Second, "ok", 0},
		{"20ms between chunks: late", 20 * time.Millisecond, time.Second, "ok", 100 * time.Millisecond},
		{"20ms between chunks, 100ms timeout: timed out", 20 * time.Millisecond, 100 * time.Millisecond, "timeout", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, tt.timeout)
			b.apply(faults.New("A", &faults.Slicer{AverageSize: 16, Delay: tt.delay}))
			start := time.Now()
			m := b.mix(n)
			if !m.only(tt.want) {
				t.Fatalf("slicer 16 B every %v, timeout %v: mix %v, want only %s", tt.delay, tt.timeout, m, tt.want)
			}
			if d := time.Since(start); d < n*tt.atLeast {
				t.Errorf("%d calls took %v, want at least %v", n, d, n*tt.atLeast)
			}
			t.Logf("slicer 16 B every %v, timeout %v: %v in %v", tt.delay, tt.timeout, m, time.Since(start).Round(time.Millisecond))
		})
	}
}
