package scenarios

import (
	"time"

	"gopkg.in/yaml.v3"
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
	Sizes         []int         `yaml:"sizes,omitempty"`
	Fractions     []float64     `yaml:"fractions,omitempty"`
	Rates         []float64     `yaml:"rates,omitempty"`
	PhaseDuration time.Duration `yaml:"phase_duration,omitempty"`
}

// sweepSpec decodes a `sweep:` block into sp, reporting sizes < 1, fractions outside (0, 2],
// rates <= 0 and a phase duration <= 0 with their line. (The sweep package checks the grid again,
// with duplicates, when it runs.)
func (d *decoder) sweepSpec(n *yaml.Node, path string, sp *SweepSpec) {
	d.mapping(n, path, []field{
		{name: "sizes", decode: func(n *yaml.Node, path string) {
			sp.Sizes = make([]int, lenOf(n))
			d.sequence(n, path, func(i int, n *yaml.Node, p string) {
				d.intField(&sp.Sizes[i])(n, p)
				if sp.Sizes[i] < 1 {
					d.add(p, "a pool size must be >= 1, got %d", sp.Sizes[i])
				}
			})
		}},
		{name: "fractions", decode: func(n *yaml.Node, path string) {
			sp.Fractions = make([]float64, lenOf(n))
			d.sequence(n, path, func(i int, n *yaml.Node, p string) {
				before := len(d.list)
				d.floatField(&sp.Fractions[i])(n, p)
				if f := sp.Fractions[i]; len(d.list) == before && (f <= 0 || f > 2) {
					d.add(p, "a fault delay fraction must be in (0, 2], got %g", f)
				}
			})
		}},
		{name: "rates", decode: func(n *yaml.Node, path string) {
			sp.Rates = make([]float64, lenOf(n))
			d.sequence(n, path, func(i int, n *yaml.Node, p string) {
				before := len(d.list)
				d.rate(&sp.Rates[i])(n, p)
				if len(d.list) == before && sp.Rates[i] <= 0 {
					d.add(p, "a rate must be > 0, got %g", sp.Rates[i])
				}
			})
		}},
		{name: "phase_duration", decode: func(n *yaml.Node, path string) {
			before := len(d.list)
			d.duration(&sp.PhaseDuration, false)(n, path)
			if len(d.list) == before && sp.PhaseDuration <= 0 {
				d.add(path, "must be > 0 when set (omit it for the default)")
			}
		}},
	})
}
