// Package dialog holds the vocabulary every other part of calibrl speaks:
// messages, the oracle context only the user side sees, the agent's view,
// episodes, and the two small interfaces a conversation is run with (an
// agent and a user, each opened once per episode as a session).
package dialog

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// Role is who wrote a message.
type Role string

const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content"`
	// Tokens is the message's length in tokens under the counter the run
	// used (the model's tokenizer for model agents, ApproxTokens otherwise).
	Tokens int `json:"tokens,omitempty"`
}

// Fact is one piece of information the user holds. Hidden facts are withheld
// from the opening and revealed only when the agent asks about them.
type Fact struct {
	// Key names the quantity ("price_apple").
	Key string `json:"key"`
	// Text states the fact in full ("one apple costs $3").
	Text string `json:"text"`
	// Value is the number or word the fact carries ("3").
	Value string `json:"value,omitempty"`
	// Cues are lower-case words whose presence in an agent's question means
	// it is asking about this fact ("apple", "cost", "price").
	Cues []string `json:"cues,omitempty"`
	// Hidden facts are not in the user's opening.
	Hidden bool `json:"hidden,omitempty"`
}

// Edit is one step of a document user's hidden plan: what to change to turn
// the draft into the target.
type Edit struct {
	Kind     string `json:"kind"`             // "replace", "insert", "delete", "swap", ...
	Sentence int    `json:"sentence"`         // 0-based sentence index in the target
	From     string `json:"from,omitempty"`   // text in the draft
	To       string `json:"to,omitempty"`     // text the target has instead
	Hint     string `json:"hint,omitempty"`   // how a person would describe it vaguely
	Detail   string `json:"detail,omitempty"` // how a person would describe it concretely
}

// Persona is the per-episode character of a user. It is drawn from the
// instance's seed, so the held-out split has personas never seen in training.
type Persona struct {
	// Patience is how many unhelpful agent turns the user tolerates before
	// giving up.
	Patience int `json:"patience"`
	// Verbosity in [0,1]: how much a user says beyond the minimum.
	Verbosity float64 `json:"verbosity"`
	// TypoRate in [0,1]: chance that a message carries a typo.
	TypoRate float64 `json:"typo_rate"`
	// Clarity in [0,1]: chance that an answer to a question is complete
	// rather than partial or a question back.
	Clarity float64 `json:"clarity"`
	// Threshold is the quality a document user settles for (BLEU, 0–100).
	Threshold float64 `json:"threshold,omitempty"`
}

// Oracle is the oracle context: everything only the user side sees. It is
// never shown to the agent.
type Oracle struct {
	Task  string `json:"task"`
	ID    string `json:"id"`    // instance id, e.g. "mathchat/test/17"
	Split string `json:"split"` // "train" or "test"
	// Family is the generator family or data source ("rates", "gsm8k", "memo").
	Family string `json:"family,omitempty"`
	// Instruction is the user's whole goal in words: the full problem
	// statement with every fact, or the document request.
	Instruction string `json:"instruction"`
	// Opening is how the user starts when nothing else is decided: the
	// problem with hidden facts left out, or the coarse request.
	Opening string `json:"opening"`
	// Truth is the ground truth: the exact answer, or the target document.
	Truth string `json:"truth"`
	// Solution is a worked solution, for judging only.
	Solution string  `json:"solution,omitempty"`
	Facts    []Fact  `json:"facts,omitempty"`
	Draft    string  `json:"draft,omitempty"`
	Edits    []Edit  `json:"edits,omitempty"`
	Persona  Persona `json:"persona"`
	// Extra carries task-specific data the generic fields do not.
	Extra json.RawMessage `json:"extra,omitempty"`
}

// HiddenFacts returns the facts withheld from the opening.
func (o *Oracle) HiddenFacts() []Fact {
	var hidden []Fact
	for _, f := range o.Facts {
		if f.Hidden {
			hidden = append(hidden, f)
		}
	}
	return hidden
}

// View is what the agent is shown before the conversation starts.
type View struct {
	Task string `json:"task"`
	// Instructions is the agent's system prompt.
	Instructions string `json:"instructions"`
	// Draft is the document the agent starts from (docedit).
	Draft string `json:"draft,omitempty"`
}

