// Package docedit is the document-editing task (the paper's
// MediumDocEdit-Chat): a user holds a target document, the agent starts
// from a corrupted draft and the user's coarse request, the user reveals
// the edits it wants over the turns, and the agent is rewarded with the
// sentence BLEU of its last full document against the target.
//
// Targets come from an embedded generator of short notes, memos, product
// descriptions and instructions (templates and word lists written for
// this project, sized for small language models), or from a corpus the
// user points to (a folder of .txt files or a JSONL file of
// {"id","title","text"}), split into passages at blank lines. A draft is
// the target with 1–5 logged corruptions; their inverses are the user's
// hidden plan (dialog.Edit). The package also holds the task's scripted
// users, the human proxy ("human") and the prompted-style simulator
// ("naive"), and its scripted reference agents.
//
// The agent's document. An agent changes the document by writing edit
// commands that the environment applies ("In sentence 2, change "a" to
// "b".", commands.go), or shows a whole document after a line "Revised
// document:" (ExtractDocument). After a turn with commands the
// environment shows the user and the agent the current document
// (Environment). The outcome of an episode is the current document at its
// end (FinalDocument): the draft, changed by every agent turn in turn.
//
// Reward and success. An episode whose outcome is still the draft, the
// agent never having changed it, delivered nothing: it fails with reward 0
// (a user left with their own draft got no help; Metrics "delivered" is
// 0). Otherwise the reward is sacreBLEU's sentence BLEU of the outcome
// against the target divided by 100. Metrics carries "bleu" and "chrf"
// (0–100, both 0 without a delivery), "delivered" (0 or 1) and
// "draft_bleu", the untouched draft's BLEU. Success means the user would
// settle for the outcome: BLEU at or above the persona's Threshold (drawn
// in [80, 95]), or above DefaultSuccessBLEU when an oracle carries no
// threshold.
package docedit

import (
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
	"github.com/calibrl/calibrl/task/hashsplit"
	"github.com/calibrl/calibrl/task/persona"
)

// Name is the task's registry name.
const Name = "docedit"

// DefaultSuccessBLEU is the success level for an oracle without a persona
// threshold.
const DefaultSuccessBLEU = 90

// Config holds the task's knobs.
type Config struct {
	// Spec is the task name that rebuilds this task ("docedit:easy"),
	// which its episodes record; package task sets it (default the
	// family's name).
	Spec string
	// Kinds lists the document kinds to generate; empty means all of
	// KindNames().
	Kinds []string
	// MinSentences and MaxSentences bound a generated document's
	// sentences (default 3 and 4, within 2..6).
	MinSentences, MaxSentences int
	// MinWords and MaxWords bound a generated document's words (default
	// 30 and 60); documents outside are redrawn.
	MinWords, MaxWords int
	// MinEdits and MaxEdits bound the corruptions per draft (default 1
	// and 5, within 1..8).
	MinEdits, MaxEdits int
	// MinDraftBLEU and MaxDraftBLEU bound the draft's sentence BLEU
	// against the target (default 40 and 70).
	MinDraftBLEU, MaxDraftBLEU float64
	// Seed offsets every instance seed (default 0).
	Seed uint64
	// Corpus, when set, is a folder of .txt files or a .jsonl file whose
	// passages are the targets instead of generated documents.
	Corpus string
	// Naive configures the "naive" user.
	Naive NaiveConfig
	// Quote gives every agent the quote tool (Quote): it copies a phrase
	// the user quoted or the text they pasted into the agent's turn, and
	// the scripted agents use it. Default off (the task option ":quote").
	Quote bool
	// AcceptanceReward, the reward ablation, pays 1 when the episode
	// ends with the user accepting the document (dialog.Accepts: the
	// naive simulator's sycophantic thanks included) and 0 otherwise,
	// instead of its BLEU; the metrics and Success are still the
	// document's, and ScoreTurn's too. Default off (the task option
	// "reward=acceptance").
	AcceptanceReward bool
	// SlipRate is the chance that the sloppy agent gets one edit wrong
	// (default 0.5): it forgets it or misspells the new words.
	SlipRate float64
	// UserLedger gives the learned user simulator its own ledger
	// (Task.UserNotes): after each agent turn that asks what to change, a
	// note to the simulator alone stating the next change exactly. Default
	// off (the task option ":userledger").
	UserLedger bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{MinSentences: 3, MaxSentences: 4, MinWords: 30, MaxWords: 60, MinEdits: 1, MaxEdits: 5,
		MinDraftBLEU: 40, MaxDraftBLEU: 70, Naive: DefaultNaiveConfig(), SlipRate: 0.5}
}

