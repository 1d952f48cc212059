// Package export turns calibrl episode logs into the datasets GPU trainers
// read: chat JSONL (OpenAI fine-tuning format, TRL's "messages" column)
// and Parquet (verl, TRL, OpenRLHF read it with pyarrow / datasets).
//
// Three kinds of data come out of one log:
//
//   - sim: simulator SFT data. Each episode becomes one role-flipped chat
//     in which the user is the assistant: the system message is the
//     oracle context (remote.UserSystemPrompt, the same prompt the LLM user
//     is role-played from), the agent's turns are "user" messages and the
//     user's turns are "assistant" replies in the JSON shape
//     {"message": ..., "end": ..., "satisfied": ...}. A model fine-tuned
//     on it plugs straight in as --user remote:MODEL.
//   - policy: policy SFT data. Each episode becomes the agent's chat as
//     calibrl's own policy reads it (dialog.AgentChat): its instructions
//     (and the draft, for docedit) as the system message, the user's turns
//     as "user", its own as "assistant", the environment's notes as system
//     messages where they stand.
//   - rollouts: one row per agent turn with the conversation so far as the
//     prompt (a list of messages), the agent's message as the response and
//     the episode's final reward, plus verl's data_source and
//     reward_model.ground_truth columns.
//   - prompts: one row per episode with the agent's first view (system
//     instructions and the user's opening) as the prompt and, in
//     extra_info.interaction_kwargs, what a verl Interaction needs to open
//     the same episode on `calibrl serve` (task, split, index, sample,
//     episode_seed): the RL dataset for training through the service. The
//     same kwargs are in the label column as a JSON string and the data
//     source in the datasource column, the two columns OpenRLHF's
//     PromptDataset reads besides the prompt (--data.label_key label);
//     TRL passes every column to the environment's reset.
//
// Every row's data_source is DataSource(task): verl routes rows to a
// reward function by it, and its default scorer knows no calibrl task
// (it raises NotImplementedError), so the name says which function the
// row needs: adapters/calibrl_verl_reward.py's compute_score.
//
// Files are written atomically: a failed export leaves no partial file.
// Stream reads and converts one episode at a time, so a log of any size
// exports in bounded memory.
package export

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/remote"
)

// Kinds of dataset.
const (
	KindSim      = "sim"
	KindPolicy   = "policy"
	KindRollouts = "rollouts"
	KindPrompts  = "prompts"
)

// Formats of file.
const (
	FormatChatJSONL = "chat-jsonl"
	FormatParquet   = "parquet"
)

// Options say what to export.
type Options struct {
	// Kind is sim, policy or rollouts.
	Kind string
	// Format is chat-jsonl or parquet. For rollouts, chat-jsonl writes the
	// rows as JSON lines.
	Format string
	// SuccessOnly keeps only episodes the task judged solved (policy SFT
	// by rejection sampling). Default false: every episode.
	SuccessOnly bool
}

// Validate reports unknown kinds and formats.
func (o Options) Validate() error {
	switch o.Kind {
	case KindSim, KindPolicy, KindRollouts, KindPrompts:
	default:
		return fmt.Errorf("export: unknown kind %q (want %s)", o.Kind, Kinds())
	}
	switch o.Format {
	case FormatChatJSONL, FormatParquet:
	default:
		return fmt.Errorf("export: unknown format %q (want chat-jsonl or parquet)", o.Format)
	}
	return nil
}

// Message is one chat message of an exported row.
type Message struct {
	Role    string `json:"role" parquet:"role"`
	Content string `json:"content" parquet:"content"`
}

// ChatRow is one SFT conversation.
type ChatRow struct {
	Messages []Message `json:"messages" parquet:"messages,list"`
}

// RewardModel is verl's reward column: the rule style and the truth a
// rule-based reward compares against.
type RewardModel struct {
	Style       string `json:"style" parquet:"style"`
	GroundTruth string `json:"ground_truth" parquet:"ground_truth"`
}

// RolloutRow is one agent turn of a scored episode.
type RolloutRow struct {
	DataSource  string      `json:"data_source" parquet:"data_source"`
	Prompt      []Message   `json:"prompt" parquet:"prompt,list"`
	Response    string      `json:"response" parquet:"response"`
	Reward      float64     `json:"reward" parquet:"reward"`
	Success     bool        `json:"success" parquet:"success"`
	EpisodeID   string      `json:"episode_id" parquet:"episode_id"`
	Turn        int64       `json:"turn" parquet:"turn"` // 1-based agent turn
	Turns       int64       `json:"turns" parquet:"turns"`
	Split       string      `json:"split" parquet:"split"`
	Index       int64       `json:"index" parquet:"index"`
	Agent       string      `json:"agent" parquet:"agent"`
	User        string      `json:"user" parquet:"user"`
	RewardModel RewardModel `json:"reward_model" parquet:"reward_model"`
}

