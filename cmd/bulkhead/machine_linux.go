//go:build linux

package main

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/bulkheadlab/bulkhead/scenarios"
)

// machine reports what this machine offers a run whose results go under dir (which may not exist
// yet: its nearest existing parent is asked). A figure it cannot read is left 0 (unknown).
func machine(dir string) scenarios.Machine {
	var m scenarios.Machine
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		var st syscall.Statfs_t
		err := syscall.Statfs(d, &st)
		if err == nil {
			m.FreeDisk = float64(st.Bavail) * float64(st.Bsize)
			break
		}
		if !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			break
		}
	}
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil && rl.Cur < 1<<62 {
		m.MaxFiles = float64(rl.Cur)
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
				kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
				if err == nil {
					m.Memory = kb * 1024
				}
			}
		}
	}
	return m
}
