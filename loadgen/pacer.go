package loadgen

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// ErrInvalid is wrapped by every error about an argument that cannot run: a bad rate, an unknown
// arrival process, an attack without a URL or writer, a non-positive duration or option.
var ErrInvalid = errors.New("invalid load")

// MaxRate is the highest rate (requests per second) a Pacer accepts: one request per nanosecond.
const MaxRate = 1e9

// Arrivals names the arrival process of an attack.
type Arrivals string

const (
	// ArrivalsConstant sends at exactly even intervals (vegeta's ConstantPacer).
	ArrivalsConstant Arrivals = "constant"
	// ArrivalsPoisson sends with exponentially distributed gaps of the same mean, from a seeded
	// source (PoissonPacer).
	ArrivalsPoisson Arrivals = "poisson"
)

// String returns the arrival process's name.
func (a Arrivals) String() string { return string(a) }

// ParseArrivals returns the Arrivals named by s ("constant" or "poisson", any case, surrounding
// space ignored). The empty string means constant. Any other text is an error wrapping ErrInvalid
// that names the text.
func ParseArrivals(s string) (Arrivals, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", string(ArrivalsConstant):
		return ArrivalsConstant, nil
	case string(ArrivalsPoisson):
		return ArrivalsPoisson, nil
	}
	return "", fmt.Errorf("arrivals %q: want constant or poisson: %w", s, ErrInvalid)
}

// ParseRate parses a rate written as "N/unit" ("50/s", "50/1s", "3000/1m", "5/100ms") or a plain
// number of requests per second ("50", "0.5") and returns requests per second. N may be
// fractional. An error wraps ErrInvalid and names the bad text; rates that are not finite, not
// positive or above MaxRate are errors.
func ParseRate(s string) (float64, error) {
	text := strings.TrimSpace(s)
	num, per, hasPer := strings.Cut(text, "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %q is not a number: %w", s, num, ErrInvalid)
	}
	unit := time.Second
	if hasPer {
		per = strings.TrimSpace(per)
		if per == "" {
			return 0, fmt.Errorf("rate %q: missing time unit after '/': %w", s, ErrInvalid)
		}
		if per[0] < '0' || per[0] > '9' {
			per = "1" + per
		}
		unit, err = time.ParseDuration(per)
		if err != nil || unit <= 0 {
			return 0, fmt.Errorf("rate %q: %q is not a positive duration: %w", s, per, ErrInvalid)
		}
	}
	rate := n / unit.Seconds()
	if err := checkRate(rate); err != nil {
		return 0, fmt.Errorf("rate %q: %w", s, err)
	}
	return rate, nil
}

func checkRate(rate float64) error {
	if math.IsNaN(rate) || math.IsInf(rate, 0) || rate <= 0 || rate > MaxRate {
		return fmt.Errorf("%v requests/s is not in (0, %g]: %w", rate, float64(MaxRate), ErrInvalid)
	}
	return nil
}

// Pacer is a vegeta.Pacer whose schedule can be read back: a pure function of (elapsed, hits),
// so the scheduled send time of every hit is known after the fact.
type Pacer interface {
	vegeta.Pacer
	// Scheduled returns the offset from the attack start at which hit k (0-based, in send order,
	// vegeta's Result.Seq) is due. It is non-decreasing in k.
	Scheduled(k uint64) time.Duration
	// Hits returns the number of hits due by elapsed: the count of k with Scheduled(k) <= elapsed.
	Hits(elapsed time.Duration) uint64
}

// NewPacer returns a Pacer sending rate requests per second on average: a ConstantPacer for
// ArrivalsConstant, a PoissonPacer seeded with seed for ArrivalsPoisson (seed is ignored for
// constant arrivals). An invalid rate or arrival process is an error wrapping ErrInvalid.
func NewPacer(rate float64, arrivals Arrivals, seed int64) (Pacer, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	switch arrivals {
	case ArrivalsConstant, "":
		return NewConstantPacer(rate)
	case ArrivalsPoisson:
		return NewPoissonPacer(rate, seed)
	}
	return nil, fmt.Errorf("arrivals %q: want constant or poisson: %w", string(arrivals), ErrInvalid)
}

// ConstantPacer is vegeta's ConstantPacer with its schedule exposed: hit k is due at
// (k+1)·Per/Freq (integer nanoseconds, exactly as vegeta computes it), so the first hit goes out
// one interval after the start. Freq and Per must be positive.
type ConstantPacer struct {
	vegeta.ConstantPacer
}

var _ Pacer = ConstantPacer{}

// NewConstantPacer returns a ConstantPacer for rate requests per second: Freq = rate per second
// when the rate is a whole number, otherwise one hit per round(1s/rate). An invalid rate is an
// error wrapping ErrInvalid.
func NewConstantPacer(rate float64) (ConstantPacer, error) {
	if err := checkRate(rate); err != nil {
		return ConstantPacer{}, err
	}
	if rate == math.Trunc(rate) {
		return ConstantPacer{vegeta.ConstantPacer{Freq: int(rate), Per: time.Second}}, nil
	}
	per := time.Duration(math.Round(float64(time.Second) / rate))
	return ConstantPacer{vegeta.ConstantPacer{Freq: 1, Per: per}}, nil
}

// interval is vegeta's: integer nanoseconds between hits (0 for an unusable pacer).
func (p ConstantPacer) interval() time.Duration {
	if p.Freq <= 0 || p.Per <= 0 {
		return 0
	}
	return time.Duration(p.Per.Nanoseconds() / int64(p.Freq))
}

// Scheduled returns (k+1) intervals. It returns 0 for a pacer without a positive Freq and Per.
func (p ConstantPacer) Scheduled(k uint64) time.Duration {
	return time.Duration(k+1) * p.interval()
}

