package model

import (
	"cmp"
	"slices"
	"strings"
)

// Record is one request, reduced to what the statistics need (24 bytes, so a million requests
// stay around 24 MB).
type Record struct {
	T   int64  // send offset from the attack start, ns
	Lat int64  // latency, ns
	Key uint32 // index into the configuration's outcome table (Configuration.Kinds)
	Lag int32  // send lag, µs (actual send offset - scheduled), LagUnknown without a schedule
}

// LagUnknown marks a record whose raw result carried no scheduled send offset.
const LagUnknown = -1

// Kind is one distinct combination of class and service outcome headers.
type Kind struct {
	Class   string // X-Loadgen-Class ("ok", "rejected:full", ...)
	Type    string // ok | timeout | rejected | upstream | connection | other
	Cause   string // the part after ':' ("full", "dependency", ...)
	Pool    string // X-Bulkhead-Pool
	Reason  string // X-Bulkhead-Reason
	Dep     string // X-Bulkhead-Dependency
	Success bool
}

// NewKind splits a class into its type and cause. Unknown prefixes are typed "other".
func NewKind(class, pool, reason, dep string) Kind {
	typ, cause, _ := strings.Cut(class, ":")
	switch typ {
	case "ok", "timeout", "rejected", "upstream", "connection":
	default:
		typ = "other"
	}
	return Kind{Class: class, Type: typ, Cause: cause, Pool: pool, Reason: reason, Dep: dep, Success: typ == "ok"}
}

// Span returns the sub-slice of recs (sorted by T) with from <= T < to.
func Span(recs []Record, from, to int64) []Record {
	i, _ := slices.BinarySearchFunc(recs, from, func(r Record, t int64) int { return cmp.Compare(r.T, t) })
	j, _ := slices.BinarySearchFunc(recs, to, func(r Record, t int64) int { return cmp.Compare(r.T, t) })
	return recs[i:j]
}

// SortByTime sorts recs by send offset.
func SortByTime(recs []Record) {
	slices.SortFunc(recs, func(a, b Record) int { return cmp.Compare(a.T, b.T) })
}