// EndReason says why an episode stopped.
type EndReason string

const (
	// Solved: the user accepted the agent's outcome and ended.
	Solved EndReason = "solved"
	// GaveUp: the user's patience ran out.
	GaveUp EndReason = "gave_up"
	// MaxTurns: the turn limit was reached.
	MaxTurns EndReason = "max_turns"
	// UserEnded: the user ended for another reason (for instance a
	// sycophantic acceptance of a wrong answer, or a premature stop).
	UserEnded EndReason = "user_ended"
)

// ByUser reports whether the user, rather than the turn limit, ended the
// episode.
func (r EndReason) ByUser() bool {
	return r == Solved || r == GaveUp || r == UserEnded
}

// Episode is one whole dialogue and its outcome.
type Episode struct {
	ID string `json:"id"`
	// Task is the name the task was built from, level and options
	// included ("mathchat:easy"): the name that rebuilds this instance.
	// Logs written before it carried the level hold only the family.
	Task   string `json:"task"`
	Split  string `json:"split"`
	Agent  string `json:"agent"`
	User   string `json:"user"`
	Seed   uint64 `json:"seed"`
	Index  int    `json:"index"`            // instance index within the split
	Sample int    `json:"sample,omitempty"` // sample within a group of episodes on one instance
	Oracle Oracle `json:"oracle"`
	View   View   `json:"view"`
	// Messages, in order, starting with the user's opening.
	Messages []Message `json:"messages"`
	// Outcome is the agent's final answer or document as the task read it.
	Outcome string    `json:"outcome"`
	Reward  float64   `json:"reward"`
	Success bool      `json:"success"`
	End     EndReason `json:"end"`
	// Turns counts agent messages.
	Turns int `json:"turns"`
	// MaxTurns is the turn limit the episode was played under (0 in logs
	// written before it was recorded).
	MaxTurns int `json:"max_turns,omitempty"`
	Tokens   int `json:"tokens"`
	// Metrics holds task-specific scores (bleu, chrf).
	Metrics map[string]float64 `json:"metrics,omitempty"`
}

// Score is a task's judgement of a finished conversation.
type Score struct {
	Outcome string
	Reward  float64
	Success bool
	Metrics map[string]float64
}

// Scorer is a task's outcome judgement.
type Scorer interface {
	Score(o *Oracle, msgs []Message) Score
}

// A TurnScorer is a task whose agent turns act on what the earlier turns
// made, as docedit's edit commands change the document the conversation
// holds so far: one of its turns means something only in its
// conversation, so it is judged there (Verdict).
type TurnScorer interface {
	// ScoreTurn judges the last message of msgs, an agent turn, in the
	// conversation before it: delivered reports that the turn delivers an
	// outcome (for docedit: shows a full document or gives an edit
	// command, and the document after it is not the draft), and sc is the
	// task's score of the outcome after it.
	ScoreTurn(o *Oracle, msgs []Message) (delivered bool, sc Score)
}

// Verdict reports whether the last message of msgs, an agent turn,
// delivers an outcome (an answer; for a TurnScorer, what its ScoreTurn
// counts as delivered, docedit's document that is not the draft) and
// whether the task scores that outcome a success. It is the one judgement
// of a single turn that simulators' checks, static RL's outcome reward and
// fidelity's verdicts share. A TurnScorer judges the turn in its
// conversation (a docedit command turn is applied to the current document
// first, as the environment applies it); any other task scores the turn on
// its own, so the turns before it do not matter.
func Verdict(s Scorer, o *Oracle, msgs []Message) (delivered, right bool) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != RoleAssistant {
		return false, false
	}
	var sc Score
	if ts, ok := s.(TurnScorer); ok {
		if delivered, sc = ts.ScoreTurn(o, msgs); !delivered {
			return false, false
		}
	} else {
		sc = s.Score(o, msgs[len(msgs)-1:])
	}
	if sc.Outcome == "" {
		return false, false
	}
	return true, sc.Success
}

// UserSession is one episode's user. Implementations keep whatever state
// they need (patience left, facts revealed) between calls.
type UserSession interface {
	// Open returns the user's first message.
	Open(ctx context.Context) (string, error)
	// Reply answers the last agent message in history. end reports that the
	// user ends the conversation; reply may still carry a last message
	// ("thanks, that's right!").
	Reply(ctx context.Context, history []Message) (reply string, end bool, err error)
}

