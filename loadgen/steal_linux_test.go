package loadgen

import "testing"

func TestParseCPUTimes(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		want       cpuTimes
	}{
		{"a 6.x kernel's line", "cpu  1560743 26423 476117 4184173 17916 0 73408 47474 0 0",
			cpuTimes{steal: 47474, total: 1560743 + 26423 + 476117 + 4184173 + 17916 + 73408 + 47474, ok: true}},
		{"guest time is not counted twice", "cpu  10 0 0 0 0 0 0 5 7 7", cpuTimes{steal: 5, total: 15, ok: true}},
		{"no steal field", "cpu  1 2 3 4 5 6 7", cpuTimes{}},
		{"one CPU's line", "cpu0 1 2 3 4 5 6 7 8 0 0", cpuTimes{}},
		{"not a number", "cpu  1 2 3 4 5 6 7 x 0 0", cpuTimes{}},
		{"empty", "", cpuTimes{}},
	} {
		if got := parseCPUTimes(tc.line); got != tc.want {
			t.Errorf("%s: parseCPUTimes = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
