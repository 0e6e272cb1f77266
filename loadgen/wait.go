package loadgen

import (
	"time"
)

// pacing is how boundedPacer waits for a hit that is not yet due. The default is the netpolled
// kernel timer; the others stay so that figures can measure it against them in the same run.
type pacing int

const (
	// pacingTimer sleeps every wait on the attack's hrTimer, falling back to vegeta's
	// time.Sleep if the kernel refuses one, and yields to the netpoller while catching up
	// (catchUp).
	pacingTimer pacing = iota
	// pacingGreedy is pacingTimer without the yields: hits already due are sent one after
	// another until the pacer has caught up (the pacing before the yields).
	pacingGreedy
	// pacingNanosleep is the pacing before issue 12: the runtime's sleep until preciseWindow
	// before the hit, then nanosleep(2), which blocks the thread; waits shorter than
	// nanosleepMinWait are left to vegeta's time.Sleep.
	pacingNanosleep
	// pacingPlain leaves every wait to vegeta's time.Sleep.
	pacingPlain
)

var pacingNames = map[string]pacing{"timer": pacingTimer, "greedy": pacingGreedy, "nanosleep": pacingNanosleep, "plain": pacingPlain}

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

const (
	// catchUpBurst is how many hits already due the pacer sends one after another before it
	// yields (catchUp).
	catchUpBurst = 8
	// catchUpYield is how long a yield parks the pacer: long enough that its timer has not
	// expired when it parks, so that only the netpoller wakes it.
	catchUpYield = 20 * time.Microsecond
)

// catchUp is called for each hit already due when the pacer asks; after every catchUpBurst of
// them in a row it parks the pacer on its timer for catchUpYield.
//
// Why: the Go runtime polls the network only when it has nothing else to run (or every 10 ms,
// from its monitor thread). A pacer that is behind never parks: it hands a tick to a worker,
// which sends and parks on the response, and the pacer runs again at once. So the responses
// that have arrived are not read, the workers waiting for them stay busy, and every tick needs a
// new worker on a new connection, whose dial waits for the netpoller too. When the pacer has
// caught up, the netpoller returns every response and dial at once, their work holds the pacer
// back past its next hit, and the cycle starts again: on one core at 8,000 rps one such cycle
// lasted 100-200 ms, with thousands of dials, on a machine the hypervisor left alone (issue 12).
// A park that only the netpoller ends lets the responses in between bursts, and their
// connections serve the next ticks.
func (p *boundedPacer) catchUp() {
	if pace != pacingTimer {
		return
	}
	p.behind++
	if p.behind%catchUpBurst == 0 {
		if t := p.hrTimer(); t != nil && t.sleep(catchUpYield) == nil {
			p.yields++
		}
	}
}

// hrTimer returns the pacer's timer, creating it at the first call, or nil when the kernel
// refused one.
func (p *boundedPacer) hrTimer() *hrTimer {
	if p.timer == nil && !p.noTimer {
		t, err := newHRTimer()
		p.timer, p.noTimer = t, err != nil
	}
	return p.timer
}

// wait blocks until due (wait from now) and reports true, or reports false at once when the
// wait is left to vegeta. It runs on the attack's pacing goroutine only.
func (p *boundedPacer) wait(due time.Time, wait time.Duration) bool {
	switch pace {
	case pacingTimer, pacingGreedy:
		t := p.hrTimer()
		return t != nil && t.sleep(time.Until(due)) == nil
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