// User starts user sessions.
type User interface {
	NewSession(o *Oracle, rng *rand.Rand) UserSession
}

// AgentSession is one episode's agent.
type AgentSession interface {
	// Act returns the agent's next message given the conversation so far
	// (which ends with a user message).
	Act(ctx context.Context, history []Message) (string, error)
}

// Agent starts agent sessions.
type Agent interface {
	NewSession(v *View, rng *rand.Rand) AgentSession
}

// BatchAgent is implemented by agents that answer many conversations faster
// together than one by one (language models). The rollout calls ActBatch
// with sessions it got from NewSession, and history[i] belongs to
// sessions[i].
type BatchAgent interface {
	Agent
	ActBatch(ctx context.Context, sessions []AgentSession, histories [][]Message) ([]string, error)
}

// BatchUser is BatchAgent's twin for model-backed users. ends[i] reports
// that sessions[i] ended the conversation.
type BatchUser interface {
	User
	ReplyBatch(ctx context.Context, sessions []UserSession, histories [][]Message) (replies []string, ends []bool, err error)
}

// BatchOpener is implemented by model-backed users that write many
// conversations' openings faster together.
type BatchOpener interface {
	OpenBatch(ctx context.Context, sessions []UserSession) ([]string, error)
}

// SplitStream is the random-stream constant of an instance split: tasks
// seed split s's instance i from (i, SplitStream(s)), so train and test
// draw from different streams. The error names the unknown split.
func SplitStream(split string) (uint64, error) {
	switch split {
	case "train":
		return 0x7261696e, nil
	case "test":
		return 0x74657374, nil
	}
	return 0, fmt.Errorf("unknown split %q (want train or test)", split)
}

// NaiveRates are the artifacts of a prompted-style user simulator
// (docs/DESIGN.md, "The naive simulator"), each a chance in [0,1]; every task
// says what each one means for it and picks its defaults.
type NaiveRates struct {
	// Sycophancy: a wrong outcome is accepted and the episode ends.
	Sycophancy float64
	// Leakage: asked for the ground truth, the simulator gives it.
	Leakage float64
	// OverShare: the opening gives away every hidden fact or edit.
	OverShare float64
	// PrematureEnd: at each reply, the simulator ends early.
	PrematureEnd float64
}

// Validate reports a rate outside [0,1].
func (c *NaiveRates) Validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"sycophancy", c.Sycophancy}, {"leakage", c.Leakage}, {"over-share", c.OverShare}, {"premature end", c.PrematureEnd}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("naive %s rate %g not in [0,1]", r.name, r.v)
		}
	}
	return nil
}

// Scaled returns the rates with leakage and over-sharing multiplied by
// leak and sycophancy by syc (the dose of a dose-response study), each
// capped at 1: twice a leak rate of 0.7 is 1, and a report of the dose
// says so.
func (c NaiveRates) Scaled(leak, syc float64) NaiveRates {
	c.Leakage = min(1, c.Leakage*leak)
	c.OverShare = min(1, c.OverShare*leak)
	c.Sycophancy = min(1, c.Sycophancy*syc)
	return c
}

// Accepts reports whether the last message of msgs is the user's and
// says one of phrases, the ways a scripted user accepts an outcome: the
// reward of a task judged by its user (the acceptance ablation). A
// message may add up to four words before the phrase (a filler) and misspell one of
// its words (a typo), as the human proxy's messages do.
func Accepts(msgs []Message, phrases []string) bool {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != RoleUser {
		return false
	}
	got := strings.Fields(strings.ToLower(msgs[len(msgs)-1].Content))
	for _, p := range phrases {
		want := strings.Fields(strings.ToLower(p))
		for skip := 0; skip <= 4 && skip+len(want) <= len(got); skip++ {
			if skip+len(want) != len(got) {
				continue
			}
			miss := 0
			for i, w := range want {
				if got[skip+i] != w {
					miss++
				}
			}
			if miss <= 1 {
				return true
			}
		}
	}
	return false
}
