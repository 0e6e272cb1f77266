package loadgen

import "fmt"

// cpuTimes is one reading of the machine's CPU time accounting, summed over its CPUs, in clock
// ticks: steal is the time the hypervisor ran something else while a CPU of this machine wanted
// to run, total all the time accounted. ok is false when the reading failed (or the system does
// not account steal time).
type cpuTimes struct {
	steal, total uint64
	ok           bool
}

// cpuTimesNow reads the machine's CPU time accounting (readCPUTimes); a test that needs a given
// steal replaces it.
var cpuTimesNow = readCPUTimes

// stealFraction returns the share of the machine's CPU time that was stolen between readings a
// and b, or -1 when either reading failed or no time was accounted between them.
func stealFraction(a, b cpuTimes) float64 {
	if !a.ok || !b.ok || b.total <= a.total || b.steal < a.steal {
		return -1
	}
	return float64(b.steal-a.steal) / float64(b.total-a.total)
}

// NotableSteal is the share of the machine's CPU time stolen during a run from which an invalid
// check says so: late or dropped sends then owe at least that much to the hypervisor, not to the
// load generator. Quiet virtual machines steal well under 1% (0-0.4% in 5 s runs measured for
// issue 12); a busy host 3-16%.
const NotableSteal = 0.01

// stealNote is what an invalid check adds to its lag and drop reasons about steal: nothing when
// steal is unknown or below NotableSteal.
func stealNote(steal float64) string {
	if steal < NotableSteal {
		return ""
	}
	return fmt.Sprintf("; the hypervisor took %.1f%% of this machine's CPU time during the run (steal time)", 100*steal)
}
