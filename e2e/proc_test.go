package e2e_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// proc is one process as /proc/<pid>/stat describes it.
type proc struct{ pid, ppid, pgrp int }

// processes lists every process on this host from /proc (none where there is no /proc). A
// process that ends while it is read is left out.
func processes() []proc {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	out := make([]proc, 0, len(stats))
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces, so read after the last ')'.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) < 3 {
			continue
		}
		p := proc{}
		p.pid, _ = strconv.Atoi(filepath.Base(filepath.Dir(s)))
		p.ppid, _ = strconv.Atoi(f[1])
		p.pgrp, _ = strconv.Atoi(f[2])
		out = append(out, p)
	}
	return out
}