// Hits returns floor(elapsed/interval), 0 for negative elapsed, and 0 for a pacer without a
// positive Freq and Per.
func (p ConstantPacer) Hits(elapsed time.Duration) uint64 {
	iv := p.interval()
	if iv <= 0 || elapsed < 0 {
		return 0
	}
	return uint64(elapsed / iv)
}

// PoissonPacer sends at the arrival times of a Poisson process of the given rate: gaps are
// independent exponentials with mean 1/rate, drawn in order from a PCG source seeded with the
// seed, so the k-th arrival time depends only on (rate, seed, k). Arrival k is at the sum of the
// first k+1 gaps. Arrivals are generated lazily; a checkpoint of the source every 1024 arrivals
// keeps random access cheap while memory stays at a few bytes per thousand arrivals.
//
// Use NewPoissonPacer; the zero value is not usable. A PoissonPacer is safe for concurrent use.
type PoissonPacer struct {
	rate float64
	seed int64
	// scale turns a unit exponential into nanoseconds.
	scale float64

	mu          sync.Mutex
	checkpoints []poissonState // checkpoints[i].n == i*checkpointEvery
	cursors     [2]poissonState
}

var _ Pacer = (*PoissonPacer)(nil)

const checkpointEvery = 1024

// poissonState is the generator positioned before arrival n: t is the time of arrival n-1 (0
// when n == 0), src the source before drawing gap n.
type poissonState struct {
	n   uint64
	t   float64
	src rand.PCG
}

// NewPoissonPacer returns a PoissonPacer with mean rate requests per second, seeded with seed.
// An invalid rate is an error wrapping ErrInvalid.
func NewPoissonPacer(rate float64, seed int64) (*PoissonPacer, error) {
	if err := checkRate(rate); err != nil {
		return nil, err
	}
	start := poissonState{src: *rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)}
	return &PoissonPacer{
		rate:        rate,
		seed:        seed,
		scale:       float64(time.Second) / rate,
		checkpoints: []poissonState{start},
		cursors:     [2]poissonState{start, start},
	}, nil
}

// String describes the pacer, e.g. "Poisson{50 hits/s, seed 7}".
func (p *PoissonPacer) String() string {
	return fmt.Sprintf("Poisson{%g hits/s, seed %d}", p.rate, p.seed)
}

// Rate returns the mean rate in hits per second, whatever the elapsed time.
func (p *PoissonPacer) Rate(time.Duration) float64 { return p.rate }

// Pace returns the wait until hit number hits is due (0 when it is already due). It never stops
// the attack.
func (p *PoissonPacer) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	due := p.Scheduled(hits)
	if due <= elapsed {
		return 0, false
	}
	return due - elapsed, false
}

// Scheduled returns the time of arrival k.
func (p *PoissonPacer) Scheduled(k uint64) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return time.Duration(p.advanceTo(k + 1).t)
}

// Hits returns the number of arrivals at or before elapsed.
func (p *PoissonPacer) Hits(elapsed time.Duration) uint64 {
	if elapsed < 0 {
		return 0
	}
	// Compare as Scheduled reports (truncated to whole nanoseconds), so both agree exactly.
	p.mu.Lock()
	defer p.mu.Unlock()
	// Extend the checkpoints until one lies past elapsed (the cursors stay where they are).
	for s := p.checkpoints[len(p.checkpoints)-1]; time.Duration(s.t) <= elapsed; {
		p.stepRecord(&s)
	}
	// The last checkpoint whose previous arrival is due by elapsed: arrivals 0..n-1 are due.
	i := sort.Search(len(p.checkpoints), func(i int) bool { return time.Duration(p.checkpoints[i].t) > elapsed }) - 1
	s := p.checkpoints[i]
	for {
		next := s
		p.step(&next)
		if time.Duration(next.t) > elapsed {
			return s.n
		}
		s = next
	}
}

// step draws the next gap: s moves from before arrival n to before arrival n+1.
func (p *PoissonPacer) step(s *poissonState) {
	gap := rand.New(&s.src).ExpFloat64()
	// The explicit conversion forbids fusing into an FMA, so the sum is the same on every platform.
	s.t += float64(gap * p.scale)
	s.n++
}

// advanceTo returns the generator positioned before arrival n (so its t is arrival n-1's time),
// starting from the nearest cursor or checkpoint at or below n, recording checkpoints on the way
// and leaving the result in a cursor. The caller holds p.mu.
func (p *PoissonPacer) advanceTo(n uint64) poissonState {
	// Start from the nearest known state at or below n: the checkpoint below n, or a cursor if one
	// is nearer. Sequential callers (the attack's Pace, the result writer) each keep a cursor near
	// their position, so most calls take one step.
	s := p.checkpoints[min(n/checkpointEvery, uint64(len(p.checkpoints)-1))]
	slot := -1
	for i, c := range p.cursors {
		if c.n <= n && c.n > s.n {
			s, slot = c, i
		}
	}
	if slot < 0 {
		// Started from a checkpoint: replace the cursor that is behind, keeping the furthest one.
		slot = 0
		if p.cursors[1].n < p.cursors[0].n {
			slot = 1
		}
	}
	for s.n < n {
		p.stepRecord(&s)
	}
	p.cursors[slot] = s
	return s
}

// stepRecord steps s and records a checkpoint when s reaches a new multiple of checkpointEvery.
// The caller holds p.mu.
func (p *PoissonPacer) stepRecord(s *poissonState) {
	p.step(s)
	if s.n%checkpointEvery == 0 && s.n/checkpointEvery == uint64(len(p.checkpoints)) {
		p.checkpoints = append(p.checkpoints, *s)
	}
}
