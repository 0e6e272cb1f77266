package faults_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/faults"
)

func TestLimitDataCheck(t *testing.T) {
	checkTable(t, []checkCase{
		{"1000 bytes", &faults.LimitData{Bytes: 1000}, nil},
		{"zero", &faults.LimitData{}, []string{"bytes"}},
		{"negative", &faults.LimitData{Bytes: -1}, []string{"bytes"}},
	})
}

func TestLimitDataEffect(t *testing.T) {
	got := toxicOf(t, faults.New("A", &faults.LimitData{Bytes: 1000}))
	want := faults.Toxic{Type: "limit_data", Stream: faults.Downstream, Toxicity: 1, Attributes: map[string]int64{"bytes": 1000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("toxic = %+v, want %+v", got, want)
	}
}

// A budget below one answer (a few hundred bytes) cuts every answer in its headers, which the
// service's client reads as a malformed response (reason other; a cut in a body reads as eof). A
// budget of a few answers lets those through and cuts the one that runs it out, on each fresh
// connection in turn.
func TestLimitDataOutcomes(t *testing.T) {
	const n = 20
	tests := []struct {
		name           string
		bytes          int64
		minOK, maxOK   int
		minCut, maxCut int
	}{
		{"below one answer: every call cut", 50, 0, 0, n, n},
		{"a few answers: one call in a few cut", 1000, n/2 + 1, n - 1, 1, n/2 - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBench(t, time.Second)
			b.apply(faults.New("A", &faults.LimitData{Bytes: tt.bytes}))
			m := b.mix(n)
			cut := 0
			for k, c := range m {
				switch {
				case k == "ok":
				case strings.HasPrefix(k, "upstream/"):
					cut += c
				default:
					t.Errorf("limit_data %d B: %d calls %s, want only ok and upstream failures", tt.bytes, c, k)
				}
			}
			if m["ok"] < tt.minOK || m["ok"] > tt.maxOK || cut < tt.minCut || cut > tt.maxCut {
				t.Errorf("limit_data %d B: mix %v, want %d to %d ok and %d to %d cut", tt.bytes, m, tt.minOK, tt.maxOK, tt.minCut, tt.maxCut)
			}
			t.Logf("limit_data %d B: %v", tt.bytes, m)
		})
	}
}
