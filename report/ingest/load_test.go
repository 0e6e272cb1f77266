package ingest

import (
	"math"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/report/model"
)

func TestLagOf(t *testing.T) {
	tests := []struct {
		name  string
		sched string
		sent  time.Duration
		want  int32
	}{
		{"late by 1.5 ms", "1000000000", 1001500 * time.Microsecond, 1500},
		{"early counts as on time", "1000000000", 999 * ms_, 0},
		{"no schedule", "", time.Second, model.LagUnknown},
		{"unreadable schedule", "soon", time.Second, model.LagUnknown},
		{"a lag beyond 35 min is clamped", "0", 100 * time.Hour, math.MaxInt32},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lagOf(tt.sched, tt.sent); got != tt.want {
				t.Errorf("lagOf(%q, %v) = %d µs, want %d", tt.sched, tt.sent, got, tt.want)
			}
		})
	}
}

const ms_ = time.Millisecond