// InteractionKwargs name one served episode: POST them (as JSON, without
// name) to /v1/episodes to replay the logged episode's user. Task is the
// full name the episode was logged under, level and options included;
// EpisodeSeed is a decimal string, since a 64-bit seed does not survive
// JSON parsers that read numbers as doubles; MaxTurns is the logged turn
// limit (0, left out, for logs written before it was recorded: the
// server's own limit applies). LoggedUser is the user the episode was
// logged with and Opening that user's first message, the one the row's
// prompt ends with: an adapter sends both when it opens the episode, and
// the server opens it with that opening when the training user is
// another (the human proxy's rows, trained against a simulator), or
// refuses it naming the cause when the same user opens otherwise.
type InteractionKwargs struct {
	// Name selects the verl interaction ("calibrl").
	Name        string `json:"name" parquet:"name"`
	Task        string `json:"task" parquet:"task"`
	Split       string `json:"split" parquet:"split"`
	Index       int64  `json:"index" parquet:"index"`
	Sample      int64  `json:"sample" parquet:"sample"`
	EpisodeSeed string `json:"episode_seed" parquet:"episode_seed"`
	MaxTurns    int64  `json:"max_turns,omitempty" parquet:"max_turns"`
	LoggedUser  string `json:"logged_user,omitempty" parquet:"logged_user"`
	Opening     string `json:"opening,omitempty" parquet:"opening"`
}

// ExtraInfo is verl's per-row extra_info column.
type ExtraInfo struct {
	Split             string            `json:"split" parquet:"split"`
	Index             int64             `json:"index" parquet:"index"`
	InteractionKwargs InteractionKwargs `json:"interaction_kwargs" parquet:"interaction_kwargs"`
}

// PromptRow is one episode's opening, as verl's RL dataset rows are, with
// the two columns OpenRLHF's PromptDataset reads besides the prompt:
// Label, the interaction kwargs as a JSON string (its label reaches the
// agent's reset as is, and a string survives every loader and Ray hop),
// and Datasource, the data source under OpenRLHF's name.
type PromptRow struct {
	DataSource  string      `json:"data_source" parquet:"data_source"`
	Prompt      []Message   `json:"prompt" parquet:"prompt,list"`
	Ability     string      `json:"ability" parquet:"ability"`
	RewardModel RewardModel `json:"reward_model" parquet:"reward_model"`
	ExtraInfo   ExtraInfo   `json:"extra_info" parquet:"extra_info"`
	Label       string      `json:"label" parquet:"label"`
	Datasource  string      `json:"datasource" parquet:"datasource"`
}

// DataSourcePrefix starts every exported row's data_source.
const DataSourcePrefix = "calibrl/"

// DataSource is the data_source of a row of the task: the prefix, then
// the task's full name ("calibrl/mathchat:easy"). verl groups validation
// metrics by it, and the shipped reward function claims exactly the rows
// it starts with, handing any other source to verl's own scorer.
func DataSource(task string) string { return DataSourcePrefix + task }

// PromptRows are the agent's first view of each episode, with what opens
// the same episode on the service.
func PromptRows(eps []dialog.Episode) []PromptRow {
	rows := make([]PromptRow, 0, len(eps))
	for i := range eps {
		rows = append(rows, promptRow(&eps[i]))
	}
	return rows
}

func promptRow(ep *dialog.Episode) PromptRow {
	first := ep.Messages[:1]
	kw := InteractionKwargs{
		Name: "calibrl", Task: ep.Task, Split: ep.Split, Index: int64(ep.Index), Sample: int64(ep.Sample),
		EpisodeSeed: strconv.FormatUint(ep.Seed, 10), MaxTurns: int64(ep.MaxTurns),
		LoggedUser: ep.User, Opening: first[0].Content,
	}
	label, _ := json.Marshal(kw) // strings and integers: it cannot fail
	return PromptRow{
		DataSource: DataSource(ep.Task), Prompt: convert(dialog.AgentChat(&ep.View, first)), Ability: ep.Task,
		RewardModel: RewardModel{Style: "rule", GroundTruth: ep.Oracle.Truth},
		ExtraInfo:   ExtraInfo{Split: ep.Split, Index: int64(ep.Index), InteractionKwargs: kw},
		Label:       string(label), Datasource: DataSource(ep.Task),
	}
}

func convert(msgs []dialog.Message) []Message {
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: string(m.Role), Content: m.Content}
	}
	return out
}

// SimRows are the simulator SFT conversations of eps.
func SimRows(eps []dialog.Episode) []ChatRow {
	rows := make([]ChatRow, 0, len(eps))
	for i := range eps {
		rows = append(rows, simRow(&eps[i]))
	}
	return rows
}

func simRow(ep *dialog.Episode) ChatRow {
	chat := remote.RolePlayChat(&ep.Oracle, ep.Messages, ep.End.ByUser(), ep.End == dialog.Solved)
	return ChatRow{Messages: convert(chat)}
}

