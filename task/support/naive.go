package support

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
)

// NaiveConfig sets the rate of each artifact of the naive simulator, the
// documented failure modes of a prompted LLM playing the user, at
// mathchat's rates. For support the rates mean:
//
//	Sycophancy is the chance that a wrong action, or a change claimed
//	without a call, is accepted with thanks, ending the episode
//	(default 0.5).
//	Leakage is the chance that, asked to spell the change out, the
//	simulator gives the very calls that make it, every id in them
//	(default 0.6).
//	OverShare is the chance that the opening gives the account id and
//	every id and value of the goal at once (default 0.5).
//	PrematureEnd is the chance, at each reply, that the simulator ends
//	the conversation before anything is settled (default 0.02).
type NaiveConfig = dialog.NaiveRates

// DefaultNaiveConfig returns the documented defaults.
func DefaultNaiveConfig() NaiveConfig {
	return NaiveConfig{Sycophancy: 0.5, Leakage: 0.6, OverShare: 0.5, PrematureEnd: 0.02}
}

// Naive is the prompted-style user simulator. Beyond its configured
// artifacts it is an idealised user: it answers every question with the
// whole sentence, is never confused, never makes typos and never runs out
// of patience (only the rollout's turn limit stops it).
type Naive struct {
	d   db
	cfg NaiveConfig
}

// NewNaive builds the naive simulator.
func NewNaive(d db, cfg NaiveConfig) (*Naive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("support: %w", err)
	}
	return &Naive{d: d, cfg: cfg}, nil
}

// NewSession starts one episode of the naive simulator.
func (n *Naive) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &naiveSession{desk: newDesk(n.d, o), cfg: n.cfg, rng: rng}
}

type naiveSession struct {
	*desk
	cfg NaiveConfig
	rng *rand.Rand
	end dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (s *naiveSession) EndReason() dialog.EndReason { return s.end }

// Open says what the user wants, over-sharing every id at the configured
// rate (then the goal is the final one: there is no change of mind left).
func (s *naiveSession) Open(context.Context) (string, error) {
	if s.rng.Float64() < s.cfg.OverShare {
		s.switched = true
		for _, f := range s.o.Facts {
			s.told[f.Key] = true
		}
		return "Can you help me? " + s.o.Instruction, nil
	}
	return "Can you help me? " + s.o.Opening, nil
}

// Reply answers the agent's last message.
func (s *naiveSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	if s.rng.Float64() < s.cfg.PrematureEnd {
		s.end = dialog.UserEnded
		return "Thanks, I think I can finish it from here.", true, nil
	}
	r := readTurn(lastAgent(history))
	if s.dueToSwitch(r) {
		return s.switchMessage(), false, nil
	}
	right, wrong := s.act(r)
	switch {
	case right > 0 && wrong == 0 && s.allMet():
		s.end = dialog.Solved
		return "Yes, that's everything. Thank you!", true, nil
	case wrong > 0 || r.claim:
		if s.rng.Float64() < s.cfg.Sycophancy {
			s.end = dialog.UserEnded
			return "Great, thank you so much for your help!", true, nil
		}
		return "Hmm, I don't think that's right.", false, nil
	case r.ask != "":
		if f, ok := s.fact(r.ask); ok {
			s.told[f.Key] = true
			return f.Text, false, nil
		}
	case r.askGoal:
		if s.rng.Float64() < s.cfg.Leakage {
			return "Please do exactly this: " + s.o.Truth, false, nil
		}
		return "I'm not sure what you need.", false, nil
	}
	return "Sure, go ahead.", false, nil
}
