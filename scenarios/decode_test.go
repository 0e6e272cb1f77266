package scenarios

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// tagged is a struct of every form decode.go reads from tags, for TestStructFields and
// TestDecodeThroughTags.
type tagged struct {
	Inner   `yaml:",inline"`
	Name    string             `yaml:"name" scenario:"required"`
	Filled  string             `yaml:"filled,omitempty" scenario:"-"`
	Hidden  int                `yaml:"-"`
	Size    int                `yaml:"-" scenario:"key=size"`
	Every   time.Duration      `yaml:"every" scenario:"nonzero,default=100ms"`
	Fixed   time.Duration      `yaml:"fixed" scenario:"absolute"`
	Rate    float64            `yaml:"rate" scenario:"rate"`
	Rates   map[string]float64 `yaml:"rates" scenario:"rate,zero"`
	Opt     *bool              `yaml:"opt"`
	Sub     *tagged            `yaml:"sub" scenario:"partial"`
	private int
}

type Inner struct {
	Kind string `yaml:"kind"`
}

func TestStructFields(t *testing.T) {
	var keys []string
	for _, f := range structFields(reflect.TypeFor[tagged]()) {
		keys = append(keys, f.key)
	}
	want := "kind name size every fixed rate rates opt sub"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("keys %q, want %q (inline in place, - and yaml:\"-\" left out, key= taken)", got, want)
	}
	type bad struct {
		X int `yaml:"x" scenario:"requird"`
	}
	defer func() {
		if recover() == nil {
			t.Error("an unknown scenario tag option did not panic")
		}
	}()
	structFields(reflect.TypeFor[bad]())
}

// Each tag option changes what the loader accepts, and says so at the key's line.
func TestDecodeThroughTags(t *testing.T) {
	tests := []struct {
		name, text string
		want       tagged
		problem    string // "" for none
	}{
		{"every form", "{kind: k, name: n, size: 3, every: 1.5x, fixed: 2s, rate: 20/s, rates: {/a: 0, /b: 5/s}, opt: false, sub: {kind: s}}",
			tagged{Inner: Inner{Kind: "k"}, Name: "n", Size: 3, Every: 750 * time.Millisecond, Fixed: 2 * time.Second, Rate: 20,
				Rates: map[string]float64{"/a": 0, "/b": 5}, Opt: new(false), Sub: &tagged{Inner: Inner{Kind: "s"}}}, ""},
		{"required", "{kind: k}", tagged{}, `x.yaml:1: t.name: missing required field "name"`},
		{"required is optional under partial", "{name: n, sub: {}}", tagged{}, ""},
		{"a key left to the runner", "{name: n, filled: x}", tagged{}, `t.filled: unknown field "filled" (known: kind, name, size, every, fixed, rate, rates, opt, sub)`},
		{"nonzero", "{name: n, every: 0s}", tagged{}, "t.every: must be > 0 when set (omit it for 100ms), got 0"},
		{"absolute", "{name: n, fixed: 0.5x}", tagged{}, `t.fixed: cannot be written relative to the timeout`},
		{"a rate is not zero", "{name: n, rate: 0}", tagged{}, `t.rate: rate "0"`},
		{"a duplicate map key", "{name: n, rates: {/a: 1, /a: 2}}", tagged{}, `t.rates./a: duplicate key "/a"`},
		{"a pointer to a struct is a mapping", "{name: n, sub: ~}", tagged{}, "t.sub: expected a mapping (use {} for all defaults)"},
		{"a bool", "{name: n, opt: maybe}", tagged{}, `t.opt: expected true or false, got "maybe"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte(tt.text), &doc); err != nil {
				t.Fatal(err)
			}
			d := &decoder{problems: problems{file: "x.yaml", lines: map[string]int{}}, resolved: map[string]string{}, timeout: 500 * time.Millisecond, timeoutOK: true}
			var got tagged
			d.decodeStruct(doc.Content[0], "t", reflect.ValueOf(&got).Elem(), false)
			d.resolveRelatives()
			var msgs []string
			for _, e := range d.list {
				msgs = append(msgs, e.Error())
			}
			problems := strings.Join(msgs, "\n")
			switch {
			case tt.problem == "" && problems != "":
				t.Errorf("problems: %s", problems)
			case tt.problem == "" && tt.want.Name != "" && !reflect.DeepEqual(got, tt.want):
				t.Errorf("got %+v\nwant %+v", got, tt.want)
			case tt.problem != "" && !strings.Contains(problems, tt.problem):
				t.Errorf("problems %q, want one containing %q", problems, tt.problem)
			}
		})
	}
}
