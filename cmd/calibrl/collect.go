package main

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/spec"
	"github.com/calibrl/calibrl/task"
)

func newCollectCmd() *cobra.Command {
	var (
		ef     episodeFlags
		agents string
		out    string
	)
	cmd := &cobra.Command{
		Use:   "collect",
		Short: "Record conversations of scripted agents with a user as JSONL logs",
		Long: `collect plays scripted reference agents against a user (by default the human
proxy) and writes every episode, with its oracle context, as one JSON line.
These logs stand in for real human interaction data: the calibrated user
simulator is fitted to them, the base policy is cloned from them, and static
context RL replays them.

With several profiles the n episodes are shared between them, each profile
on its own instances. Episodes are written as they finish, in order, so
memory does not grow with n. The file appears only when complete: an
interrupted (SIGINT, SIGTERM: within about a second, exit status 130) or
failed run leaves no file, partial or otherwise.`,
		Example: `  calibrl collect --task mathchat --agent scripted:careful,sloppy,guesser,answer-seeker -n 2000 --seed 1 --out logs.jsonl`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ef.validate(); err != nil {
				return err
			}
			t, err := task.Lookup(ef.task)
			if err != nil {
				return err
			}
			names := spec.Agents(agents)
			if len(names) == 0 {
				return fmt.Errorf("--agent: name at least one agent")
			}
			// "scripted:a,b" means scripted:a and scripted:b.
			if kind, _, ok := strings.Cut(names[0], ":"); ok {
				for i := 1; i < len(names); i++ {
					if !strings.Contains(names[i], ":") {
						names[i] = kind + ":" + names[i]
					}
				}
			}
			built := make([]dialog.Agent, len(names))
			for i, n := range names {
				if built[i], err = spec.Agent(t, n); err != nil {
					return err
				}
			}
			u, err := spec.User(t, ef.user)
			if err != nil {
				return err
			}
			if err := checkWritable(out, input{"data", ef.dataPath}); err != nil {
				return err
			}
			n := 0
			err = atomicfile.Write(out, func(w io.Writer) error {
				return rollout.ShareStream(cmd.Context(), t, built, names, u, rollout.Config{
					Split: ef.split, Instances: ef.n, Seed: ef.seed, MaxTurns: ef.maxTurns,
					Workers: ef.workers, UserName: ef.user, Progress: progress("collect", ef.n),
				}, func(ep dialog.Episode) error {
					n++
					return dialog.WriteEpisodes(w, []dialog.Episode{ep})
				})
			})
			if err != nil {
				return err
			}
			slog.Info("collected", "episodes", n, "agents", names, "user", ef.user, "out", out)
			return nil
		},
	}
	ef.register(cmd, "train")
	cmd.Flags().StringVar(&agents, "agent", "scripted:careful", "comma-separated agents, e.g. scripted:careful,sloppy")
	cmd.Flags().StringVarP(&out, "out", "o", "", "output JSONL file (required)")
	cmd.MarkFlagRequired("out")
	return cmd
}
