package attack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
)

// Serve is the child's side: it reads the spec at specPath, creates the raw files (none may
// exist), starts the load and writes Events to events: started with T0, progress every
// ProgressEvery, done with the checks once every result is written and every file synced and
// closed; log receives a line when the load starts and one when it ends (for the stderr log).
// It blocks until then. A cancelled ctx (the command's SIGTERM or SIGINT) stops the load
// as loadgen.Run.Stop does; the checks are still written.
//
// It returns an error, having written no event, when the spec is bad or the load does not start
// (raw files already created stay, empty); when results could not be
// written it returns that error after the done event, which carries it too.
func Serve(ctx context.Context, specPath string, events, log io.Writer) error {
	spec, err := ReadSpec(specPath)
	if err != nil {
		return err
	}
	dir := filepath.Dir(specPath)
	var files []*os.File
	closeAll := func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Sync(), f.Close())
		}
		return errors.Join(errs...)
	}
	for _, a := range spec.Attacks {
		f, err := os.OpenFile(rawPath(dir, a.RawFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			closeAll()
			return fmt.Errorf("%s: attack %s: %w", specPath, a.Name, err)
		}
		files = append(files, f)
	}
	attacks, err := spec.attacks(files)
	if err != nil {
		closeAll()
		return fmt.Errorf("%s: %w", specPath, err)
	}
	lr, err := loadgen.Start(ctx, attacks, spec.Duration, spec.opts()...)
	if err != nil {
		closeAll()
		return fmt.Errorf("configuration %s: start load: %w", spec.Configuration, err)
	}
	enc := json.NewEncoder(events)
	var encErr error
	emit := func(e Event) {
		if err := enc.Encode(e); err != nil && encErr == nil {
			// The runner is gone or not listening; the results are still written in full.
			encErr = fmt.Errorf("write event %s: %w", e.Type, err)
		}
	}
	emit(Event{Type: EventStarted, T0: lr.T0(), PID: os.Getpid()})
	fmt.Fprintf(log, "bulkhead attack: configuration %s: %d attack(s) for %v from %s, pid %d\n",
		spec.Configuration, len(attacks), spec.Duration, lr.T0().UTC().Format(time.RFC3339Nano), os.Getpid())

	type waited struct {
		checks []loadgen.Check
		err    error
	}
	done := make(chan waited, 1)
	go func() {
		c, err := lr.Wait()
		done <- waited{c, err}
	}()
	every := spec.ProgressEvery
	if every <= 0 {
		every = DefaultProgressEvery
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			emit(Event{Type: EventProgress, Progress: lr.Progress()})
			continue
		case w := <-done:
			lost := errors.Join(w.err, closeAll())
			pooled := lr.Pooled()
			e := Event{Type: EventDone, Checks: w.checks, Pooled: &pooled, PeakRSS: peakRSS()}
			if lost != nil {
				e.Error = lost.Error()
			}
			emit(e)
			var sent uint64
			for _, c := range w.checks {
				sent += c.Sent
			}
			fmt.Fprintf(log, "bulkhead attack: configuration %s: done, %d results written, %d of %d attack(s) valid, pooled valid %v\n",
				spec.Configuration, sent, countValid(w.checks), len(w.checks), pooled.Valid)
			return errors.Join(lost, encErr)
		}
	}
}

func countValid(cs []loadgen.Check) int {
	n := 0
	for _, c := range cs {
		if c.Valid {
			n++
		}
	}
	return n
}
