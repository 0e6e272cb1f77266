package attack

import (
	"encoding/json"
	"regexp"
	"testing"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// snake matches a snake_case key.
var snake = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// keys collects every object key of a decoded JSON value that is not snake_case; a map keyed by
// data (status codes, classes) is named in skip and not looked into.
func badKeys(v any, path string, skip map[string]bool, bad *[]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if !snake.MatchString(k) {
				*bad = append(*bad, path+"."+k)
			}
			if !skip[k] {
				badKeys(c, path+"."+k, skip, bad)
			}
		}
	case []any:
		for _, c := range x {
			badKeys(c, path+"[]", skip, bad)
		}
	}
}

// Every key of every event is snake_case, as everywhere else in the run folder, and the started
// event says its schema version.
func TestEventKeysAreSnakeCase(t *testing.T) {
	check := loadgen.Check{Name: "/a", Scheduled: 10, Sent: 10, LagP99: time.Millisecond, Valid: true,
		Codes: map[uint16]uint64{200: 10}, Classes: map[string]uint64{"ok": 10}, Reasons: []string{"x"}}
	events := []Event{
		{Type: EventStarted, SchemaVersion: EventSchemaVersion, T0: time.Unix(1, 0), PID: 1, Segment: loadgen.Shard{Index: 1, Count: 2},
			Clock: &ClockOffset{Reference: "http://x", Samples: 3}},
		{Type: EventProgress, Progress: []loadgen.Progress{{Name: "/a", Sent: 1, Done: 1, Window: 50, ErrorRate: 0.1, P99: time.Millisecond}}},
		{Type: EventDone, Checks: []loadgen.Check{check}, Pooled: &check, PeakRSS: 1},
	}
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		var bad []string
		badKeys(v, e.Type, map[string]bool{"codes": true, "classes": true}, &bad)
		if len(bad) > 0 {
			t.Errorf("%s event: keys not snake_case: %v\n%s", e.Type, bad, b)
		}
	}
	t.Run("the check catches a Go field name", func(t *testing.T) {
		var bad []string
		badKeys(map[string]any{"checks": []any{map[string]any{"LagP99": 1}}}, "done", nil, &bad)
		if len(bad) != 1 {
			t.Errorf("LagP99 not caught: %v", bad)
		}
	})
}
