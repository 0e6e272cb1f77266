package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bulkheadlab/bulkhead/experiment"
)

// abortTimeout bounds what the second interrupt does before the process exits.
const abortTimeout = 5 * time.Second

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

// execute runs the CLI with args and returns the process exit code (see exit.go). The first SIGINT/SIGTERM
// cancels the command's context (a run then stops its load, flushes and closes every file);
// the second removes the run's proxies from an external Toxiproxy and marks its folder
// interrupted (at most abortTimeout), then exits; a third exits at once.
func execute(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restore default handling: the second signal kills the process
		again := make(chan os.Signal, 1)
		signal.Notify(again, os.Interrupt, syscall.SIGTERM)
		<-again
		fmt.Fprintln(os.Stderr, "bulkhead: second interrupt: removing this run's proxies, then exiting (a third exits at once)")
		go func() { <-again; os.Exit(ExitInterrupted) }()
		actx, cancel := context.WithTimeout(context.Background(), abortTimeout)
		if err := experiment.Abort(actx); err != nil {
			fmt.Fprintln(os.Stderr, "bulkhead: leaving:", err)
		}
		cancel()
		os.Exit(ExitInterrupted)
	}()
	return runCLI(ctx, args, os.Stdout, os.Stderr)
}

// runCLI runs the CLI with args, printing to out and errOut, and returns the exit code. It
// blocks until the command ends.
func runCLI(ctx context.Context, args []string, out, errOut io.Writer) int {
	root := newRootCmd(out, errOut)
	reached := false
	root.PersistentPreRun = func(*cobra.Command, []string) { reached = true }
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(errOut, "bulkhead:", err)
	}
	return exitCode(ctx, err, reached)
}

func newRootCmd(out, errOut io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "bulkhead",
		Short: "Measure shared pools against per-dependency bulkheads under injected faults",
		Long: `bulkhead runs a sample HTTP service whose endpoints call dependencies through one shared
pool or through per-dependency bulkheads, puts Toxiproxy in front of the dependencies, drives
every endpoint at a fixed open-model rate, and reports what happened, which resource ran out
and whether the scenario's claims held, each with a 95% interval (exit code 0 only when all do).`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version,
	}
	root.SetOut(out)
	root.SetErr(errOut)
	root.AddCommand(
		newNewCmd(),
		newRunCmd(nil),
		newValidateCmd(),
		newSchemaCmd(),
		newPlanCmd(),
		newListCmd(),
		newReportCmd(),
		newCompareCmd(),
		newServeCmd(),
		newDepCmd(),
		newSweepCmd(nil),
		newToxiproxyCmd(),
		newAttackCmd(),
		newRenderCmd(),
	)
	return root
}
