package experiment

import (
	"context"
	"fmt"
	"time"
)

// Watchdogs: what the runner checks while a configuration's time line runs, so that a part of
// the bench that died or froze fails the configuration at once, with the reason, instead of
// the load running on at 100% errors or the run hanging. A load generator child that stops
// reporting is the attack package's watchdog (attack.DefaultStallAfter); an external
// Toxiproxy's health is checked here.

// Health checks of an external Toxiproxy during a time line: one every healthEvery, each bounded
// by healthTimeout. A Toxiproxy that died (its API refuses connections) fails the configuration
// within healthEvery of its death; one that hangs, within healthEvery + healthTimeout.
const (
	healthEvery   = 200 * time.Millisecond
	healthTimeout = 750 * time.Millisecond
)

// pinger is a server that can die apart from the runner: an external Toxiproxy
// (*proxy.External); the embedded one lives and dies with this process.
type pinger interface {
	// Ping returns nil while the server answers.
	Ping(ctx context.Context) error
	// URL is the server's address, for the error.
	URL() string
}

// watchHealth checks p every healthEvery until stop is closed (it then returns nil) or a check
// fails: it then calls halt with an error naming p's address and the time line's offset, and
// returns that error. It blocks meanwhile.
func watchHealth(stop <-chan struct{}, t0 time.Time, p pinger, halt func(error)) error {
	tick := time.NewTicker(healthEvery)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return nil
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
		err := p.Ping(ctx)
		cancel()
		select {
		case <-stop: // the time line ended meanwhile (and the server may have been stopped with it)
			return nil
		default:
		}
		if err != nil {
			err = fmt.Errorf("toxiproxy at %s stopped answering %.1f s into the time line: %w", p.URL(), time.Since(t0).Seconds(), err)
			halt(err)
			return err
		}
	}
}
