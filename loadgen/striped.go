package loadgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shard names one of Count load generators that share every attack of a run: shard Index sends
// the hits g of each unsharded schedule with g mod Count == Index, at the times the unsharded
// schedule has them due. The union of the Count shards' sends is the unsharded run's, hit for
// hit, whatever the pacer (constant, piecewise, Poisson: striping one seeded Poisson stream keeps
// its arrival times, so the union is the unsharded process itself, not a sum of N independent
// ones). The zero value, and Count 1, is the whole schedule: no sharding.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

// ParseShard parses "k/N" (0 <= k < N), as `bulkhead attack --segment k/N` takes it. Anything
// else is an error wrapping ErrInvalid that names the text.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("segment %q: want k/N, e.g. 0/2: %w", s, ErrInvalid)
	}
	sh := Shard{Index: ki, Count: ni}
	if err := sh.Validate(); err != nil || ni < 1 {
		if err == nil {
			err = fmt.Errorf("count 0: %w", ErrInvalid)
		}
		return Shard{}, fmt.Errorf("segment %q: %w", s, err)
	}
	return sh, nil
}

// Validate checks 0 <= Index < Count, or the zero value. An error wraps ErrInvalid.
func (s Shard) Validate() error {
	if s == (Shard{}) {
		return nil
	}
	if s.Count < 1 || s.Index < 0 || s.Index >= s.Count {
		return fmt.Errorf("shard %d of %d: want 0 <= index < count: %w", s.Index, s.Count, ErrInvalid)
	}
	return nil
}

// Sharded reports whether s is a proper part of the schedule (Count > 1).
func (s Shard) Sharded() bool { return s.Count > 1 }

// String returns "k/N" ("0/1" for the zero value).
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, max(s.Count, 1)) }

// Global returns the unsharded hit number of this shard's hit j: j*Count + Index.
func (s Shard) Global(j uint64) uint64 {
	if !s.Sharded() {
		return j
	}
	return j*uint64(s.Count) + uint64(s.Index)
}

// Striped is one shard's stripe of an unsharded Pacer: its hit j is the unsharded hit
// Shard.Global(j), due at the unsharded schedule's time for it, so Scheduled keeps the common
// time line (offsets from the common T0 every shard starts at). Use Stripe; a Striped is as safe
// for concurrent use as its Pacer.
type Striped struct {
	Pacer
	Shard Shard
}

var _ Pacer = Striped{}

// Stripe returns shard s's part of p: p itself when s is not sharded, a Striped otherwise. An
// invalid shard is an error wrapping ErrInvalid.
func Stripe(p Pacer, s Shard) (Pacer, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if !s.Sharded() {
		return p, nil
	}
	return Striped{Pacer: p, Shard: s}, nil
}

// Scheduled returns the unsharded schedule's time of hit Global(k).
func (p Striped) Scheduled(k uint64) time.Duration { return p.Pacer.Scheduled(p.Shard.Global(k)) }

// Hits counts this shard's hits due by elapsed: the unsharded hits g < Pacer.Hits(elapsed) with
// g mod Count == Index.
func (p Striped) Hits(elapsed time.Duration) uint64 {
	h := p.Pacer.Hits(elapsed)
	k, n := uint64(p.Shard.Index), uint64(p.Shard.Count)
	if h <= k {
		return 0
	}
	return (h-k-1)/n + 1
}

// Pace returns the wait until this shard's hit number hits is due (0 when it is already due). A
// hit that is never due (a piecewise schedule gone silent) waits a second without stopping, as
// PiecewisePacer.Pace does: the duration ends the attack.
func (p Striped) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due := p.Scheduled(hits)
	switch {
	case due >= time.Duration(1<<63-1)-time.Hour:
		return time.Second, false
	case due <= elapsed:
		return 0, false
	}
	return due - elapsed, false
}

// Rate returns the unsharded rate divided among the shards.
func (p Striped) Rate(elapsed time.Duration) float64 {
	return p.Pacer.Rate(elapsed) / float64(p.Shard.Count)
}

// Peak returns the unsharded peak rate divided among the shards (peakRate).
func (p Striped) Peak() float64 { return peakRate(p.Pacer) / float64(p.Shard.Count) }

// String describes the stripe, e.g. "Striped{1/2 of Poisson{50 hits/s, seed 7}}".
func (p Striped) String() string { return fmt.Sprintf("Striped{%v of %v}", p.Shard, p.Pacer) }
