package loadgen

import (
	"time"
)

// pacing is how boundedPacer waits for a hit that is not yet due. The default is the netpolled
// kernel timer; the others stay so that figures can measure it against them in the same run.
type pacing int

const (
	// pacingTimer sleeps every wait on the attack's hrTimer, falling back to vegeta's
	// time.Sleep if the kernel refuses one.
	pacingTimer pacing = iota
	// pacingNanosleep is the pacing before issue 12: the runtime's sleep until preciseWindow
	// before the hit, then nanosleep(2), which blocks the thread; waits shorter than
	// nanosleepMinWait are left to vegeta's time.Sleep.
	pacingNanosleep
	// pacingPlain leaves every wait to vegeta's time.Sleep.
	pacingPlain
)

var pacingNames = map[string]pacing{"timer": pacingTimer, "nanosleep": pacingNanosleep, "plain": pacingPlain}

func (p pacing) String() string {
	for name, q := range pacingNames {
		if q == p {
			return name
		}
	}
	return "unknown"
}

// pace is the pacing in use; only figures change it.
var pace = pacingTimer

const (
	// preciseWindow is the last stretch before a hit that pacingNanosleep waits out with
	// sleepPrecise.
	preciseWindow = 2 * time.Millisecond
	// nanosleepMinWait is the shortest wait pacingNanosleep takes on itself.
	nanosleepMinWait = 200 * time.Microsecond
)

// wait blocks until due (wait from now) and reports true, or reports false at once when the
// wait is left to vegeta. It runs on the attack's pacing goroutine only.
func (p *boundedPacer) wait(due time.Time, wait time.Duration) bool {
	switch pace {
	case pacingTimer:
		if p.timer == nil && !p.noTimer {
			t, err := newHRTimer()
			p.timer, p.noTimer = t, err != nil
		}
		return p.timer != nil && p.timer.sleep(time.Until(due)) == nil
	case pacingNanosleep:
		if wait < nanosleepMinWait {
			return false
		}
		if wait > preciseWindow {
			time.Sleep(wait - preciseWindow)
		}
		if left := time.Until(due); left > 0 {
			sleepPrecise(left)
		}
		return true
	}
	return false
}
