package loadgen

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Shard
		ok   bool
	}{
		{"0/2", Shard{0, 2}, true},
		{" 1 / 2 ", Shard{1, 2}, true},
		{"0/1", Shard{0, 1}, true},
		{"2/2", Shard{}, false},  // index out of range
		{"-1/2", Shard{}, false}, // negative
		{"0/0", Shard{}, false},
		{"1", Shard{}, false},
		{"a/b", Shard{}, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseShard(c.in)
			if c.ok != (err == nil) || got != c.want {
				t.Fatalf("ParseShard(%q) = %v, %v; want %v, ok %v", c.in, got, err, c.want, c.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
}

// The shards of a schedule are its stripes: every unsharded hit g is shard g mod N's hit g div N,
// due at the same instant, and the shards' due counts add up to the unsharded one at every
// elapsed time, for every kind of pacer.
func TestStripesPartitionTheSchedule(t *testing.T) {
	poisson, err := NewPoissonPacer(4000, 7)
	if err != nil {
		t.Fatal(err)
	}
	piece, err := NewPiecewisePacer([]Segment{{0, 1000}, {200 * time.Millisecond, 0}, {400 * time.Millisecond, 3000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    Pacer
	}{
		{"constant", ConstantPacer{}},
		{"constant shifted", Shifted{Pacer: mustPacer(t, 3000, ArrivalsConstant, 0), Lead: 100 * time.Microsecond}},
		{"piecewise (per-phase rates, a silent phase)", piece},
		{"poisson", poisson},
	} {
		if c.name == "constant" {
			c.p = mustPacer(t, 4000, ArrivalsConstant, 0)
		}
		for _, n := range []int{2, 3} {
			t.Run(c.name+"/"+strconv.Itoa(n), func(t *testing.T) {
				shards := make([]Pacer, n)
				for k := range shards {
					if shards[k], err = Stripe(c.p, Shard{k, n}); err != nil {
						t.Fatal(err)
					}
				}
				const hits = 3000
				for g := uint64(0); g < hits; g++ {
					k, j := g%uint64(n), g/uint64(n)
					if got, want := shards[k].Scheduled(j), c.p.Scheduled(g); got != want {
						t.Fatalf("hit %d: shard %d's hit %d due at %v, unsharded at %v", g, k, j, got, want)
					}
					if got := (Shard{int(k), n}).Global(j); got != g {
						t.Fatalf("Global(%d) of shard %d = %d, want %d", j, k, got, g)
					}
				}
				for _, e := range []time.Duration{-time.Millisecond, 0, 250 * time.Microsecond, 300 * time.Millisecond, 500*time.Millisecond + 333*time.Microsecond, time.Second} {
					var sum uint64
					for _, s := range shards {
						sum += s.Hits(e)
					}
					if want := c.p.Hits(e); sum != want {
						t.Fatalf("at %v the shards have %d hits due, the unsharded schedule %d", e, sum, want)
					}
				}
				for k, s := range shards {
					if got, want := s.Rate(0), c.p.Rate(0)/float64(n); got != want {
						t.Fatalf("shard %d rate %v, want %v", k, got, want)
					}
				}
			})
		}
	}
}

func TestStripeOfOneShardIsThePacerItself(t *testing.T) {
	p := mustPacer(t, 100, ArrivalsConstant, 0)
	for _, s := range []Shard{{}, {0, 1}} {
		got, err := Stripe(p, s)
		if err != nil || got != Pacer(p) {
			t.Fatalf("Stripe(p, %v) = %v, %v; want p itself", s, got, err)
		}
	}
	if _, err := Stripe(p, Shard{3, 2}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("Stripe with shard 3/2: %v, want ErrInvalid", err)
	}
}

// Two shards started at one common T0 send, between them, exactly the unsharded run's hits: the
// union of their results has a gapless global Seq, each result's scheduled offset is the
// unsharded schedule's for its Seq, and T0 is the instant given to both.
func TestShardsAtACommonStartMergeIntoTheUnshardedRun(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(outcome.HeaderOutcome, outcome.OK)
	}))
	t.Cleanup(srv.Close)
	whole := mustPacer(t, 400, ArrivalsPoisson, 3)
	const d = 500 * time.Millisecond
	t0 := time.Now().Add(300 * time.Millisecond).Truncate(time.Microsecond)

	var bufs [2]bytes.Buffer
	runs := make([]*Run, 2)
	for k := range runs {
		p, err := Stripe(whole, Shard{k, 2})
		if err != nil {
			t.Fatal(err)
		}
		runs[k], err = Start(context.Background(), []Attack{{Name: "a", URL: srv.URL + "/a", Pacer: p, Out: &bufs[k]}}, d, WithStartAt(t0))
		if err != nil {
			t.Fatal(err)
		}
	}
	var merged []byte
	var scheduled uint64
	for k, r := range runs {
		checks, err := r.Wait()
		if err != nil {
			t.Fatal(err)
		}
		if !r.T0().Equal(t0) {
			t.Fatalf("shard %d: T0 %v, want the common %v", k, r.T0(), t0)
		}
		if c := checks[0]; !c.Valid || c.StartSkew < 0 || c.StartSkew > MaxStartSkew {
			t.Fatalf("shard %d: check %+v", k, c)
		}
		scheduled += checks[0].Scheduled
		merged = append(merged, bufs[k].Bytes()...)
	}
	results := decodeAll(t, "merged shards", merged) // fails on a gap in Seq
	if got, want := uint64(len(results)), whole.Hits(d); got != want {
		t.Fatalf("the shards sent %d results, the unsharded schedule has %d", got, want)
	}
	if scheduled != whole.Hits(d) {
		t.Fatalf("the shards scheduled %d hits between them, the unsharded schedule %d", scheduled, whole.Hits(d))
	}
	for _, r := range results {
		sched, err := strconv.ParseInt(r.Headers.Get(outcome.HeaderScheduled), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if want := whole.Scheduled(r.Seq); time.Duration(sched) != want {
			t.Fatalf("Seq %d scheduled at %v, unsharded schedule %v", r.Seq, time.Duration(sched), want)
		}
		if r.Timestamp.Before(t0) {
			t.Fatalf("Seq %d sent at %v, before the common T0 %v", r.Seq, r.Timestamp, t0)
		}
	}
}

// A shard that reaches the common start late is not silently re-based: T0 stays the common
// instant and its check is invalid, naming how late it started.
func TestALateStartAtIsInvalid(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(srv.Close)
	t0 := time.Now().Add(-2 * MaxStartSkew)
	var buf bytes.Buffer
	r, err := Start(context.Background(), []Attack{{Name: "a", URL: srv.URL, Pacer: mustPacer(t, 100, ArrivalsConstant, 0), Out: &buf}}, 100*time.Millisecond, WithStartAt(t0))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := r.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if c := checks[0]; c.Valid || c.StartSkew < 2*MaxStartSkew || !containsPrefix(c.Reasons, "attack started") {
		t.Fatalf("late shard: valid %v, skew %v, reasons %q; want invalid for starting late", c.Valid, c.StartSkew, c.Reasons)
	}
	if !r.T0().Equal(t0) {
		t.Fatalf("T0 %v, want the common %v", r.T0(), t0)
	}
}
