package faults_test

import (
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestHTTPErrorCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"default 500", &faults.HTTPError{}, nil},
		{"503", &faults.HTTPError{Status: 503}, nil},
		{"not an error status", &faults.HTTPError{Status: 200}, []string{"status"}},
		{"not a status", &faults.HTTPError{Status: 600}, []string{"status"}},
	})
}

func TestHTTPErrorEffect(t *testing.T) {
	tests := []struct {
		p    *faults.HTTPError
		want int
	}{
		{&faults.HTTPError{}, 500},
		{&faults.HTTPError{Status: 503}, 503},
	}
	for _, tt := range tests {
		if e := faults.New("A", tt.p).Effect(); e.Status != tt.want || e.OnProxy() {
			t.Errorf("%+v: effect = %+v, want status %d and nothing on the proxy", tt.p, e, tt.want)
		}
	}
}

// The dependency answers the status at once; the service reports it as an upstream failure.
func TestHTTPErrorOutcomes(t *testing.T) {
	tests := []struct {
		status int
		want   string
	}{
		{0, "upstream/status-500"},
		{503, "upstream/status-503"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			b := newBench(t, time.Second)
			b.apply(faults.New("A", &faults.HTTPError{Status: tt.status}))
			if m := b.mix(3); !m.only(tt.want) {
				t.Fatalf("http-error %d: mix %v, want only %s", tt.status, m, tt.want)
			} else {
				t.Logf("http-error %d: %v", tt.status, m)
			}
		})
	}
}