// Validate reports the first bad knob.
func (c *Config) Validate() error {
	for _, k := range c.Kinds {
		if !slices.Contains(KindNames(), k) {
			return fmt.Errorf("docedit: unknown document kind %q (known: %v)", k, KindNames())
		}
	}
	switch {
	case c.MinSentences < 2 || c.MaxSentences < c.MinSentences || c.MaxSentences > 6:
		return fmt.Errorf("docedit: sentences %d..%d not within 2..6", c.MinSentences, c.MaxSentences)
	case c.MinWords < 1 || c.MaxWords < c.MinWords:
		return fmt.Errorf("docedit: words %d..%d: need 1 ≤ min ≤ max", c.MinWords, c.MaxWords)
	case c.MinEdits < 1 || c.MaxEdits < c.MinEdits || c.MaxEdits > 8:
		return fmt.Errorf("docedit: edits %d..%d not within 1..8", c.MinEdits, c.MaxEdits)
	case c.MinDraftBLEU < 0 || c.MaxDraftBLEU < c.MinDraftBLEU || c.MaxDraftBLEU >= 100:
		return fmt.Errorf("docedit: draft BLEU %g..%g: need 0 ≤ min ≤ max < 100", c.MinDraftBLEU, c.MaxDraftBLEU)
	case c.SlipRate < 0 || c.SlipRate > 1:
		return fmt.Errorf("docedit: slip rate %g not in [0,1]", c.SlipRate)
	}
	if err := c.Naive.Validate(); err != nil {
		return fmt.Errorf("docedit: %w", err)
	}
	return nil
}

func (c *Config) kinds() []string {
	if len(c.Kinds) == 0 {
		return KindNames()
	}
	return c.Kinds
}

// Task is the docedit task. Build it with New.
type Task struct {
	cfg    Config
	corpus *Corpus // nil unless Config.Corpus is set
}

// New builds the task, loading the corpus when one is configured.
func New(cfg Config) (*Task, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkTemplates(); err != nil {
		return nil, err
	}
	t := &Task{cfg: cfg}
	if cfg.Corpus != "" {
		c, err := LoadCorpus(cfg.Corpus)
		if err != nil {
			return nil, err
		}
		t.corpus = c
	}
	return t, nil
}

// Name returns "docedit".
func (t *Task) Name() string { return Name }

// Spec is the task name that rebuilds t (Config.Spec).
func (t *Task) Spec() string {
	if t.cfg.Spec == "" {
		return Name
	}
	return t.cfg.Spec
}

// AgentInstructions is every agent's system prompt; the draft follows it
// in the view.
const AgentInstructions = "Ask the user what to change in the draft. Edit it with commands, such as: In sentence 2, change \"A\" to \"B\". Or write \"Revised document:\" and the whole text."

// Instance returns instance index of split: a target (generated from a
// generator seeded by (Config.Seed, split, index), or passage index of the
// corpus's split, wrapping around), its draft and plan, and a persona. A
// target that cannot be corrupted into the BLEU band is redrawn (for a
// corpus: the next passage is taken).
func (t *Task) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	stream, err := dialog.SplitStream(split)
	if err != nil {
		return nil, nil, fmt.Errorf("docedit: %w", err)
	}
	if index < 0 {
		return nil, nil, fmt.Errorf("docedit: negative instance index %d", index)
	}
	id := fmt.Sprintf("%s/%s/%d", Name, split, index)
	for attempt := uint64(0); attempt < 64; attempt++ {
		rng := rand.New(rand.NewPCG(t.cfg.Seed^uint64(index)*0x9e3779b97f4a7c15, stream<<8|attempt))
		var target, family string
		if t.corpus != nil {
			// A passage no draft can be made of gives way to the next one.
			p, err := t.corpus.passage(split, index+int(attempt))
			if err != nil {
				return nil, nil, fmt.Errorf("instance %s: %w", id, err)
			}
			target, family = p.Text, "corpus"
		} else {
			kinds := t.cfg.kinds()
			family = kinds[rng.IntN(len(kinds))]
			var err error
			if target, err = generateDoc(family, &t.cfg, rng); err != nil {
				return nil, nil, fmt.Errorf("instance %s: %w", id, err)
			}
			if hashsplit.Of(target) != split {
				continue
			}
		}
		draft, edits, err := MakeDraft(target, &t.cfg, rng)
		if err != nil {
			continue
		}
		o := &dialog.Oracle{
			Task: Name, ID: id, Split: split, Family: family,
			Opening: openingFor(family),
			Truth:   target,
			Draft:   draft,
			Persona: persona.Draw(rng, userRanges),
		}
		for i := range edits {
			describeEdit(&edits[i], SplitSentences(draft))
		}
		o.Edits = edits
		o.Instruction = instructionFor(o)
		return o, &dialog.View{Task: Name, Instructions: AgentInstructions, Draft: draft}, nil
	}
	return nil, nil, fmt.Errorf("instance %s: no target in split %s could be made into a draft", id, split)
}

