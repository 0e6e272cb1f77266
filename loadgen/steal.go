package loadgen

import "fmt"

// cpuTimes is one reading of the machine's CPU time accounting, per CPU, in clock ticks: steal
// is the time the hypervisor ran something else while the CPU wanted to run, total all the time
// accounted. ok is false when the reading failed (or the system does not account steal time).
type cpuTimes struct {
	steal, total []uint64
	ok           bool
}

// cpuTimesNow reads the machine's CPU time accounting (readCPUTimes); a test that needs a given
// steal replaces it.
var cpuTimesNow = readCPUTimes

// stealFraction returns the largest share of one CPU's time that was stolen between readings a
// and b, or -1 when either reading failed, the CPUs differ or no time was accounted between
// them. The largest, not the machine's average: a load generator on one CPU loses what that CPU
// lost, and a run's lag p99 has a budget of 1% of its duration, which one CPU's steal can spend
// alone while the machine's average stays at half of it.
func stealFraction(a, b cpuTimes) float64 {
	if !a.ok || !b.ok || len(a.total) != len(b.total) || len(a.total) == 0 {
		return -1
	}
	most := -1.0
	for i := range a.total {
		if b.total[i] <= a.total[i] || b.steal[i] < a.steal[i] {
			continue
		}
		most = max(most, float64(b.steal[i]-a.steal[i])/float64(b.total[i]-a.total[i]))
	}
	return most
}

// NotableSteal is the share of a CPU's time stolen during a run from which an invalid check says
// so: late or dropped sends then owe at least that much to the hypervisor, not to the load
// generator. It is the lag p99's own budget (1% of the sends, so about 1% of the time); quiet
// virtual machines steal well under it (0-0.4% in 5 s runs measured for issue 12), a busy host
// 3-30%.
const NotableSteal = 0.01

// stealNote is what an invalid check adds to its lag and drop reasons about steal: nothing when
// steal is unknown or below NotableSteal.
func stealNote(steal float64) string {
	if steal < NotableSteal {
		return ""
	}
	return fmt.Sprintf("; the hypervisor took %.1f%% of a CPU's time during the run (steal time)", 100*steal)
}
