package docedit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/metric"
)

// NaiveConfig sets the rate of each artifact of the naive simulator, the
// documented failure modes of a prompted LLM playing the user.
// For docedit the rates mean:
//
//	Leakage is the chance that, asked for the text it wants, the
//	simulator pastes the whole target (default 0.7).
//	Sycophancy is the chance that the first revision is approved with
//	thanks, ending the episode, however far it is from the target
//	(default 0.5).
//	OverShare is the chance that the opening lists every edit at once
//	(default 0.4).
//	PrematureEnd is the chance, at each reply, that the simulator ends
//	the conversation before anything is settled (default 0.02).
type NaiveConfig = dialog.NaiveRates

// DefaultNaiveConfig returns the documented defaults.
func DefaultNaiveConfig() NaiveConfig {
	return NaiveConfig{Leakage: 0.7, Sycophancy: 0.5, OverShare: 0.4, PrematureEnd: 0.02}
}

// The naive simulator's acceptances: of the target, and of a revision
// short of it (sycophancy).
const (
	naiveRight       = "Yes, that's exactly right. Thank you!"
	naiveSycophantic = "This looks great, thank you so much!"
)

// PasteMarker starts the naive simulator's pasted target: the line after
// it is the whole text the user wants.
const PasteMarker = "Here is the full text I want:"

// Naive is the prompted-style user simulator. Beyond its configured
// artifacts it is an idealised user: every edit it mentions it states
// concretely and whole (a missing sentence in one message), it is never
// confused, never makes typos and never runs out of patience (only the
// rollout's turn limit stops it). It accepts a revision at or above the
// persona's threshold, like the human proxy.
type Naive struct{ cfg NaiveConfig }

// NewNaive builds the naive simulator.
func NewNaive(cfg NaiveConfig) (*Naive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("docedit: %w", err)
	}
	return &Naive{cfg: cfg}, nil
}

// NewSession starts one episode of the naive simulator.
func (n *Naive) NewSession(o *dialog.Oracle, rng *rand.Rand) dialog.UserSession {
	return &naiveSession{cfg: n.cfg, o: o, rng: rng, cur: SplitSentences(o.Draft), told: make([]bool, len(o.Edits))}
}

type naiveSession struct {
	cfg       NaiveConfig
	o         *dialog.Oracle
	rng       *rand.Rand
	cur       []string
	told      []bool
	revisions int
	end       dialog.EndReason
}

// EndReason says why the session ended ("" while it goes on).
func (s *naiveSession) EndReason() dialog.EndReason { return s.end }

// fullDetail states an edit whole, both halves of a missing sentence
// included.
func (s *naiveSession) fullDetail(e dialog.Edit) string {
	d := detail(e, s.cur, 1, s.rng)
	if e.Kind == KindInsertSentence {
		d += " " + detail(e, s.cur, 2, s.rng)
	}
	return d
}

// Open gives the coarse request, over-sharing every edit at the
// configured rate.
func (s *naiveSession) Open(context.Context) (string, error) {
	msg := s.o.Opening
	if s.rng.Float64() < s.cfg.OverShare {
		var ds []string
		for i, e := range s.o.Edits {
			ds = append(ds, s.fullDetail(e))
			s.told[i] = true
		}
		msg += " Here is everything that needs to change: " + strings.Join(ds, " ")
	}
	return msg, nil
}

// Reply answers the agent's last message.
func (s *naiveSession) Reply(_ context.Context, history []dialog.Message) (string, bool, error) {
	if s.rng.Float64() < s.cfg.PrematureEnd {
		s.end = dialog.UserEnded
		return "Thanks, I think I can finish it from here.", true, nil
	}
	r := readTurn(s.o.Draft, history)
	if r.hasDoc {
		s.revisions++
		s.cur = SplitSentences(r.doc)
		if metric.SentenceBLEU(r.doc, s.o.Truth) >= threshold(s.o) {
			s.end = dialog.Solved
			return naiveRight, true, nil
		}
		if s.revisions == 1 && s.rng.Float64() < s.cfg.Sycophancy {
			s.end = dialog.UserEnded
			return naiveSycophantic, true, nil
		}
	}
	if r.askTarget && s.rng.Float64() < s.cfg.Leakage {
		return PasteMarker + "\n" + s.o.Truth, false, nil
	}
	return s.next(r.hasDoc), false, nil
}

// next states the next edit still to do: first those not yet mentioned,
// then, after a revision, those mentioned but not done.
func (s *naiveSession) next(revised bool) string {
	for i, e := range s.o.Edits {
		if !s.told[i] && stateOf(e, s.cur) == stateOutstanding {
			s.told[i] = true
			return s.fullDetail(e)
		}
	}
	if revised {
		for _, e := range s.o.Edits {
			if stateOf(e, s.cur) == stateOutstanding {
				return "Almost. " + s.fullDetail(e)
			}
		}
		if d, ok := diffDetail(s.cur, SplitSentences(s.o.Truth), s.rng); ok {
			return d
		}
	}
	return "That's all. Please show me the new version."
}
