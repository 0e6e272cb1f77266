//go:build unix

package scenarios

import (
	"path/filepath"
	"syscall"
	"testing"
)

// makeFIFO makes a named pipe in dir and returns its path.
func makeFIFO(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	return p
}
