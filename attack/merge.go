package attack

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/bulkheadlab/bulkhead/outcome"
)

// Merged is what Merge found in the shards' raw files of one attack.
type Merged struct {
	// Results is how many results the merged file holds; Gaps how many Seq numbers below the
	// highest are missing (0 when the shards' sends together are gapless, as they are unless a
	// shard was stopped early or lost results).
	Results, Gaps uint64
	// Duplicates counts Seq numbers more than one shard sent: two shards given the same segment.
	Duplicates uint64
	// LagP50, LagP99 and LagMax are the exact (nearest rank) lag of every merged send against the
	// common schedule: its timestamp minus (t0 + its scheduled offset), start skew and clock
	// differences included, negative lags (a clock ahead) counted as 0 in the quantiles and shown
	// by Early.
	LagP50, LagP99, LagMax time.Duration
	// Early counts sends timestamped before their scheduled time on the common schedule: only a
	// shard whose clock is ahead of t0's can do that.
	Early uint64
}

// Merge writes the results of the shards' raw files in (one attack's) into a new file at out,
// ordered by Seq: the exact union, every line as the shard wrote it, so that a run sharded N
// ways reads as the same run from one load generator. t0 is the common start the shards were
// given; the lag figures are measured against it. A missing input, an unreadable line or an
// existing out is an error; a gap or duplicate in Seq is counted, not an error (the caller
// judges it).
func Merge(out string, in []string, t0 time.Time) (Merged, error) {
	type line struct {
		seq uint64
		b   []byte
	}
	var lines []line
	var lags []time.Duration
	var m Merged
	for _, path := range in {
		b, err := os.ReadFile(path)
		if err != nil {
			return Merged{}, fmt.Errorf("merge shards: %w", err)
		}
		for n, l := range bytes.Split(b, []byte("\n")) {
			if len(l) == 0 {
				continue
			}
			var r struct {
				Seq       uint64              `json:"seq"`
				Timestamp time.Time           `json:"timestamp"`
				Headers   map[string][]string `json:"headers"`
			}
			if err := json.Unmarshal(l, &r); err != nil {
				return Merged{}, fmt.Errorf("merge shards: %s:%d: %w", path, n+1, err)
			}
			lines = append(lines, line{r.Seq, l})
			if v := r.Headers[outcome.HeaderScheduled]; len(v) > 0 {
				if ns, err := strconv.ParseInt(v[0], 10, 64); err == nil {
					lag := r.Timestamp.Sub(t0.Add(time.Duration(ns)))
					if lag < 0 {
						m.Early++
						lag = 0
					}
					lags = append(lags, lag)
				}
			}
		}
	}
	slices.SortStableFunc(lines, func(a, b line) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return 0
	})
	for i, l := range lines {
		if i > 0 && l.seq == lines[i-1].seq {
			m.Duplicates++
		}
	}
	m.Results = uint64(len(lines))
	if n := len(lines); n > 0 {
		m.Gaps = lines[n-1].seq + 1 - (m.Results - m.Duplicates)
	}
	slices.Sort(lags)
	m.LagP50, m.LagP99 = nearestRank(lags, 0.50), nearestRank(lags, 0.99)
	if len(lags) > 0 {
		m.LagMax = lags[len(lags)-1]
	}

	f, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return Merged{}, fmt.Errorf("merge shards: %w", err)
	}
	w := bufio.NewWriterSize(f, 256<<10)
	for _, l := range lines {
		w.Write(l.b)
		w.WriteByte('\n')
	}
	if err := errors.Join(w.Flush(), f.Sync(), f.Close()); err != nil {
		return Merged{}, fmt.Errorf("merge shards into %s: %w", out, err)
	}
	return m, nil
}

// nearestRank is the q-quantile of sorted xs by nearest rank (0 for none), as loadgen's.
func nearestRank(xs []time.Duration, q float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	return xs[min(max(int(math.Ceil(q*float64(len(xs))))-1, 0), len(xs)-1)]
}
