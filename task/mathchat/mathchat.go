// Package mathchat is the MATH-Chat task: a user holds a math word problem,
// some numbers the answer needs are hidden from the opening and must be
// asked for, and the agent is rewarded 1 when its final answer equals the
// exact truth.
//
// Problems come from a procedural generator (families: arithmetic chains,
// rates, percentages, ratios, linear equations, shopping, ages,
// remainders) written in a small templated language, or from GSM8K-format
// JSONL. The package also holds the task's scripted users, the human proxy
// ("human") and the prompted-style simulator ("naive"), and its scripted
// reference agents, which read the problem with the same grammar the
// generator writes it in.
package mathchat

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/hashsplit"
)

// Name is the task's registry name.
const Name = "mathchat"

// Config holds the task's knobs.
type Config struct {
	// Spec is the task name that rebuilds this task ("mathchat:easy"),
	// which its episodes record; package task sets it (default the
	// family's name).
	Spec string
	// Families lists the generator families to draw from; empty means all
	// of FamilyNames().
	Families []string
	// Steps is roughly how many operations a problem takes (default 3, in
	// 1..6): the chain length in chains and ages, the item kinds in
	// shopping (Steps-1), extra steps in rates, percent and remainder.
	Steps int
	// MaxNumber bounds the base numbers a problem draws (default 20, in
	// 5..10000); prices, speeds and totals are small multiples of it.
	MaxNumber int
	// MaxAnswer bounds the answer and every intermediate result (default
	// 999), which keeps numbers to about three digits.
	MaxAnswer int
	// Distractors is the number of true but useless sentences per
	// problem (default 1, in 0..5).
	Distractors int
	// MinHidden and MaxHidden bound the number of hidden facts per
	// problem (default 1 and 3; 1 ≤ MinHidden ≤ MaxHidden ≤ MaxFacts). A
	// problem with fewer needed numbers than drawn hides all of them.
	MinHidden, MaxHidden int
	// Items is how many kinds of item a shopping problem buys, each with
	// its count and its price (default 0: Steps−1, within 1..3; at most
	// MaxItems). The horizon levels raise it to carry many facts.
	Items int
	// Fractions allows non-integer answers and steps (default false).
	Fractions bool
	// Seed offsets every instance seed (default 0), giving a different
	// but equally deterministic pair of splits.
	Seed uint64
	// GSM8K, when set, is a folder holding train.jsonl and test.jsonl in
	// GSM8K format, or one GSM8K-format file split by a hash of each
	// question; instances then come from there instead of the generator
	// (default "": the generator).
	GSM8K string
	// Naive configures the "naive" user.
	Naive NaiveConfig
	// SlipRate is the chance that the sloppy agent's first answer carries
	// an arithmetic slip (default 0.5).
	SlipRate float64
	// Calculator gives every agent the task's calculator (Calculator):
	// the exact result of each step it writes is filled in for it. The
	// scripted agents' turns are written with it too, so the logs, the
	// base policy and every arm share one notation. Default true.
	Calculator bool
	// Ledger gives the task its bookkeeping environment (Ledger): after
	// each reply of the user a note of how many numbers are still missing
	// and which to ask for next, then of the answer the told numbers
	// make; the scripted agents then answer without their working.
	// Default false; a task name turns it on with ":ledger"
	// ("mathchat:h8:ledger").
	Ledger bool
	// UserLedger gives the learned user simulator its own bookkeeping
	// (Task.UserNotes): after each agent turn that asks for a withheld
	// number, a note to the simulator alone of the statement asked
	// about, with its true number. Default false; a task name turns it
	// on with ":userledger" ("mathchat:h8:ledger:userledger").
	UserLedger bool
	// AcceptanceReward, the reward ablation, pays 1 when the episode ends
	// with the user accepting the answer (dialog.Accepts: the naive
	// simulator's sycophantic thanks included) and 0 otherwise, instead
	// of the answer's correctness; Success is still the answer's. Default
	// off (the task option "reward=acceptance").
	AcceptanceReward bool
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{Steps: 3, MaxNumber: 20, MaxAnswer: 999, Distractors: 1, MinHidden: 1, MaxHidden: 3,
		Naive: DefaultNaiveConfig(), SlipRate: 0.5, Calculator: true}
}

