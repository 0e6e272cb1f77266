package loadgen

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// A pacer described, sent through JSON and built again schedules every hit at the very same
// offset and counts the same hits due at any time: a load generator in another process sends
// exactly when the runner planned.
func TestPacerSpecRoundTrip(t *testing.T) {
	constant := func(rate float64) Pacer {
		p, err := NewConstantPacer(rate)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	poisson := func(rate float64, seed int64) Pacer {
		p, err := NewPoissonPacer(rate, seed)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	burst := mustPiecewise(t, Segment{0, 20}, Segment{5 * time.Second, 200}, Segment{8 * time.Second, 0}, Segment{9 * time.Second, 7.5})
	tests := []struct {
		name  string
		pacer Pacer
	}{
		{"constant, whole rate", constant(50)},
		{"constant, fractional rate", constant(0.3)},
		{"constant, high rate", constant(8000)},
		{"constant shifted by an arrival offset", Shifted{Pacer: constant(50), Lead: 17_639_320 * time.Nanosecond}},
		{"poisson", poisson(250, 1104)},
		{"poisson, sparse", poisson(1, -3)},
		{"piecewise with a silent segment", burst},
		{"piecewise shifted", Shifted{Pacer: burst, Lead: 3 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, err := DescribePacer(tt.pacer)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(spec)
			if err != nil {
				t.Fatal(err)
			}
			var back PacerSpec
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			got, err := back.Pacer()
			if err != nil {
				t.Fatalf("%s: %v", b, err)
			}
			for k := uint64(0); k < 5000; k++ {
				if w, g := tt.pacer.Scheduled(k), got.Scheduled(k); w != g {
					t.Fatalf("Scheduled(%d) = %v after the round trip, %v before (%s)", k, g, w, b)
				}
			}
			for at := -time.Millisecond; at < 12*time.Second; at += 997 * time.Microsecond {
				if w, g := tt.pacer.Hits(at), got.Hits(at); w != g {
					t.Fatalf("Hits(%v) = %d after the round trip, %d before", at, g, w)
				}
			}
			if w, g := peakRate(tt.pacer), peakRate(got); w != g {
				t.Errorf("peak rate %g after the round trip, %g before", g, w)
			}
		})
	}
}

type otherPacer struct{ ConstantPacer }

// Only pacers whose schedule is data can be described; a spec that describes no valid pacer
// names the field and reason.
func TestPacerSpecRejects(t *testing.T) {
	if _, err := DescribePacer(otherPacer{}); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "otherPacer") {
		t.Errorf("DescribePacer(otherPacer) = %v; want ErrInvalid naming the type", err)
	}
	tests := []struct {
		name string
		spec PacerSpec
		want string
	}{
		{"unknown kind", PacerSpec{Kind: "burst"}, `kind "burst"`},
		{"no kind", PacerSpec{}, `kind ""`},
		{"constant without freq", PacerSpec{Kind: PacerConstant, Per: time.Second}, "freq 0"},
		{"poisson without rate", PacerSpec{Kind: PacerPoisson}, "rate"},
		{"piecewise not from 0", PacerSpec{Kind: PacerPiecewise, Segments: []SegmentSpec{{Start: time.Second, Rate: 1}}}, "segments"},
		{"negative lead", PacerSpec{Kind: PacerConstant, Freq: 1, Per: time.Second, Lead: -1}, "lead_ns"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.spec.Pacer()
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Pacer() = %v; want ErrInvalid mentioning %q", err, tt.want)
			}
		})
	}
}

// Settings carry every option but the classifier, whatever order they were given in, and give
// them back.
func TestSettingsRoundTrip(t *testing.T) {
	s := Resolve(WithLagLimit(10*time.Millisecond), WithTimeout(2*time.Second), WithKeepAlive(false), WithConnections(7), WithMaxWorkers(9), WithoutWarm())
	want := Settings{Timeout: 2 * time.Second, MaxWorkers: 9, Connections: 7, LagLimit: 10 * time.Millisecond, KeepAlive: false, NoWarm: true}
	if s != want {
		t.Fatalf("Resolve = %+v; want %+v", s, want)
	}
	if again := Resolve(s.Opts()...); again != s {
		t.Errorf("Resolve(Opts()) = %+v; want %+v", again, s)
	}
	if d := Resolve(); d != (Settings{DefaultTimeout, DefaultMaxWorkers, DefaultConnections, DefaultLagLimit, DefaultKeepAlive, false}) {
		t.Errorf("Resolve() = %+v; want the defaults", d)
	}
}
