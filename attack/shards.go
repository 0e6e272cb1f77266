package attack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// ShardStartLead is how far ahead of now StartShards sets the common T0: time for every child
// to start, measure its clock and warm its connections (at most a second) before it.
var ShardStartLead = 2500 * time.Millisecond

// Shards is one configuration's load sent by several child processes, each a *Process sending
// its stripe (Spec.Segment) of every attack from one common T0. Seen from the runner it has the
// methods of *Process; Wait merges the shards' raw files into the spec's and judges each attack
// over every shard. Its methods are safe for concurrent use.
type Shards struct {
	spec  Spec
	dir   string
	procs []*Process
	clock *http.Server

	checks  []loadgen.Check
	records [][]rundir.Shard
	err     error
	once    sync.Once
}

// StartShards starts n children (`o.Argv... <shard spec>`, one spec file per shard, Files) that
// send spec's load between them from a common T0 ShardStartLead from now, each measuring its
// clock against a clock reference this process serves on loopback for the run. It returns once
// every child has started; on an error the children already started are stopped and the error
// names the shard. n must be at least 2.
func StartShards(ctx context.Context, spec Spec, n int, o Options) (*Shards, error) {
	if n < 2 {
		return nil, fmt.Errorf("%s: %d shards: want at least 2", o.Name, n)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("%s: clock reference: %w", o.Name, err)
	}
	s := &Shards{spec: spec, dir: o.Dir, clock: &http.Server{Handler: ClockHandler(), ReadHeaderTimeout: time.Second}}
	go s.clock.Serve(ln)
	spec.ClockURL = "http://" + ln.Addr().String() + "/"
	spec.T0 = time.Now().Add(ShardStartLead).Truncate(time.Microsecond)
	s.spec = spec
	for k := range n {
		sp := spec
		sp.Segment = loadgen.Shard{Index: k, Count: n}
		so := o
		so.Name = fmt.Sprintf("%s, shard %v", o.Name, sp.Segment)
		p, err := launch(ctx, sp, so)
		if err == nil {
			s.procs = append(s.procs, p)
			continue
		}
		s.abort()
		return nil, err
	}
	// Every child was started before any is waited for: each warms up on its own towards T0.
	for k, p := range s.procs {
		so := o
		so.Name = fmt.Sprintf("%s, shard %v", o.Name, loadgen.Shard{Index: k, Count: n})
		if err := p.awaitStarted(ctx, so); err != nil {
			s.abort()
			return nil, err
		}
	}
	return s, nil
}

// abort stops every child started and the clock reference.
func (s *Shards) abort() {
	for _, q := range s.procs {
		q.proc.Stop()
	}
	s.clock.Close()
}

// T0 returns the common start every shard was given.
func (s *Shards) T0() time.Time { return s.spec.T0 }

// Pids returns the children's process ids, shard by shard.
func (s *Shards) Pids() []int {
	out := make([]int, len(s.procs))
	for i, p := range s.procs {
		out[i] = p.Pid()
	}
	return out
}

// Progress sums the shards' latest progress, attack by attack (a window's p99 is the worst
// shard's). It does not block.
func (s *Shards) Progress() []loadgen.Progress {
	var out []loadgen.Progress
	for _, p := range s.procs {
		for i, g := range p.Progress() {
			if i >= len(out) {
				out = append(out, loadgen.Progress{Name: g.Name})
			}
			out[i].Add(g)
		}
	}
	return out
}

// ProgressAge returns the age of the oldest shard's latest progress (Process.ProgressAge): the
// age of the oldest figures in Progress's sums. It does not block.
func (s *Shards) ProgressAge() time.Duration {
	var age time.Duration
	for _, p := range s.procs {
		age = max(age, p.ProgressAge())
	}
	return age
}

// Stop asks every shard to stop sending; it does not block.
func (s *Shards) Stop() {
	for _, p := range s.procs {
		p.Stop()
	}
}

// Wait blocks until every shard has exited, then merges each attack's shard files into the
// spec's raw file (Merge) and returns one check per attack over every shard: sums of the counts,
// the merged sends' lag against the common schedule, valid only when every shard's check was,
// the merged Seq is gapless and the merged lag p99 is within the lag limit. The error joins the
// shards' errors and the merges'. Calling Wait again returns the same.
func (s *Shards) Wait() ([]loadgen.Check, error) {
	s.once.Do(s.wait)
	return s.checks, s.err
}

func (s *Shards) wait() {
	defer s.clock.Close()
	results := make([]ShardResult, len(s.procs))
	var errs []error
	for k, p := range s.procs {
		c, err := p.Wait()
		results[k] = ShardResult{Checks: c, Clock: p.Clock(), Slack: p.Slack(), Where: fmt.Sprintf("process %d", p.Pid())}
		if err != nil {
			errs = append(errs, fmt.Errorf("shard %d/%d: %w", k, len(s.procs), err))
		}
	}
	var err error
	s.checks, s.records, err = Combine(s.spec, s.dir, results)
	s.err = errors.Join(append(errs, err)...)
}

// ShardResult is what one shard of a load reported, wherever it ran.
type ShardResult struct {
	// Checks are its done event's checks, one per attack (nil: it sent none).
	Checks []loadgen.Check
	// Clock is its started event's clock offset (nil: unknown).
	Clock *ClockOffset
	// Slack is how long before the common T0 it was ready to send (Event.Slack).
	Slack time.Duration
	// Where says where it ran, for the manifest ("process 123", "pod ns/name on node").
	Where string
}

