// Command calibrl trains multi-turn dialogue agents with reinforcement
// learning against a calibrated user simulator, and measures how far each
// training regime drifts from real users.
//
// This file only builds the command tree; every subcommand lives in its own
// file, parses flags, fills a config and calls a package.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/infile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := execute(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// execute runs the command line args and returns the exit status: 0; 1
// after an error, which it writes to stderr; 130 when ctx ended (SIGINT,
// SIGTERM), saying so, and for a command that resumes, that the same
// command picks up where this one stopped.
func execute(ctx context.Context, args []string, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		fmt.Fprintf(stderr, "calibrl: interrupted (%v)\n", err)
		if resumes[cmd.Name()] {
			fmt.Fprintln(stderr, "calibrl: every finished stage and the running ones' last checkpoints are kept: the same command resumes from there")
		}
		return 130
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "calibrl:", err)
		return 130
	}
	fmt.Fprintln(stderr, "calibrl:", err)
	return 1
}

// resumes names the commands that pick up an interrupted run where it
// stopped when run again with the same flags.
var resumes = map[string]bool{"reproduce": true, "horizon": true, "train-sim": true, "train-policy": true}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "calibrl",
		Short: "Interactive RL for dialogue agents against a calibrated user simulator",
		Long: `calibrl trains multi-turn dialogue agents with reinforcement learning against a
user simulator fitted to real people's behaviour, and reports how far each
training regime (static logs, naive simulator, calibrated simulator) drifts
from real users.

Everything runs on a laptop by default: procedural tasks, a scripted human
proxy and small transformer models trained by calibrl's own engine.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Reads of outside input stop at the command's interrupt (SIGINT,
		// SIGTERM) too, even those deep in a task name's lookup that have
		// no context to be given (infile).
		PersistentPreRun: func(cmd *cobra.Command, _ []string) { infile.SetInterrupt(cmd.Context()) },
	}
	root.AddCommand(
		withPrecision(newEvalCmd()),
		withPrecision(newCollectCmd()),
		newTrainSimCmd(),
		withPrecision(newTrainPolicyCmd()),
		withPrecision(newFidelityCmd()),
		withPrecision(newReproduceCmd()),
		withPrecision(newHorizonCmd()),
		withPrecision(newBenchCmd()),
		newServeCmd(),
		newExportCmd(),
		newConvertLogsCmd(),
		newReportCmd(),
	// Subcommands register here, one constructor per file.
	)
	return root
}
