package scenarios

import (
	"time"
)

// SweepSpec is a scenario's optional `sweep:` block: the grid `bulkhead sweep` runs over the
// scenario when no flag says otherwise. Every part is optional; a part left out (nil, 0) means
// the sweep package's default, and a flag given on the command line overrides its part.
//
//	sweep:
//	  sizes: [4, 10, 20]            # pool budgets P
//	  fractions: [0.5, 0.7, 0.9, 1] # fault delay as a fraction of the timeout, in (0, 2]
//	  rates: [20/s, 50/s]           # per endpoint
//	  phase_duration: 3s            # each cell's baseline and fault phases
type SweepSpec struct {
	// Sizes are the pool budgets P of the grid, each >= 1.
	Sizes []int `yaml:"sizes,omitempty"`
	// Fractions are the fault delays, as fractions of the client timeout, each in (0, 2].
	Fractions []float64 `yaml:"fractions,omitempty"`
	// Rates are the per-endpoint rates of the grid.
	Rates []float64 `yaml:"rates,omitempty" scenario:"rate"`
	// PhaseDuration is each cell's baseline and fault phase.
	PhaseDuration time.Duration `yaml:"phase_duration,omitempty" scenario:"absolute,nonzero"`
}
