package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ParseRate parses a request rate and returns it in requests per second: "50/s", "50/1s",
// "3000/1m", "5/100ms", or a plain number meaning per second ("50", "12.5"). The count and the
// period must be finite and > 0. It is the parser behind load.rate and endpoints[].rate.
//
// (Package loadgen, written concurrently, has its own ParseRate for flags; once it exists the two
// should become one.)
func ParseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty rate")
	}
	num, per, hasPer := strings.Cut(s, "/")
	n, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("rate %q: want a count like \"50/s\", \"3000/1m\" or a number per second", s)
	}
	period := time.Second
	if hasPer {
		per = strings.TrimSpace(per)
		if per != "" && (per[0] < '0' || per[0] > '9') && per[0] != '.' {
			per = "1" + per // "50/s" means "50/1s"
		}
		period, err = time.ParseDuration(per)
		if err != nil {
			return 0, fmt.Errorf("rate %q: period %q is not a duration like \"1s\"", s, per)
		}
		if period <= 0 {
			return 0, fmt.Errorf("rate %q: period must be > 0", s)
		}
	}
	if n <= 0 {
		return 0, fmt.Errorf("rate %q: must be > 0", s)
	}
	return n / period.Seconds(), nil
}

// FormatRate writes a per-second rate the way ParseRate reads it ("50/s", "12.5/s").
func FormatRate(perSecond float64) string {
	return strconv.FormatFloat(perSecond, 'f', -1, 64) + "/s"
}

// relative is a duration written relative to the client timeout: "0.9x timeout" or "0.9x".
type relative struct {
	factor float64
	text   string
}

// parseRelative reports whether s is written relative to the timeout, and its factor. ok with a
// non-nil error means the text is meant as relative but the factor is unreadable.
func parseRelative(s string) (r relative, ok bool, err error) {
	t := strings.TrimSpace(s)
	if rest, found := strings.CutSuffix(t, "timeout"); found {
		t = strings.TrimSpace(rest)
		if !strings.HasSuffix(t, "x") {
			return relative{}, true, fmt.Errorf("%q: write a relative amount as \"0.9x timeout\"", s)
		}
	}
	f, found := strings.CutSuffix(t, "x")
	if !found {
		return relative{}, false, nil
	}
	v, perr := strconv.ParseFloat(strings.TrimSpace(f), 64)
	if perr != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return relative{}, true, fmt.Errorf("%q: the factor before x is not a number", s)
	}
	return relative{factor: v, text: strings.TrimSpace(s)}, true, nil
}

// resolve turns the factor into a duration of the given timeout, rounded to the microsecond.
func (r relative) resolve(timeout time.Duration) time.Duration {
	d := time.Duration(r.factor * float64(timeout))
	return d.Round(time.Microsecond)
}
