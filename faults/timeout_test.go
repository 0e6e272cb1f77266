package faults_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestTimeoutCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"hang", &faults.Timeout{}, nil},
		{"closed after 200ms", &faults.Timeout{CloseAfter: 200 * time.Millisecond}, nil},
		{"negative", &faults.Timeout{CloseAfter: -time.Millisecond}, []string{"close_after"}},
		{"below 1ms", &faults.Timeout{CloseAfter: 400 * time.Microsecond}, []string{"close_after"}},
	})
}

func TestTimeoutEffect(t *testing.T) {
	tests := []struct {
		p    *faults.Timeout
		want int64
	}{
		{&faults.Timeout{}, 0}, // Toxiproxy's 0: hang for good
		{&faults.Timeout{CloseAfter: 200 * time.Millisecond}, 200},
	}
	for _, tt := range tests {
		got := toxicOf(t, faults.New("A", tt.p))
		want := faults.Toxic{Type: "timeout", Stream: faults.Downstream, Toxicity: 1, Attributes: map[string]int64{"timeout": tt.want}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v: toxic = %+v, want %+v", tt.p, got, want)
		}
	}
}

// A hang ends every call at the client timeout; closed after 20ms, every call fails with EOF
// long before it.
func TestTimeoutOutcomes(t *testing.T) {
	const n = 3
	tests := []struct {
		name                string
		closeAfter, timeout time.Duration
		want                string
	}{
		{"hang: the client timeout ends each call", 0, 100 * time.Millisecond, "timeout"},
		{"closed after 20ms: eof before the timeout", 20 * time.Millisecond, time.Second, "upstream/eof"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			b := newBench(t, timeout)
			b.apply(faults.New("A", &faults.Timeout{CloseAfter: tt.closeAfter}))
			m := b.mix(n)
			if !m.only(tt.want) {
				t.Fatalf("timeout, close_after %v: mix %v, want only %s", tt.closeAfter, m, tt.want)
			}
			t.Logf("timeout, close_after %v, client timeout %v: %v", tt.closeAfter, timeout, m)
		})
	}
}