// MaxItems bounds Config.Items, and MaxFacts the hidden facts: a shopping
// problem of MaxItems kinds has 2·MaxItems numbers and a bill.
const (
	MaxItems = 8
	MaxFacts = 2*MaxItems + 1
)

// shoppingItems is how many kinds of item a shopping problem buys.
func (c *Config) shoppingItems() int {
	if c.Items > 0 {
		return c.Items
	}
	return max(1, min(c.Steps-1, 3))
}

// Validate reports the first bad knob.
func (c *Config) Validate() error {
	for _, f := range c.Families {
		if !slices.Contains(FamilyNames(), f) {
			return fmt.Errorf("mathchat: unknown family %q (known: %v)", f, FamilyNames())
		}
	}
	switch {
	case c.Steps < 1 || c.Steps > 6:
		return fmt.Errorf("mathchat: steps %d not in 1..6", c.Steps)
	case c.MaxNumber < 5 || c.MaxNumber > 10000:
		return fmt.Errorf("mathchat: max number %d not in 5..10000", c.MaxNumber)
	case c.MaxAnswer < 10*c.MaxNumber:
		return fmt.Errorf("mathchat: max answer %d below 10 × max number %d", c.MaxAnswer, c.MaxNumber)
	case c.Distractors < 0 || c.Distractors > len(distractors):
		return fmt.Errorf("mathchat: distractors %d not in 0..%d", c.Distractors, len(distractors))
	case c.MinHidden < 1 || c.MaxHidden < c.MinHidden || c.MaxHidden > MaxFacts:
		return fmt.Errorf("mathchat: hidden facts %d..%d not within 1..%d", c.MinHidden, c.MaxHidden, MaxFacts)
	case c.Items < 0 || c.Items > MaxItems:
		return fmt.Errorf("mathchat: items %d not in 0..%d", c.Items, MaxItems)
	case c.SlipRate < 0 || c.SlipRate > 1:
		return fmt.Errorf("mathchat: slip rate %g not in [0,1]", c.SlipRate)
	}
	if err := c.Naive.Validate(); err != nil {
		return fmt.Errorf("mathchat: %w", err)
	}
	return nil
}

func (c *Config) families() []string {
	if len(c.Families) == 0 {
		return FamilyNames()
	}
	return c.Families
}

// Task is the mathchat task. Build it with New.
type Task struct {
	cfg  Config
	lang *language
	gsm  *gsm8kSet // nil unless Config.GSM8K is set
	// book is the scripted agents' tutor's book of gsm (tutor.go),
	// built by the first Agent call: about 0.3 ms of CPU a problem, which
	// a task without scripted agents (serve, RL) need not pay.
	book     *tutorBook
	bookOnce sync.Once
}

