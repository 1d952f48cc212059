package main

import (
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/export"
)

func newExportCmd() *cobra.Command {
	var (
		logs, out string
		opt       = export.Options{Kind: export.KindSim, Format: export.FormatChatJSONL}
	)
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export episode logs as SFT or RL datasets for GPU trainers (chat JSONL, Parquet)",
		Long: `export turns an episodes JSONL file (from collect, eval --episodes-out, or a
training run) into the datasets GPU trainers read:

  --kind sim       simulator SFT data: role-flipped chats where the user is the
                   assistant, conditioned on the oracle context in the system
                   message, replying in the LLM user's JSON shape
  --kind policy    policy SFT data: the agent's chats (--success-only for
                   rejection sampling)
  --kind rollouts  one row per agent turn: prompt (messages so far), response,
                   reward, plus verl's data_source and reward_model columns
  --kind prompts   one row per episode: the agent's first view as the prompt and
                   extra_info.interaction_kwargs to replay the episode's user on
                   calibrl serve (the RL dataset for training through the service),
                   the same kwargs as JSON in label (OpenRLHF's --data.label_key)
                   and data_source calibrl/TASK (docs/scale.md)

--format chat-jsonl writes {"messages": [...]} lines (OpenAI fine-tuning,
TRL); --format parquet writes a Parquet file (verl, TRL, OpenRLHF).
Episodes are read and converted one at a time, so memory does not grow with
the size of the log. The file appears only when complete: a failed or
interrupted (SIGINT, SIGTERM: exit status 130) export leaves no file,
partial or otherwise.`,
		Example: `  calibrl export --logs logs.jsonl --kind sim --format chat-jsonl --out sim_sft.jsonl
  calibrl export --logs runs/x/episodes.jsonl --kind rollouts --format parquet --out rollouts.parquet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opt.Validate(); err != nil {
				return err
			}
			if err := checkWritable(out, input{"logs", logs}); err != nil {
				return err
			}
			src, err := dialog.OpenEpisodes(logs)
			if err != nil {
				return err
			}
			defer src.Close()
			st, err := export.Stream(cmd.Context(), out, src, opt)
			if err != nil {
				return err
			}
			slog.Info("exported", "episodes", st.Episodes, "rows", st.Rows, "kind", opt.Kind, "format", opt.Format, "out", out)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&logs, "logs", "", "episodes JSONL file (required)")
	fl.StringVarP(&out, "out", "o", "", "output file (required)")
	fl.StringVar(&opt.Kind, "kind", opt.Kind, "what to export: "+export.Kinds())
	fl.StringVar(&opt.Format, "format", opt.Format, "file format: chat-jsonl or parquet")
	fl.BoolVar(&opt.SuccessOnly, "success-only", false, "keep only episodes the task judged solved")
	cmd.MarkFlagRequired("logs")
	cmd.MarkFlagRequired("out")
	return cmd
}
