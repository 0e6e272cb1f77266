package loadgen

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// readCPUTimes reads each CPU's time accounting from /proc/stat.
func readCPUTimes() cpuTimes {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "cpu") {
			lines = append(lines, sc.Text())
		}
	}
	if sc.Err() != nil {
		return cpuTimes{}
	}
	return parseCPUTimes(lines)
}

// parseCPUTimes parses /proc/stat's "cpuN" lines (the "cpu" line of the sums is skipped): user,
// nice, system, idle, iowait, irq, softirq and steal ticks (later fields, guest time, are already
// counted in user and nice). Any CPU line without the steal field (kernels before 2.6.11) or with
// a field that is not a number makes the reading not ok, and so does no CPU line at all.
func parseCPUTimes(lines []string) cpuTimes {
	var t cpuTimes
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "cpu" || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if len(f) < 9 {
			return cpuTimes{}
		}
		var total uint64
		for _, s := range f[1:9] {
			n, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return cpuTimes{}
			}
			total += n
		}
		steal, _ := strconv.ParseUint(f[8], 10, 64)
		t.steal, t.total = append(t.steal, steal), append(t.total, total)
	}
	t.ok = len(t.total) > 0
	return t
}
