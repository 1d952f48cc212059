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
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/infile"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "calibrl:", err)
		if errors.Is(err, context.Canceled) {
			os.Exit(130)
		}
		os.Exit(1)
	}
}

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
		newBenchCmd(),
		newServeCmd(),
		newExportCmd(),
		newConvertLogsCmd(),
		newReportCmd(),
	// Subcommands register here, one constructor per file.
	)
	return root
}
