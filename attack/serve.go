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
	return ServeWith(ctx, specPath, ServeOptions{}, events, log)
}

// ServeOptions changes what Serve does with a spec; the zero value is Serve's.
type ServeOptions struct {
	// Segment, when set, is the shard to send instead of the spec's Segment: one spec serves
	// every shard (`bulkhead attack --segment k/N`).
	Segment *loadgen.Shard
	// Dir, when set, is where the raw files go instead of the spec's folder (a spec mounted
	// read-only, as a Kubernetes ConfigMap is).
	Dir string
	// StreamResults sends the raw files after the done event as results events on the event
	// stream (StreamResults), for a runner that can read this process's stdout but not its
	// files: a pod's log.
	StreamResults bool
}

// ServeWith is Serve with options.
func ServeWith(ctx context.Context, specPath string, o ServeOptions, events, log io.Writer) error {
	spec, err := ReadSpec(specPath)
	if err != nil {
		return err
	}
	if o.Segment != nil {
		if err := o.Segment.Validate(); err != nil {
			return fmt.Errorf("%s: --segment: %w", specPath, err)
		}
		spec.Segment = *o.Segment
	}
	dir := filepath.Dir(specPath)
	if o.Dir != "" {
		dir = o.Dir
	}
	var files []*os.File
	closeAll := func() error {
		var errs []error
		for _, f := range files {
			errs = append(errs, f.Sync(), f.Close())
		}
		return errors.Join(errs...)
	}
	for _, a := range spec.Attacks {
		if o.Dir != "" {
			// A folder of its own (a pod's emptyDir) starts empty: make the raw files' folders.
			if err := os.MkdirAll(filepath.Dir(spec.rawPath(dir, a)), 0o755); err != nil {
				closeAll()
				return fmt.Errorf("%s: attack %s: %w", specPath, a.Name, err)
			}
		}
		f, err := os.OpenFile(spec.rawPath(dir, a), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
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
	var clock *ClockOffset
	if spec.ClockURL != "" {
		c, err := MeasureClock(ctx, spec.ClockURL)
		if err != nil {
			// The load still runs: its offset is then unknown, which the runner reports.
			fmt.Fprintf(log, "bulkhead attack: configuration %s: %v\n", spec.Configuration, err)
		} else {
			clock = &c
		}
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
	started := Event{Type: EventStarted, SchemaVersion: EventSchemaVersion, T0: lr.T0(), PID: os.Getpid(), Segment: spec.Segment, Clock: clock}
	if !spec.T0.IsZero() {
		started.Slack = lr.T0().Sub(lr.Ready())
	}
	emit(started)
	fmt.Fprintf(log, "bulkhead attack: configuration %s: %d attack(s) for %v from %s, pid %d, segment %v\n",
		spec.Configuration, len(attacks), spec.Duration, lr.T0().UTC().Format(time.RFC3339Nano), os.Getpid(), spec.Segment)

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
			if o.StreamResults && encErr == nil {
				for i, a := range spec.Attacks {
					if err := streamResults(enc, i, spec.rawPath(dir, a)); err != nil {
						lost = errors.Join(lost, err)
						break
					}
				}
			}
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
