package loadgen

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// readCPUTimes reads the machine's CPU time accounting from the first line of /proc/stat.
func readCPUTimes() cpuTimes {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		return cpuTimes{}
	}
	return parseCPUTimes(sc.Text())
}

// parseCPUTimes parses /proc/stat's "cpu" line: user, nice, system, idle, iowait, irq, softirq
// and steal ticks, summed over the CPUs (later fields, guest time, are already counted in user
// and nice). A line without the steal field (kernels before 2.6.11) is not ok.
func parseCPUTimes(line string) cpuTimes {
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, s := range f[1:9] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return cpuTimes{}
		}
		t.total += n
		if i == 7 {
			t.steal = n
		}
	}
	t.ok = true
	return t
}
