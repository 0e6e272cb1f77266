//go:build !linux

package loadgen

import (
	"errors"
	"time"
)

// sleepPrecise sleeps for d; outside Linux it is the runtime's timer.
func sleepPrecise(d time.Duration) { time.Sleep(d) }

type hrTimer struct{}

func newHRTimer() (*hrTimer, error) { return nil, errors.New("no high-resolution timer outside Linux") }

func (*hrTimer) sleep(d time.Duration) error { time.Sleep(d); return nil }

func (*hrTimer) close() error { return nil }
