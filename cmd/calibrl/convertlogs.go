package main

import (
	"fmt"
	"io"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/humanlog"
	"github.com/calibrl/calibrl/infile"
	"github.com/calibrl/calibrl/task"
)

func newConvertLogsCmd() *cobra.Command {
	var (
		in, out string
		m       humanlog.Mapping
	)
	cmd := &cobra.Command{
		Use:   "convert-logs",
		Short: "Turn plain chat JSONL (your own human conversations) into calibrl's human-log schema",
		Long: `convert-logs reads chat JSONL, one conversation a line with its turns in a
messages list ({"role","content"}, or ShareGPT's {"from","value"}), and writes
records of the ` + humanlog.Schema + ` schema (docs/HUMANLOGS.md): the
conversation with the oracle context the person held. Name the fields that
hold that context with the flags (dotted paths such as meta.answer reach into
nested objects); train-sim, train-policy --algo sft and fidelity --logs read
the result.

A record that lacks a required field, or holds a wrong one, stops the
conversion with its file, line and field ("chat.jsonl:7: field \"answer\":
missing"); nothing is filled with an empty value. The output appears only
when every record converted.`,
		Example: `  calibrl convert-logs --in chat.jsonl --out logs.jsonl --task mathchat \
      --id conv_id --instruction question --ground-truth answer --hidden-facts hidden --end solved`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" || out == "" {
				return fmt.Errorf("--in and --out are required")
			}
			if _, err := task.Lookup(m.Task); err != nil {
				return fmt.Errorf("--task: %w", err)
			}
			// Records name their data by content, never by this host's
			// path (task.CheckRecorded).
			if n, err := task.ParseName(m.Task); err == nil && n.Data.SHA256 == "" && n.Data.Path != "" {
				path := n.Data.Path
				n.Data = task.Data{}
				if m.Task, err = task.WithData(n.String(), path); err != nil {
					return fmt.Errorf("--task: %w", err)
				}
			}
			if err := checkWritable(out, input{"in", in}); err != nil {
				return err
			}
			f, err := infile.Open(cmd.Context(), in)
			if err != nil {
				return err
			}
			defer f.Close()
			var n int
			err = atomicfile.Write(out, func(w io.Writer) error {
				n, err = humanlog.Convert(f, in, w, m)
				return err
			})
			if err != nil {
				return err
			}
			slog.Info("convert-logs", "in", in, "out", out, "conversations", n, "schema", humanlog.Schema)
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d conversations (%s)\n", out, n, humanlog.Schema)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&in, "in", "", "plain chat JSONL to read (required)")
	f.StringVarP(&out, "out", "o", "", "human-log JSONL to write (required)")
	f.StringVar(&m.Task, "task", "mathchat", "task of every conversation (with its level or data, as --task takes it)")
	f.StringVar(&m.Messages, "messages", "messages", "field holding the turns")
	f.StringVar(&m.ID, "id", "", "field holding the conversation id (default: the line number)")
	f.StringVar(&m.Instruction, "instruction", "", "field holding the user's whole goal: the problem or the document request (required)")
	f.StringVar(&m.GroundTruth, "ground-truth", "", "field holding the answer (mathchat) or the target document (docedit) (required)")
	f.StringVar(&m.Draft, "draft", "", "field holding the document the agent started from (required for docedit)")
	f.StringVar(&m.Opening, "opening", "", "field holding what the user opened with, when it is not the first message")
	f.StringVar(&m.HiddenFacts, "hidden-facts", "", "field holding the facts the person held back until asked: strings or {text, value}")
	f.StringVar(&m.Persona, "persona", "", "field holding {patience, verbosity, typo_rate, clarity}")
	f.StringVar(&m.Split, "split", "", "field holding train or test (default: by a hash of the id, --test-percent to test)")
	f.IntVar(&m.TestPercent, "test-percent", 10, "percent of conversations held out for test when there is no --split field")
	f.StringVar(&m.End, "end-field", "", "field holding how the conversation ended: "+fmt.Sprint(humanlog.Ends))
	f.StringVar(&m.EndValue, "end", "", "how every conversation ended, when no --end-field: "+fmt.Sprint(humanlog.Ends))
	f.StringVar(&m.Agent, "agent-field", "", "field naming who played the agent")
	f.StringVar(&m.AgentValue, "agent", "", "who played the agent in every conversation (default "+humanlog.DefaultAgent+")")
	return cmd
}

// loadHumanLogs reads a human-log file as episodes of t: the oracle
// context from the records, the agent's prompt from the task, and the
// outcome, reward and success as the task judges the conversation.
func loadHumanLogs(path string, t task.Task) ([]dialog.Episode, error) {
	recs, err := humanlog.Load(path)
	if err != nil {
		return nil, err
	}
	_, view, err := t.Instance("train", 0)
	if err != nil {
		return nil, err
	}
	eps := make([]dialog.Episode, 0, len(recs))
	for i := range recs {
		if task.Family(recs[i].Task) != t.Name() {
			return nil, fmt.Errorf("%s: conversation %s is a %s conversation, not %s", path, recs[i].ID, recs[i].Task, t.Name())
		}
		ep := recs[i].Episode(i)
		ep.View.Instructions = view.Instructions
		sc := t.Score(&ep.Oracle, ep.Messages)
		ep.Outcome, ep.Reward, ep.Success, ep.Metrics = sc.Outcome, sc.Reward, sc.Success, sc.Metrics
		eps = append(eps, ep)
	}
	return eps, nil
}