// PolicyRows are the agent's conversations, only the solved ones when
// successOnly is set. Episodes where the agent never spoke are skipped.
func PolicyRows(eps []dialog.Episode, successOnly bool) []ChatRow {
	var rows []ChatRow
	for i := range eps {
		rows = policyRows(&eps[i], successOnly, rows)
	}
	return rows
}

// policyRows appends ep's policy row, if it has one, to dst.
func policyRows(ep *dialog.Episode, successOnly bool, dst []ChatRow) []ChatRow {
	if (successOnly && !ep.Success) || ep.Turns == 0 {
		return dst
	}
	return append(dst, ChatRow{Messages: convert(dialog.AgentChat(&ep.View, ep.Messages))})
}

// RolloutRows are one row per agent turn, only of solved episodes when
// successOnly is set.
func RolloutRows(eps []dialog.Episode, successOnly bool) []RolloutRow {
	var rows []RolloutRow
	for i := range eps {
		rows = rolloutRows(&eps[i], successOnly, rows)
	}
	return rows
}

// rolloutRows appends ep's rows to dst.
func rolloutRows(ep *dialog.Episode, successOnly bool, dst []RolloutRow) []RolloutRow {
	if successOnly && !ep.Success {
		return dst
	}
	turn := int64(0)
	for j, m := range ep.Messages {
		if m.Role != dialog.RoleAssistant {
			continue
		}
		turn++
		dst = append(dst, RolloutRow{
			DataSource: DataSource(ep.Task), Prompt: convert(dialog.AgentChat(&ep.View, ep.Messages[:j])), Response: m.Content,
			Reward: ep.Reward, Success: ep.Success, EpisodeID: ep.ID, Turn: turn, Turns: int64(ep.Turns),
			Split: ep.Split, Index: int64(ep.Index), Agent: ep.Agent, User: ep.User,
			RewardModel: RewardModel{Style: "rule", GroundTruth: ep.Oracle.Truth},
		})
	}
	return dst
}

// Write exports eps, all held in memory, to path as opt says and returns
// the number of rows. Writing no rows is an error: an empty dataset is
// always a mistake upstream (a wrong log, a filter that matched nothing).
// Stream writes the same file from episodes read one at a time.
func Write(path string, eps []dialog.Episode, opt Options) (int, error) {
	if err := opt.Validate(); err != nil {
		return 0, err
	}
	var (
		n    int
		fill func(io.Writer) error
	)
	switch opt.Kind {
	case KindSim:
		rows := SimRows(filter(eps, opt.SuccessOnly))
		n, fill = len(rows), writer(rows, opt.Format)
	case KindPolicy:
		rows := PolicyRows(eps, opt.SuccessOnly)
		n, fill = len(rows), writer(rows, opt.Format)
	case KindRollouts:
		rows := RolloutRows(eps, opt.SuccessOnly)
		n, fill = len(rows), writer(rows, opt.Format)
	case KindPrompts:
		rows := PromptRows(filter(eps, opt.SuccessOnly))
		n, fill = len(rows), writer(rows, opt.Format)
	}
	if n == 0 {
		return 0, fmt.Errorf("export %s: no rows from %d episodes (kind %s, success only %v)", path, len(eps), opt.Kind, opt.SuccessOnly)
	}
	if err := atomicfile.Write(path, fill); err != nil {
		return 0, fmt.Errorf("export: %w", err)
	}
	return n, nil
}

func filter(eps []dialog.Episode, successOnly bool) []dialog.Episode {
	if !successOnly {
		return eps
	}
	var out []dialog.Episode
	for _, ep := range eps {
		if ep.Success {
			out = append(out, ep)
		}
	}
	return out
}

func writer[T any](rows []T, format string) func(io.Writer) error {
	if format == FormatParquet {
		return func(w io.Writer) error { return WriteParquet(w, rows) }
	}
	return func(w io.Writer) error { return WriteJSONL(w, rows) }
}

// WriteJSONL writes rows as JSON Lines.
func WriteJSONL[T any](w io.Writer, rows []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for i := range rows {
		if err := enc.Encode(&rows[i]); err != nil {
			return fmt.Errorf("row %d: %w", i, err)
		}
	}
	return nil
}

// WriteParquet writes rows as one Parquet file (zstd-compressed columns).
func WriteParquet[T any](w io.Writer, rows []T) error {
	pw := parquet.NewGenericWriter[T](w, parquet.Compression(&parquet.Zstd))
	if _, err := pw.Write(rows); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	if err := pw.Close(); err != nil {
		return fmt.Errorf("parquet: %w", err)
	}
	return nil
}

// kinds lists the kinds for help text.
func Kinds() string {
	return strings.Join([]string{KindSim, KindPolicy, KindRollouts, KindPrompts}, ", ")
}
