package mathchat

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
)

// NaiveConfig sets the rate of each artifact of the naive simulator, the
// documented failure modes of a prompted LLM playing the user.
// For mathchat the rates mean:
//
//	Sycophancy is the chance that a wrong final answer is accepted
//	with thanks, ending the episode (default 0.5).
//	Leakage is the chance that, asked for the answer, the simulator
//	states it (default 0.6).
//	OverShare is the chance that the opening states every hidden fact
//	(the full problem) instead of the vague one (default 0.5).
//	PrematureEnd is the chance, at each reply, that the simulator ends
//	the conversation before anything is settled (default 0.02).
type NaiveConfig = dialog.NaiveRates

// The naive simulator's acceptances: of a right answer, and of a wrong
// one (sycophancy).
const (
	naiveRight       = "Yes, that's correct. Thank you!"
	naiveSycophantic = "Great, thank you so much for your help!"
	// naiveLeak starts the naive simulator's reply that states the answer.
	naiveLeak = "The answer is "
)

// DefaultNaiveConfig returns the documented defaults.
func DefaultNaiveConfig() NaiveConfig {
	return NaiveConfig{Sycophancy: 0.5, Leakage: 0.6, OverShare: 0.5, PrematureEnd: 0.02}
}

// Naive is the prompted-style user simulator. Beyond its configured
// artifacts it is an idealised user: it answers every question about a
// fact with the whole sentence, is never confused, never makes typos and
// never runs out of patience (only the rollout's turn limit stops it).
type Naive struct{ cfg NaiveConfig }

// NewNaive builds the naive simulator.
func NewNaive(cfg NaiveConfig) (*Naive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("mathchat: %w", err)
	}
	return &Naive{cfg: cfg}, nil
}

// NewSession starts one episode of the naive simulator.
func (n *Naive) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	truth, _ := ParseTruth(o.Truth)
	return &naiveSession{cfg: n.cfg, o: o, rng: rng, truth: truth}
}

type naiveSession struct {
	cfg   NaiveConfig
	o     *dialog.Oracle
	rng   *rand.Rand
	truth *big.Rat
	end   dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (s *naiveSession) EndReason() dialog.EndReason { return s.end }

// Open gives the problem, over-sharing every hidden fact at the
// configured rate.
func (s *naiveSession) Open(context.Context) (string, error) {
	text := s.o.Opening
	if s.rng.Float64() < s.cfg.OverShare {
		text = s.o.Instruction
	}
	return "Can you help me solve this problem? " + text, nil
}

// Reply answers the agent's last message.
func (s *naiveSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	if s.rng.Float64() < s.cfg.PrematureEnd {
		s.end = dialog.UserEnded
		return "Thanks, I think I can finish it from here.", true, nil
	}
	r := readAgent(lastAgent(history), s.o.Facts)
	switch r.kind {
	case intentAnswer:
		if s.truth != nil && Equal(s.truth, r.answer) {
			s.end = dialog.Solved
			return naiveRight, true, nil
		}
		if s.rng.Float64() < s.cfg.Sycophancy {
			s.end = dialog.UserEnded
			return naiveSycophantic, true, nil
		}
		return "Hmm, I don't think that's right.", false, nil
	case intentAskFact:
		return s.o.Facts[r.fact].Text, false, nil
	case intentAskAnswer:
		if s.rng.Float64() < s.cfg.Leakage {
			return naiveLeak + s.o.Truth + ".", false, nil
		}
		return "I'm not sure what the answer is.", false, nil
	}
	return "Sure, go ahead.", false, nil
}
