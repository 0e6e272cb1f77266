//go:build !unix

package rundir

// Lock is a no-op where there is no flock: every folder reads as not in progress.
type Lock struct{}

// LockRun does nothing here.
func LockRun(string) (*Lock, error) { return &Lock{}, nil }

// Unlock does nothing here.
func (*Lock) Unlock() error { return nil }

// InProgress is false here: there is no lock to tell.
func InProgress(string) bool { return false }
