package verdict

import (
	"math"
	"slices"

	"github.com/bulkheadlab/bulkhead/claim"
	"github.com/bulkheadlab/bulkhead/confidence"
	"github.com/bulkheadlab/bulkhead/report/model"
)

// form is an expression of figures, linearised at their values: value, and the figures with
// their coefficients (the expression's derivative with respect to each). A claim's left - right
// is one; confidence.Combine gives its interval.
type form struct {
	value float64
	terms []confidence.Term
	// configs are the configurations its figures are measured in.
	configs []string
	// notes say what a reader needs about its figures (a level never reached).
	notes []string
	// exact marks a declared number (no figure at all).
	exact bool
	// unit is a lone figure's unit (its interval is cut to the unit's range); "" for any
	// expression of figures.
	unit claim.Unit
}

func leaf(f *confidence.Figure, config string, unit claim.Unit) *form {
	return &form{value: f.Value(), terms: []confidence.Term{{Coef: 1, Figure: f}}, configs: []string{config}, unit: unit}
}

// constant is a number as a form.
func constant(v float64) *form { return &form{value: v, exact: true} }

// scaled returns a x k + plus.
func (a *form) scaled(k, plus float64) *form {
	out := &form{value: a.value*k + plus, configs: a.configs, notes: a.notes, exact: a.exact}
	for _, t := range a.terms {
		out.terms = append(out.terms, confidence.Term{Coef: t.Coef * k, Figure: t.Figure})
	}
	return out
}

// plus returns ka·a + kb·b, merging the terms of a figure that appears in both.
func (a *form) plus(ka float64, b *form, kb float64) *form {
	out := &form{value: ka*a.value + kb*b.value, exact: a.exact && b.exact}
	add := func(t confidence.Term, k float64) {
		for i := range out.terms {
			if out.terms[i].Figure == t.Figure {
				out.terms[i].Coef += k * t.Coef
				return
			}
		}
		out.terms = append(out.terms, confidence.Term{Coef: k * t.Coef, Figure: t.Figure})
	}
	for _, t := range a.terms {
		add(t, ka)
	}
	for _, t := range b.terms {
		add(t, kb)
	}
	for _, c := range append(slices.Clone(a.configs), b.configs...) {
		if !slices.Contains(out.configs, c) {
			out.configs = append(out.configs, c)
		}
	}
	out.notes = append(slices.Clone(a.notes), b.notes...)
	return out
}

// minus returns a - b.
func (a *form) minus(b *form) *form { return a.plus(1, b, -1) }

// over returns a / b, linearised: d(a/b) = da/b - a·db/b² (b.value must not be 0).
func (a *form) over(b *form) *form {
	out := a.plus(1/b.value, b, -a.value/(b.value*b.value))
	out.value = a.value / b.value
	return out
}

// estimate returns the form's value with its 95% interval.
func (a *form) estimate() confidence.Estimate {
	return confidence.Combine(a.value, a.terms)
}

// interval returns the form's estimate as summary.json's interval, a lone figure's cut to the
// range of its unit (no latency below 0, no share above 1).
func (a *form) interval() *model.Interval {
	e := a.estimate()
	switch a.unit {
	case "":
	case claim.UnitShare:
		e.Lo, e.Hi = math.Max(e.Lo, 0), math.Min(e.Hi, 1)
	default:
		e.Lo = math.Max(e.Lo, 0)
	}
	return intervalOf(e, a.exact)
}
