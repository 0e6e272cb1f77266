package verdict

import (
	"math"
	"testing"

	"github.com/bulkheadlab/bulkhead/report/model"
)

// The decision rule on an interval of left - right, for every operator.
func TestDecide(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		op     string
		lo, hi float64
		tol    float64
		want   string
	}{
		{"<", -2, -1, 0, model.VerdictHolds},
		{"<", -1, 0, 0, model.VerdictInconclusive},
		{"<", 0, 1, 0, model.VerdictDoesNotHold},
		{"<=", -1, 0, 0, model.VerdictHolds},
		{"<=", -1, 1, 0, model.VerdictInconclusive},
		{"<=", 0.5, inf, 0, model.VerdictDoesNotHold},
		{">", 0.1, inf, 0, model.VerdictHolds},
		{">", 0, 1, 0, model.VerdictInconclusive},
		{">", -1, 0, 0, model.VerdictDoesNotHold},
		{">=", 0, 1, 0, model.VerdictHolds},
		{">=", -inf, inf, 0, model.VerdictInconclusive},
		{">=", -2, -1, 0, model.VerdictDoesNotHold},
		{"within", -0.1, 0.1, 0.1, model.VerdictHolds},
		{"within", -0.05, 0.2, 0.1, model.VerdictInconclusive},
		{"within", 0.2, 0.3, 0.1, model.VerdictDoesNotHold},
		{"within", -0.3, -0.2, 0.1, model.VerdictDoesNotHold},
	}
	for _, tt := range tests {
		if got := decide(tt.op, tt.lo, tt.hi, tt.tol); got != tt.want {
			t.Errorf("decide(%q, [%g, %g], tol %g) = %q, want %q", tt.op, tt.lo, tt.hi, tt.tol, got, tt.want)
		}
	}
}
