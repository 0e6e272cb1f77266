package model

import (
	"fmt"
	"math"
	"strconv"

	"github.com/bulkheadlab/bulkhead/faults"
)

// Num writes a figure with at most 3 decimals and no trailing zeros.
func Num(v float64) string {
	return strconv.FormatFloat(Round3(v), 'f', -1, 64)
}

// Round3 rounds v to 3 decimals.
func Round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// String writes "0.42 [0.38, 0.47]", with ∞ for an open end, "0.42 [exact]" for an interval of
// one value, and "–" for a nil Interval (a figure not measured).
func (iv *Interval) String() string {
	if iv == nil {
		return "–"
	}
	lo, hi := "−∞", "∞"
	if iv.Lo != nil {
		lo = Num(*iv.Lo)
	}
	if iv.Hi != nil {
		hi = Num(*iv.Hi)
	}
	if iv.Basis == BasisExact || iv.Basis == "" && iv.Lo != nil && iv.Hi != nil && *iv.Lo == *iv.Hi {
		return Num(iv.Value) + " [exact]" // a declared number (or an older folder's zero width)
	}
	return fmt.Sprintf("%s [%s, %s]", Num(iv.Value), lo, hi)
}

// ShortFault writes a fault for a window label, short enough for a narrow window: its
// dependency, then a latency as "+450ms" and any other type by name and amounts ("A reset",
// "B bandwidth 64 KB/s"), then "upstream" and the share of connections when not every one.
func ShortFault(f faults.Fault) string {
	var amount string
	if f.Params != nil {
		amount = f.Params.String()
	}
	s := f.Dependency + " " + f.Type
	switch {
	case f.Type == "latency" && amount != "":
		s = f.Dependency + " +" + amount
	case amount != "":
		s += " " + amount
	}
	if f.Direction == faults.Upstream {
		s += " upstream"
	}
	if f.Toxicity != 0 && f.Toxicity != 1 {
		s += fmt.Sprintf(" (%g%%)", 100*f.Toxicity)
	}
	return s
}
