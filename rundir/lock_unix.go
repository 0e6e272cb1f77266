//go:build unix

package rundir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock is a running runner's hold on its run folder. The kernel drops it when the process ends,
// however it ends (SIGKILL, OOM), so a folder whose run.json says running and whose lock nobody
// holds was cut off, while one still locked is in progress.
type Lock struct{ f *os.File }

// LockRun takes the run folder dir's lock (flock on the folder itself: no file is added) for as
// long as the process runs or until Unlock. It does not block: a folder already locked (another
// runner writing it) is an error.
func LockRun(dir string) (*Lock, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("lock run folder: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock run folder %s: %w", dir, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock; safe to call on a nil Lock and more than once.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the only descriptor drops the flock
	l.f = nil
	return err
}

// InProgress reports whether a live process holds the run folder dir's lock (LockRun): its run
// is still going. It does not block, and false for a folder it cannot open.
func InProgress(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if err == nil {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
