package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// Grid is the set of cells a sweep runs: every combination of Sizes x Fractions x Rates.
type Grid struct {
	// Sizes are the pool budgets P: the shared pool's size, split in the base's proportions.
	Sizes []int `json:"sizes"`
	// Fractions are the fault delays as a fraction of the client timeout, in (0, 2].
	Fractions []float64 `json:"fractions"`
	// Rates are requests per second per endpoint.
	Rates []float64 `json:"rates"`
}

// DefaultGrid is the sweep run when nothing else is given: 3 x 4 x 2 = 24 cells. With
// DefaultPhaseDuration each cell runs two 6 s time lines (shared, then split).
var DefaultGrid = Grid{
	Sizes:     []int{4, 10, 20},
	Fractions: []float64{0.5, 0.7, 0.9, 1.0},
	Rates:     []float64{20, 50},
}

// DefaultPhaseDuration is the length of each of a cell's two phases (baseline, fault): six
// timeouts of the seed-004 scenario's 500 ms.
const DefaultPhaseDuration = 3 * time.Second

// DefaultLagLimit is the send lag p99 above which a cell's run is invalid. It is looser than
// loadgen.DefaultLagLimit (1 ms): the sweep's effects are hundreds of milliseconds (fractions of
// the timeout), and on a shared 2-core machine a few milliseconds of send lag at 20/s left nearly
// every cell invalid while changing none of its figures by more than that lag.
const DefaultLagLimit = 10 * time.Millisecond

// ErrBadGrid is wrapped by every error Grid.Validate and the Parse functions return.
var ErrBadGrid = errors.New("invalid sweep grid")

// Cells returns the number of cells.
func (g Grid) Cells() int { return len(g.Sizes) * len(g.Fractions) * len(g.Rates) }

// Validate reports an empty dimension, a size < 1, a fraction outside (0, 2], a rate <= 0 or a
// value given twice, as an error wrapping ErrBadGrid.
func (g Grid) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrBadGrid}, args...)...))
	}
	if len(g.Sizes) == 0 || len(g.Fractions) == 0 || len(g.Rates) == 0 {
		bad("every dimension needs at least one value (sizes %d, fractions %d, rates %d)", len(g.Sizes), len(g.Fractions), len(g.Rates))
	}
	for _, p := range g.Sizes {
		if p < 1 {
			bad("size %d: must be >= 1", p)
		}
	}
	for _, f := range g.Fractions {
		if !(f > 0 && f <= 2) {
			bad("fraction %v: must be in (0, 2] (x the client timeout)", f)
		}
	}
	for _, r := range g.Rates {
		if !(r > 0) || math.IsInf(r, 0) {
			bad("rate %v: must be > 0", r)
		}
	}
	if dup(g.Sizes) || dup(g.Fractions) || dup(g.Rates) {
		bad("a value is given twice")
	}
	return errors.Join(errs...)
}

func dup[T comparable](xs []T) bool {
	seen := map[T]bool{}
	for _, x := range xs {
		if seen[x] {
			return true
		}
		seen[x] = true
	}
	return false
}

// sorted returns a copy of g with every dimension in increasing order.
func (g Grid) sorted() Grid {
	out := Grid{Sizes: slices.Clone(g.Sizes), Fractions: slices.Clone(g.Fractions), Rates: slices.Clone(g.Rates)}
	slices.Sort(out.Sizes)
	slices.Sort(out.Fractions)
	slices.Sort(out.Rates)
	return out
}

// ParseSizes reads a comma-separated list of pool sizes ("4,10,20").
func ParseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%w: size %q: want an integer >= 1", ErrBadGrid, f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no sizes in %q", ErrBadGrid, s)
	}
	return out, nil
}

// ParseFractions reads a comma-separated list of fractions of the timeout ("0.5,0.7,0.9,1.0";
// a trailing "x" is accepted: "0.9x").
func ParseFractions(s string) ([]float64, error) {
	var out []float64
	for _, f := range fields(s) {
		v, err := strconv.ParseFloat(strings.TrimSuffix(f, "x"), 64)
		if err != nil || !(v > 0 && v <= 2) {
			return nil, fmt.Errorf("%w: fraction %q: want a number in (0, 2]", ErrBadGrid, f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no fractions in %q", ErrBadGrid, s)
	}
	return out, nil
}

// ParseRates reads a comma-separated list of rates as loadgen.ParseRate reads one
// ("20/s,50/s", "20,50", "600/1m").
func ParseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range fields(s) {
		r, err := loadgen.ParseRate(f)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadGrid, err)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no rates in %q", ErrBadGrid, s)
	}
	return out, nil
}

func fields(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// fracLabel writes a fraction as the grid's labels and folder names do: "0.9", "1.0".
func fracLabel(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// rateLabel writes a rate without float noise: "20", "12.5".
func rateLabel(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }
