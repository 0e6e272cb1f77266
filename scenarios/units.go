package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rates ("50/s", "3000/1m", a number per second) are parsed by loadgen.ParseRate, the same
// function the CLI's --rate flag uses, so a rate means the same in a file and on the command line.

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
