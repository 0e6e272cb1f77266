package main

import (
	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/loadgen"
)

func newAttackCmd() *cobra.Command {
	var segment, dir string
	var stream bool
	cmd := &cobra.Command{
		Use:   "attack <attack.json>",
		Short: "Run one configuration's load generator from a spec file (the runner starts this as a child)",
		Long: `Run the open-model load generator described by a spec file, as 'bulkhead run --load process'
does for each configuration: it writes the raw result files the spec names (relative to the
spec's folder; none may exist) in the same format as a load generator inside the runner, and
prints JSON events on stdout, one per line: "started" with the time line's zero (wall clock),
"progress" periodically, "done" with every attack's self-check and the pooled one.

With --segment k/N it sends only its shard of every attack (hit g of the whole schedule goes to
shard g mod N), keeping the whole run's Seq and scheduled offsets, and names its raw files with
".shard-k-of-N" in them; N such processes started from one spec, whose "t0" gives their common
start, send the unsharded load between them. --stream-results then sends the raw files on stdout
after the "done" event (gzip, base64, with their size and SHA-256), for a runner that reads only
the process's output, as from a Kubernetes pod's log.

The first SIGTERM or Ctrl-C stops sending; requests in flight finish, every result is written and
the checks are still printed.`,
		Example: `  bulkhead attack results/20261130T223231Z-hypothesis/shared-r1/attack.json
  bulkhead attack --segment 1/4 --dir /results --stream-results /spec/attack.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := attack.ServeOptions{Dir: dir, StreamResults: stream}
			if segment != "" {
				s, err := loadgen.ParseShard(segment)
				if err != nil {
					return err
				}
				o.Segment = &s
			}
			return attack.ServeWith(cmd.Context(), args[0], o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&segment, "segment", "", "send only shard k of N of every attack (k/N, 0 <= k < N)")
	cmd.Flags().StringVar(&dir, "dir", "", "write the raw files into this folder instead of the spec's")
	cmd.Flags().BoolVar(&stream, "stream-results", false, "after the done event, send the raw files on stdout as results events")
	return cmd
}

// defaultLoad is the layout of `bulkhead run` and `sweep` unless --load says otherwise: a child
// process per configuration run. Measured here (docs/measurements.md), it kept the send lag
// as low or lower than in-process at the default run's rate (hypothesis, 3 and 6 configuration
// runs at once) and at 250/s and 500/s per endpoint, in 6 of 7 same-window pairs; both were
// valid in every pair. (experiment.Options' zero value stays in-process: a program embedding
// the runner need not have an attack command.)
const defaultLoad = experiment.LoadProcess

// loadFlagUsage is the help of --load on run and sweep.
const loadFlagUsage = "where each configuration's load generator runs: process (a child 'bulkhead attack' per configuration run, its spec and logs in the configuration's folder) or inprocess (inside this process)"
