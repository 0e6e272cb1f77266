package faults

import (
	"fmt"
	"math"
	"time"
)

// Direction is the stream of a connection a toxic acts on, as Toxiproxy names them.
type Direction string

// The two streams. The zero Direction means Downstream.
const (
	// Downstream is the data the dependency sends back (its response).
	Downstream Direction = "downstream"
	// Upstream is the data the caller sends (its request).
	Upstream Direction = "upstream"
)

// ParseDirection returns the Direction named s ("" is Downstream), or an error naming the two.
func ParseDirection(s string) (Direction, error) {
	switch Direction(s) {
	case "", Downstream:
		return Downstream, nil
	case Upstream:
		return Upstream, nil
	}
	return "", fmt.Errorf("unknown direction %q (known: %s, %s)", s, Downstream, Upstream)
}

// String returns the direction's name; the zero Direction is "downstream".
func (d Direction) String() string {
	if d == "" {
		return string(Downstream)
	}
	return string(d)
}

// Toxic is one Toxiproxy toxic, as data: what faults/proxy sends to Toxiproxy, in process or over
// its HTTP API.
type Toxic struct {
	// Type is Toxiproxy's toxic type: latency, bandwidth, slicer, slow_close, limit_data, timeout,
	// reset_peer.
	Type string
	// Stream is the direction the toxic acts on.
	Stream Direction
	// Toxicity is the probability, drawn once per connection, that the toxic acts on it; in
	// (0, 1].
	Toxicity float64
	// Attributes are the toxic's own attributes, in Toxiproxy's units (milliseconds, KB/s,
	// bytes, microseconds for the slicer's delay).
	Attributes map[string]int64
}

// Name is the toxic's name on its proxy: "bulkhead_<type>_<stream>". A second toxic of the same
// type and stream replaces the first.
func (t Toxic) Name() string { return "bulkhead_" + t.Type + "_" + t.Stream.String() }

// Validate reports whether t can be sent to Toxiproxy: a type, a known stream and a toxicity in
// (0, 1].
func (t Toxic) Validate() error {
	if t.Type == "" {
		return fmt.Errorf("toxic without a type")
	}
	if _, err := ParseDirection(string(t.Stream)); err != nil {
		return err
	}
	if !(t.Toxicity > 0 && t.Toxicity <= 1) {
		return fmt.Errorf("toxicity %v is not in (0, 1]", t.Toxicity)
	}
	return nil
}

// Effect is what a fault installs, as data. Exactly one part is set.
type Effect struct {
	// Toxic, when not nil, is added to the dependency's proxy.
	Toxic *Toxic
	// ProxyDown disables the dependency's proxy: its listener closes (connection refused) and
	// its live connections are closed.
	ProxyDown bool
	// Status, when not 0, makes the dependency itself answer every request with this HTTP status
	// at once: a fault Toxiproxy, a TCP proxy, cannot make.
	Status int
}

// OnProxy reports whether the effect is installed on the dependency's proxy.
func (e Effect) OnProxy() bool { return e.Toxic != nil || e.ProxyDown }

// toxic returns the Effect of one toxic of the given type and attributes.
func toxic(typ string, attrs map[string]int64) Effect {
	return Effect{Toxic: &Toxic{Type: typ, Attributes: attrs}}
}

// Symptom is how a fault shows to a caller that waits at most a client timeout, when it acts on
// every connection. The report uses it to find the phases its predictions compare; the zero
// Symptom claims nothing.
type Symptom struct {
	// Delay is the time added before each answer, 0 when none or not known in advance (it
	// depends on the size of the answer, say).
	Delay time.Duration
	// Hang: no answer comes; the caller's own timeout ends each call.
	Hang bool
	// FastError: each call fails at once (reset, refused, an error status).
	FastError bool
}

// millis rounds d to whole milliseconds, Toxiproxy's unit for most attributes.
func millis(d time.Duration) int64 { return d.Round(time.Millisecond).Milliseconds() }

// micros rounds d to whole microseconds, the unit of the slicer's delay.
func micros(d time.Duration) int64 { return d.Round(time.Microsecond).Microseconds() }

// finite reports whether x is a number (not NaN or ±Inf).
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
