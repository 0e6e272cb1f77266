package faults

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in      string
		want    Type
		wantErr error
	}{
		{"latency", TypeLatency, nil},
		{"reset", TypeReset, nil},
		{"timeout", TypeTimeout, nil},
		{"down", TypeDown, nil},
		{"bandwidth", TypeBandwidth, nil},
		{"http-error", TypeHTTPError, nil}, // accepted here, refused by Apply with ErrNotTCP
		{"", "", ErrUnknownType},
		{"Latency", "", ErrUnknownType}, // case matters, as in the scenario files
		{"reset_peer", "", ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseType(tt.in)
			if !errors.Is(err, tt.wantErr) || got != tt.want {
				t.Fatalf("ParseType(%q) = %q, %v; want %q, %v", tt.in, got, err, tt.want, tt.wantErr)
			}
			if err == nil && got.String() != tt.in {
				t.Errorf("String() = %q, want %q", got.String(), tt.in)
			}
		})
	}
}

func TestTypeTCP(t *testing.T) {
	for _, typ := range Types {
		if got, want := typ.TCP(), typ != TypeHTTPError; got != want {
			t.Errorf("%s.TCP() = %v, want %v", typ, got, want)
		}
	}
}

func TestFaultValidate(t *testing.T) {
	tests := []struct {
		name    string
		f       Fault
		wantErr error
	}{
		{"latency", Fault{Type: TypeLatency, Latency: 450 * time.Millisecond}, nil},
		{"latency with jitter", Fault{Type: TypeLatency, Latency: time.Second, Jitter: 100 * time.Millisecond}, nil},
		{"latency rounds up to 1ms", Fault{Type: TypeLatency, Latency: 600 * time.Microsecond}, nil},
		{"latency zero", Fault{Type: TypeLatency}, ErrInvalidFault},
		{"latency below 1ms", Fault{Type: TypeLatency, Latency: 400 * time.Microsecond}, ErrInvalidFault},
		{"negative jitter", Fault{Type: TypeLatency, Latency: time.Second, Jitter: -1}, ErrInvalidFault},
		{"bandwidth", Fault{Type: TypeBandwidth, RateKBps: 10}, nil},
		{"bandwidth zero rate", Fault{Type: TypeBandwidth}, ErrInvalidFault},
		{"reset ignores amounts", Fault{Type: TypeReset, Latency: -1}, nil},
		{"down", Fault{Type: TypeDown}, nil},
		{"timeout", Fault{Type: TypeTimeout}, nil},
		{"http-error is valid", Fault{Type: TypeHTTPError}, nil},
		{"no type", Fault{}, ErrUnknownType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.f.Validate(); !errors.Is(err, tt.wantErr) {
				t.Fatalf("Validate() = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

// TestToxicFor is the mapping from faults to Toxiproxy toxics, as specified in the package doc.
func TestToxicFor(t *testing.T) {
	tests := []struct {
		f      Fault
		typ    string
		attrs  map[string]any
		wantOK bool
	}{
		{Fault{Type: TypeLatency, Latency: 450 * time.Millisecond, Jitter: 20 * time.Millisecond}, "latency",
			map[string]any{"latency": int64(450), "jitter": int64(20)}, true},
		{Fault{Type: TypeReset}, "reset_peer", map[string]any{"timeout": 0}, true}, // RST at the first byte
		{Fault{Type: TypeTimeout}, "timeout", map[string]any{"timeout": 0}, true},  // hang forever
		{Fault{Type: TypeBandwidth, RateKBps: 64}, "bandwidth", map[string]any{"rate": 64}, true},
		{Fault{Type: TypeDown}, "", nil, false}, // a disabled proxy, not a toxic
		{Fault{Type: TypeHTTPError}, "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.f.String(), func(t *testing.T) {
			got, ok := toxicFor(tt.f)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if got.Type != tt.typ || !reflect.DeepEqual(got.Attributes, tt.attrs) {
				t.Errorf("toxic = %s %v, want %s %v", got.Type, got.Attributes, tt.typ, tt.attrs)
			}
			if got.Stream != "downstream" || got.Toxicity != 1.0 {
				t.Errorf("stream %q toxicity %v, want downstream 1.0", got.Stream, got.Toxicity)
			}
			if !strings.HasPrefix(got.Name, "bulkhead_") {
				t.Errorf("name %q does not mark the toxic as ours", got.Name)
			}
		})
	}
}

func TestModuleVersion(t *testing.T) {
	if v := ModuleVersion(); !strings.HasPrefix(v, "v2.") {
		t.Errorf("ModuleVersion() = %q, want a v2 module version", v)
	}
}