// Combine merges, attack by attack, the raw files of spec's len(shards) shards (ShardName in
// dir) into the spec's own raw file (Merge), and returns one check per attack over every shard:
// sums of the counts, the merged sends' lag against the common schedule (spec.T0), valid only
// when every shard's check was, the merged Seq is gapless and the merged lag p99 is within the
// lag limit; and every shard's record for the manifest. The error joins the merges' errors.
func Combine(spec Spec, dir string, shards []ShardResult) ([]loadgen.Check, [][]rundir.Shard, error) {
	var errs []error
	var checks []loadgen.Check
	records := make([][]rundir.Shard, len(spec.Attacks))
	for i, a := range spec.Attacks {
		c := loadgen.Check{Name: a.Name, Valid: true, Steal: -1, Codes: map[uint16]uint64{}, Classes: map[string]uint64{}}
		var in []string
		for k, sr := range shards {
			seg := loadgen.Shard{Index: k, Count: len(shards)}
			rec := rundir.Shard{Segment: seg.String(), RawFile: ShardName(a.RawFile, seg), T0: spec.T0, StartSlack: sr.Slack, Where: sr.Where}
			if clk := sr.Clock; clk != nil {
				rec.ClockKnown, rec.ClockOffset, rec.ClockUncertainty = true, clk.Offset, clk.Uncertainty
			}
			in = append(in, rawPath(dir, rec.RawFile))
			if i >= len(sr.Checks) {
				rec.Invalid = []string{"the shard sent no checks"}
				c.Valid = false
				c.Reasons = append(c.Reasons, fmt.Sprintf("shard %v sent no checks", seg))
				records[i] = append(records[i], rec)
				continue
			}
			sc := sr.Checks[i]
			rec.StartSkew, rec.Scheduled, rec.Sent, rec.Dropped = sc.StartSkew, sc.Scheduled, sc.Sent, sc.Dropped
			rec.LagP50, rec.LagP99, rec.LagMax, rec.Valid, rec.Invalid = sc.LagP50, sc.LagP99, sc.LagMax, sc.Valid, sc.Reasons
			records[i] = append(records[i], rec)
			c.Scheduled, c.Sent, c.Dropped = c.Scheduled+sc.Scheduled, c.Sent+sc.Sent, c.Dropped+sc.Dropped
			c.StartSkew, c.Stopped, c.Steal = max(c.StartSkew, sc.StartSkew), c.Stopped || sc.Stopped, max(c.Steal, sc.Steal)
			for code, n := range sc.Codes {
				c.Codes[code] += n
			}
			for class, n := range sc.Classes {
				c.Classes[class] += n
			}
			if !sc.Valid {
				c.Valid = false
				for _, r := range sc.Reasons {
					c.Reasons = append(c.Reasons, fmt.Sprintf("shard %v: %s", seg, r))
				}
			}
		}
		m, err := Merge(rawPath(dir, a.RawFile), in, spec.T0)
		if err != nil {
			errs = append(errs, err)
			c.Valid = false
			c.Reasons = append(c.Reasons, err.Error())
		}
		c.LagP50, c.LagP99, c.LagMax = m.LagP50, m.LagP99, m.LagMax
		c.Reasons = append(c.Reasons, judgeMerged(m, spec.Load.LagLimit)...)
		c.Valid = c.Valid && len(c.Reasons) == 0
		checks = append(checks, c)
	}
	return checks, records, errors.Join(errs...)
}

// judgeMerged says what makes a merge invalid: gaps or duplicates in Seq, or a merged lag p99
// over the limit against the common schedule (the shards were out of step: late starts or
// clocks apart).
func judgeMerged(m Merged, limit time.Duration) []string {
	var out []string
	if m.Gaps > 0 {
		out = append(out, fmt.Sprintf("the shards' results together miss %d Seq numbers", m.Gaps))
	}
	if m.Duplicates > 0 {
		out = append(out, fmt.Sprintf("%d Seq numbers were sent by more than one shard", m.Duplicates))
	}
	if limit > 0 && m.LagP99 > limit && m.Results >= loadgen.MinLagSamples {
		out = append(out, fmt.Sprintf("merged send lag p99 %v against the common schedule exceeds the %v limit (p50 %v, max %v): the shards were out of step",
			m.LagP99, limit, m.LagP50, m.LagMax))
	}
	return out
}

// ShardRecords returns, per attack, every shard's part of it for the manifest (rundir.Endpoint.Shards).
// Call it after Wait.
func (s *Shards) ShardRecords() [][]rundir.Shard { return s.records }

// Pooled is the shards' pooled checks together: valid only when every shard's is, with the
// reasons named by shard. Call it after Wait.
func (s *Shards) Pooled() loadgen.Check {
	out := loadgen.Check{Name: "all", Valid: true, Steal: -1}
	for k, p := range s.procs {
		c := p.Pooled()
		out.Scheduled, out.Sent, out.Dropped = out.Scheduled+c.Scheduled, out.Sent+c.Sent, out.Dropped+c.Dropped
		out.LagP50, out.LagP99, out.LagMax = max(out.LagP50, c.LagP50), max(out.LagP99, c.LagP99), max(out.LagMax, c.LagMax)
		out.Steal = max(out.Steal, c.Steal)
		if !c.Valid {
			out.Valid = false
			for _, r := range c.Reasons {
				out.Reasons = append(out.Reasons, fmt.Sprintf("shard %d/%d: %s", k, len(s.procs), r))
			}
		}
	}
	return out
}

// PeakRSS returns the largest peak resident set size of the shards. Call it after Wait.
func (s *Shards) PeakRSS() int64 {
	var m int64
	for _, p := range s.procs {
		m = max(m, p.PeakRSS())
	}
	return m
}

// SpecFiles returns each shard's spec file name, relative to the folder.
func (s *Shards) SpecFiles() []string {
	out := make([]string, len(s.procs))
	for k := range s.procs {
		out[k], _, _ = Files(loadgen.Shard{Index: k, Count: len(s.procs)})
	}
	return out
}