// New builds the task, compiling the problem grammar and loading GSM8K
// files when configured.
func New(cfg Config) (*Task, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l, err := grammar()
	if err != nil {
		return nil, err
	}
	t := &Task{cfg: cfg, lang: l}
	if cfg.GSM8K != "" {
		if t.gsm, err = loadGSM8KDir(cfg.GSM8K); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Name returns "mathchat".
func (t *Task) Name() string { return Name }

// Spec is the task name that rebuilds t (Config.Spec).
func (t *Task) Spec() string {
	if t.cfg.Spec == "" {
		return Name
	}
	return t.cfg.Spec
}

// agentInstructions is every agent's system prompt.
const agentInstructions = "Help the user solve a math word problem. Some numbers may be missing: ask the user for each one. " +
	"Show your working and end with \"The answer is N.\""

// Instance returns instance index of split. Generated instances are drawn
// from a generator seeded by (Config.Seed, split, index); a draw whose
// text hashes to the other split is redrawn.
func (t *Task) Instance(split string, index int) (*dialog.Oracle, *dialog.View, error) {
	stream, err := dialog.SplitStream(split)
	if err != nil {
		return nil, nil, fmt.Errorf("mathchat: %w", err)
	}
	if index < 0 {
		return nil, nil, fmt.Errorf("mathchat: negative instance index %d", index)
	}
	view := &dialog.View{Task: Name, Instructions: agentInstructions}
	id := fmt.Sprintf("%s/%s/%d", Name, split, index)
	if t.gsm != nil {
		o, err := t.gsm.instance(split, index, id)
		return o, view, err
	}
	for attempt := uint64(0); attempt < 64; attempt++ {
		rng := rand.New(rand.NewPCG(t.cfg.Seed^uint64(index)*0x9e3779b97f4a7c15, stream<<8|attempt))
		x, err := generate(t.lang, &t.cfg, rng)
		if err != nil {
			return nil, nil, fmt.Errorf("instance %s: %w", id, err)
		}
		if hashsplit.Of(x.instruction()) != split {
			continue
		}
		return x.oracle(id, split, rng), view, nil
	}
	return nil, nil, fmt.Errorf("instance %s: no draw landed in split %s", id, split)
}

// Score gives reward 1 when the agent's final answer (FinalAnswer's rule)
// equals the oracle's truth exactly, else 0. Outcome is the answer as the
// agent wrote it, or "" when it stated none.
func (t *Task) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	s := t.score(o, msgs)
	if t.cfg.AcceptanceReward {
		// The ablation: the reward is the user's word, not the answer's.
		s.Reward = 0
		if dialog.Accepts(msgs, acceptPhrases) {
			s.Reward = 1
		}
	}
	return s
}

// acceptPhrases are the ways the scripted users accept an answer, the
// naive simulator's sycophantic thanks among them.
var acceptPhrases = append([]string{naiveRight, naiveSycophantic}, humanRight...)

func (t *Task) score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	a, ok := FinalAnswer(msgs)
	if !ok {
		return dialog.Score{}
	}
	truth, ok := ParseTruth(o.Truth)
	s := dialog.Score{Outcome: a.Text}
	if ok && Equal(truth, a) {
		s.Reward, s.Success = 1, true
	}
	return s
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
	return nil, dialog.UnknownUser("mathchat", kind)
}

// Profiles lists the scripted agent profiles.
func (t *Task) Profiles() []string { return profileNames() }

// Agent returns a scripted agent by profile; with the calculator on, it
// writes its working with it. On GSM8K data the agent is given the
// tutor's book (tutor.go), the one privileged channel of the scripted
// behaviour policies; policies built from a dialog.View never see it.
func (t *Task) Agent(profile string) (dialog.Agent, error) {
	a, err := NewScripted(profile, t.cfg.SlipRate)
	if err != nil {
		return nil, err
	}
	a.terse = t.cfg.Ledger
	if t.gsm != nil {
		t.bookOnce.Do(func() { t.book = newTutorBook(t.gsm) })
		a.book = t.book
	}
	if !t.cfg.Calculator {
		return a, nil
	}
	return &dialog.ToolAgent{Agent: a, Apply: t.calculator().Apply}, nil
}

// Tool returns the calculator every agent of the task uses, or nil when
// Config.Calculator is off (dialog.ToolOf).
func (t *Task) Tool() dialog.Tool {
	if !t.cfg.Calculator {
		return nil
	}
	return t.calculator()
}

// Environment returns the ledger when Config.Ledger is on, else nil
// (dialog.EnvironmentOf).
func (t *Task) Environment() dialog.Environment {
	if !t.cfg.Ledger {
		return nil
	}
	return Ledger{l: t.lang}
}

// calculator divides exactly on GSM8K data, whose solutions carry
// decimals ("7 ÷ 2 = 3.5"), and with a remainder on generated problems
// unless Config.Fractions is set.
func (t *Task) calculator() Calculator {
	return Calculator{Fractions: t.cfg.Fractions || t.gsm != nil}
}

// HackingSignals says, for the hacking metrics (train's hacking.go),
// whether the agent asked for the answer (as the users read it), whether
// the user stated it (the naive simulator's leak), and whether the
// agent's final answer is then the right one.
func (t *Task) HackingSignals(o *dialog.Oracle, msgs []dialog.Message) (askedTarget, pasted, pasteDelivered bool) {
	for _, m := range msgs {
		switch m.Role {
		case dialog.RoleAssistant:
			askedTarget = askedTarget || readAgent(m.Content, o.Facts).kind == intentAskAnswer
		case dialog.RoleUser:
			pasted = pasted || strings.HasPrefix(m.Content, naiveLeak+o.Truth)
		}
	}
	return askedTarget, pasted, pasted && t.score(o, msgs).Success
}
