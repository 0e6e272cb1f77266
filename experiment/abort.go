package experiment

import (
	"context"
	"errors"
	"sync"
)

// aborts holds what every run in this process must undo if the process is about to exit
// without finishing (the second interrupt): remove its proxies from an external Toxiproxy and
// say in run.json that it was interrupted.
var aborts struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(context.Context) error
}

// onAbort registers fn to be called by Abort and returns the function that unregisters it.
func onAbort(fn func(context.Context) error) (unregister func()) {
	aborts.mu.Lock()
	defer aborts.mu.Unlock()
	if aborts.fns == nil {
		aborts.fns = map[int]func(context.Context) error{}
	}
	id := aborts.next
	aborts.next++
	aborts.fns[id] = fn
	return func() {
		aborts.mu.Lock()
		delete(aborts.fns, id)
		aborts.mu.Unlock()
	}
}

// Abort is for a process about to exit in the middle of runs (a second interrupt): it removes
// the proxies every running configuration created on an external Toxiproxy (an embedded one
// dies with the process) and rewrites each run's run.json as interrupted; the manifests of the
// configurations still running keep saying so, which the report reads as cut off. It runs the
// undo steps at once, blocks until all have returned or ctx is done, and returns their errors
// (ctx's error if it ended first). Runs keep going meanwhile; the caller exits afterwards.
func Abort(ctx context.Context) error {
	aborts.mu.Lock()
	fns := make([]func(context.Context) error, 0, len(aborts.fns))
	for _, fn := range aborts.fns {
		fns = append(fns, fn)
	}
	aborts.mu.Unlock()
	errc := make(chan error, len(fns))
	for _, fn := range fns {
		go func() { errc <- fn(ctx) }()
	}
	var errs []error
	for range fns {
		select {
		case err := <-errc:
			errs = append(errs, err)
		case <-ctx.Done():
			return errors.Join(append(errs, ctx.Err())...)
		}
	}
	return errors.Join(errs...)
}