// userRanges are a document user's traits: patience 4–9 unhelpful turns,
// verbosity in [0,1), typo rate in [0,0.15), clarity in [0.6,1), and the
// BLEU it settles for in [80,95).
var userRanges = persona.Ranges{
	Patience:  persona.Ints{Lo: 4, N: 6},
	Verbosity: persona.Uniform{Lo: 0, Width: 1},
	TypoRate:  persona.Uniform{Lo: 0, Width: 0.15},
	Clarity:   persona.Uniform{Lo: 0.6, Width: 0.4},
	Threshold: persona.Uniform{Lo: 80, Width: 15},
}

// Score judges the current document at the end (FinalDocument) against
// the target; see the package comment.
func (t *Task) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	s := scoreDocument(o, FinalDocument(Normalize(o.Draft), msgs))
	if t.cfg.AcceptanceReward {
		// The ablation: the reward is the user's word, not the document's.
		s.Reward = 0
		if dialog.Accepts(msgs, acceptPhrases) {
			s.Reward = 1
		}
	}
	return s
}

// acceptPhrases are the ways the scripted users accept a document, the
// naive simulator's sycophantic thanks among them.
var acceptPhrases = append([]string{naiveRight, naiveSycophantic}, humanAccept...)

// scoreDocument judges doc, the current document at the end, against the
// target.
func scoreDocument(o *dialog.Oracle, doc string) dialog.Score {
	draft := Normalize(o.Draft)
	draftBLEU := metric.SentenceBLEU(draft, o.Truth)
	if doc == draft {
		return dialog.Score{Outcome: doc, Metrics: map[string]float64{dialog.MetricBLEU: 0, dialog.MetricChrF: 0, dialog.MetricDelivered: 0, "draft_bleu": draftBLEU}}
	}
	bleu := metric.SentenceBLEU(doc, o.Truth)
	return dialog.Score{
		Outcome: doc,
		Reward:  bleu / 100,
		Success: bleu >= threshold(o),
		Metrics: map[string]float64{dialog.MetricBLEU: bleu, dialog.MetricChrF: metric.SentenceChrF(doc, o.Truth), dialog.MetricDelivered: 1, "draft_bleu": draftBLEU},
	}
}

// ScoreTurn judges the last message of msgs, an agent turn, as the
// environment applied it to the current document the turns before it
// made (dialog.TurnScorer): it delivers when it shows a full document or
// gives a command and the document after it is not the draft (handing
// the draft back delivers nothing), and its score is Score's of the
// document after it. A
// command turn that fixes the document so scores as a full revision to
// the same document does.
func (t *Task) ScoreTurn(o *dialog.Oracle, msgs []dialog.Message) (bool, dialog.Score) {
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != dialog.RoleAssistant {
		return false, dialog.Score{}
	}
	r, _ := lastTurn(Normalize(o.Draft), msgs)
	// The draft as the instance holds it, not normalised: the comparison
	// dialog.Verdict made when it read the draft itself.
	if !r.Delivered || r.Doc == o.Draft {
		return false, dialog.Score{} // most turns: no need to score
	}
	return true, scoreDocument(o, r.Doc)
}

// Environment applies the agents' edit commands and shows the current
// document (dialog.EnvironmentOf).
func (t *Task) Environment() dialog.Environment { return Environment{} }

func threshold(o *dialog.Oracle) float64 {
	if o.Persona.Threshold > 0 {
		return o.Persona.Threshold
	}
	return DefaultSuccessBLEU
}

// User returns dialog.Human (the human proxy) or dialog.Naive (the prompted-style
// simulator with Config.Naive's artifact rates).
func (t *Task) User(kind dialog.UserKind) (dialog.User, error) {
	switch kind {
	case dialog.Human:
		return Human{}, nil
	case dialog.Naive:
		return NewNaive(t.cfg.Naive)
	}
	return nil, dialog.UnknownUser("docedit", kind)
}

// Profiles lists the scripted agent profiles.
func (t *Task) Profiles() []string { return slices.Clone(profiles) }

// Agent returns a scripted agent by profile (Profiles, or
// PasteExploiter); with Config.Quote it uses the quote tool.
func (t *Task) Agent(profile string) (dialog.Agent, error) {
	a, err := NewScripted(profile, t.cfg.SlipRate)
	if err != nil || !t.cfg.Quote {
		return a, err
	}
	return quoteAgent{a}, nil
}

// Tool returns the quote tool when Config.Quote is on, else nil
// (dialog.ToolOf).
func (t *Task) Tool() dialog.Tool {
	if !t.cfg.Quote {
		return nil
	}
	return Quote{}
}
