package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// decodeSweep runs the `sweep:` block decoder on text and returns the block and the problems.
func decodeSweep(t *testing.T, text string) (SweepSpec, string) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	d := &decoder{problems: problems{file: "s.yaml", lines: map[string]int{}}, resolved: map[string]string{}}
	var sp SweepSpec
	d.decodeStruct(doc.Content[0], "sweep", reflect.ValueOf(&sp).Elem(), false)
	var msgs []string
	for _, e := range d.list {
		msgs = append(msgs, e.Error())
	}
	return sp, strings.Join(msgs, "\n")
}

func TestSweepSpec(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		want    SweepSpec
		problem string // "" when none
	}{
		{"every part", "{sizes: [4, 10], fractions: [0.5, 1], rates: [20/s, 50], phase_duration: 2s}",
			SweepSpec{Sizes: []int{4, 10}, Fractions: []float64{0.5, 1}, Rates: []float64{20, 50}, PhaseDuration: 2 * time.Second}, ""},
		{"parts left out stay zero", "{rates: [10/s]}", SweepSpec{Rates: []float64{10}}, ""},
		{"size below 1", "{sizes: [0]}", SweepSpec{}, "sweep.sizes[0]: a pool size must be >= 1, got 0"},
		{"fraction past 2", "{fractions: [2.5]}", SweepSpec{}, "sweep.fractions[0]: a fault delay fraction must be in (0, 2], got 2.5"},
		{"rate not a rate", "{rates: [fast]}", SweepSpec{}, "sweep.rates[0]"},
		{"zero phase duration", "{phase_duration: 0s}", SweepSpec{}, "sweep.phase_duration: must be > 0"},
		{"unknown key", "{size: [4]}", SweepSpec{}, `unknown field "size"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := decodeSweep(t, tt.text)
			if tt.problem == "" {
				if problems != "" || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("got %+v, problems %q; want %+v", got, problems, tt.want)
				}
				return
			}
			if !strings.Contains(problems, tt.problem) {
				t.Errorf("problems %q, want one containing %q", problems, tt.problem)
			}
		})
	}
}

// A scenario file's sweep: block is loaded with the scenario; a file without one has none.
func TestSweepBlockInScenario(t *testing.T) {
	base, err := Open("smoke")
	if err != nil {
		t.Fatal(err)
	}
	if base.Sweep != nil {
		t.Errorf("smoke has no sweep block, got %+v", base.Sweep)
	}
	text := string(base.Raw) + "sweep:\n  sizes: [2, 6]\n  rates: [10/s]\n  phase_duration: 1s\n"
	sc, err := Parse("with-sweep.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := &SweepSpec{Sizes: []int{2, 6}, Rates: []float64{10}, PhaseDuration: time.Second}
	if !reflect.DeepEqual(sc.Sweep, want) {
		t.Errorf("sweep = %+v, want %+v", sc.Sweep, want)
	}
	if _, err := Parse("bad.yaml", []byte(string(base.Raw)+"sweep:\n  sizes: [0]\n")); err == nil || !strings.Contains(err.Error(), "sweep.sizes[0]") {
		t.Errorf("err = %v, want one naming sweep.sizes[0]", err)
	}
}
