package loadgen

import (
	"reflect"
	"testing"
)

func TestParseCPUTimes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  cpuTimes
	}{
		{"a 6.x kernel's two CPUs, after the sums", []string{
			"cpu  1560743 26423 476117 4184173 17916 0 73408 47474 0 0",
			"cpu0 799386 14902 247189 2056300 4763 0 41021 23475 0 0",
			"cpu1 761357 11521 228927 2127872 13152 0 32386 23999 0 0",
		}, cpuTimes{
			steal: []uint64{23475, 23999},
			total: []uint64{799386 + 14902 + 247189 + 2056300 + 4763 + 41021 + 23475, 761357 + 11521 + 228927 + 2127872 + 13152 + 32386 + 23999},
			ok:    true,
		}},
		{"guest time is not counted twice", []string{"cpu0 10 0 0 0 0 0 0 5 7 7"}, cpuTimes{steal: []uint64{5}, total: []uint64{15}, ok: true}},
		{"no steal field", []string{"cpu0 1 2 3 4 5 6 7"}, cpuTimes{}},
		{"not a number", []string{"cpu0 1 2 3 4 5 6 7 x 0 0"}, cpuTimes{}},
		{"the sums alone", []string{"cpu  1 2 3 4 5 6 7 8 0 0"}, cpuTimes{}},
		{"nothing", nil, cpuTimes{}},
	} {
		if got := parseCPUTimes(tc.lines); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: parseCPUTimes = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
