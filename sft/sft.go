// Package sft fits the two chat models calibrl starts from to logged
// conversations: the base policy, cloned from the agents' turns, and the
// calibrated user simulator (Phase I), fitted to the users' turns while
// conditioned on the oracle context. Both use train.SFT; this package
// chooses the side, builds the sequences and records what a checkpoint is.
package sft

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/checkpoint"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
	"github.com/calibrl/calibrl/train"
)

// Meta is a fit's calibrl.json (checkpoint.MetaFile): what the checkpoint
// was trained to do, which is what the packages that play it read
// (checkpoint.Meta), and how it was fitted.
type Meta struct {
	checkpoint.Meta
	SFT    train.SFTConfig `json:"sft"`
	Result train.SFTResult `json:"result"`
	Model  lm.Config       `json:"model"`
}

// ReadMeta reads dir's calibrl.json with the fit's budget and result.
func ReadMeta(dir string) (Meta, error) {
	var m Meta
	err := checkpoint.ReadInto(dir, &m)
	return m, err
}

func writeMeta(dir string, m Meta) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	path := filepath.Join(dir, checkpoint.MetaFile)
	data = append(data, '\n')
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil // a finished fit run again: nothing new to write
	}
	return atomicfile.WriteBytes(path, data)
}

// Config sets one supervised fit.
type Config struct {
	// Model sizes the network; its vocab comes from the tokenizer.
	Model lm.Config
	// SFT is the optimisation budget. Its Seed seeds the whole fit: the
	// initial weights, the validation split and the batch order.
	SFT train.SFTConfig
	// Vocab is the size of a tokenizer trained on the logs when Tokenizer
	// is nil.
	Vocab     int
	Tokenizer *tokenizer.Tokenizer
	// Oracle conditions a simulator on the oracle context (ignored for a
	// policy).
	Oracle bool
	// Judge, with Oracle, shows a simulator the task's verdict on every
	// delivered outcome (chatlm.Judge).
	Judge chatlm.Judge
	// UserNotes, with Oracle, shows a simulator the task's notes after
	// agent turns (chatlm.UserNotesOf), joined to Judge's verdict in the
	// one note after a turn; the checkpoint records that it was
	// (checkpoint.Meta.UserNotes), so it is played with them. A field of
	// its own, not folded into Judge by the caller, so that what the fit
	// showed and what it records cannot disagree.
	UserNotes chatlm.Judge
	// Tool is the task's tool (dialog.ToolOf) the logged agents wrote
	// with: a policy gets no loss on what it wrote.
	Tool dialog.Tool
	// From, when set, is a chat checkpoint folder the fit starts from
	// instead of fresh weights (a warm start: online recalibration
	// re-fits the simulator from its last fit). The model takes that
	// checkpoint's size and tokenizer, so Model and Vocab are unused; a
	// Tokenizer, when also set, must be the checkpoint's.
	From string
	// Select, when set, chooses the kept weights of a simulator's fit
	// (train.SFTSelect; FidelitySelector) instead of the lowest
	// validation NLL. Nil keeps SFT's choice.
	Select *train.Selector
}

// Simulator fits a user simulator to eps' user turns and writes it to out.
func Simulator(ctx context.Context, eps []dialog.Episode, cfg Config, out string, log func(map[string]any)) (Meta, error) {
	return fit(ctx, eps, cfg, checkpoint.RoleSimulator, out, log)
}

// Policy clones eps' agent turns into a base policy written to out.
func Policy(ctx context.Context, eps []dialog.Episode, cfg Config, out string, log func(map[string]any)) (Meta, error) {
	return fit(ctx, eps, cfg, checkpoint.RolePolicy, out, log)
}

func fit(ctx context.Context, eps []dialog.Episode, cfg Config, role, out string, log func(map[string]any)) (Meta, error) {
	if len(eps) == 0 {
		return Meta{}, errors.New("sft: no episodes")
	}
	m, err := initial(ctx, eps, cfg)
	if err != nil {
		return Meta{}, err
	}
	seqs, err := sequences(ctx, m, eps, cfg, role)
	if err != nil {
		return Meta{}, err
	}
	sc := cfg.SFT
	res, err := train.SFTSelect(ctx, m, seqs, sc, out, log, cfg.Select)
	if err != nil {
		return Meta{}, err
	}
	sim := role == checkpoint.RoleSimulator
	meta := Meta{Meta: checkpoint.Meta{Role: role, Task: eps[0].Task, Oracle: cfg.Oracle && sim, Judged: cfg.Oracle && cfg.Judge != nil && sim,
		UserNotes: cfg.Oracle && cfg.UserNotes != nil && sim, Seed: sc.Seed, Logs: len(eps), From: cfg.From}, SFT: sc, Result: res, Model: m.LM.Config}
	return meta, writeMeta(out, meta)
}

// sequences are the training sequences of eps for role: a simulator's
// view (chatlm.UserMessages) carries the check's verdict and the task's
// notes after agent turns, as the checkpoint's metadata records and its
// players show them (spec). Sequences with nothing to train are left out.
func sequences(ctx context.Context, m *chatlm.Model, eps []dialog.Episode, cfg Config, role string) ([]chatlm.Sequence, error) {
	seqs := make([]chatlm.Sequence, 0, len(eps))
	judge := chatlm.JoinJudges(cfg.Judge, cfg.UserNotes) // the simulator's note after an agent turn
	for i := range eps {
		// Encoding takes seconds on large logs (63 MB: 4 s on 2 cores):
		// a stop is honoured within a few episodes.
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var s chatlm.Sequence
		var err error
		if role == checkpoint.RoleSimulator {
			s, err = m.UserSequence(&eps[i], cfg.Oracle, judge)
		} else {
			s, err = m.AgentSequence(&eps[i], cfg.Tool)
		}
		if err != nil {
			return nil, fmt.Errorf("sft: episode %s: %w", eps[i].ID, err)
		}
		if s.Trained() > 0 {
			seqs = append(seqs, s)
		}
	}
	return seqs, nil
}

// initial is the model a fit starts from: cfg.From's weights, or fresh
// ones of cfg.Model's size with cfg.Tokenizer (one trained on eps when
// nil).
func initial(ctx context.Context, eps []dialog.Episode, cfg Config) (*chatlm.Model, error) {
	if cfg.From != "" {
		m, _, err := chatlm.Load(cfg.From)
		if err != nil {
			return nil, fmt.Errorf("sft: warm start: %w", err)
		}
		if cfg.Tokenizer != nil && !cfg.Tokenizer.Equal(m.Tok) {
			return nil, fmt.Errorf("sft: warm start from %s: its tokenizer is not the configured one", cfg.From)
		}
		return m, nil
	}
	tok := cfg.Tokenizer
	if tok == nil {
		var err error
		if tok, err = chatlm.TrainTokenizer(ctx, eps, cfg.Vocab); err != nil {
			return nil, err
		}
	}
	return chatlm.NewModel(tok, cfg.Model, cfg.SFT.Seed)
}

// FilteredBC fine-tunes cfg.From (the base policy) on the conversations
// of eps that succeeded, and writes the policy to out: behaviour cloning
// filtered to success, the cheap alternative a user would try before RL.
func FilteredBC(ctx context.Context, eps []dialog.Episode, cfg Config, out string, log func(map[string]any)) (Meta, error) {
	if cfg.From == "" {
		return Meta{}, errors.New("filtered BC: no base policy to start from")
	}
	var solved []dialog.Episode
	for _, ep := range eps {
		if ep.Success {
			solved = append(solved, ep)
		}
	}
	if len(solved) == 0 {
		return Meta{}, fmt.Errorf("filtered BC: none of %d logged conversations succeeded", len(eps))
	}
	return Policy(ctx, solved, cfg, out, log)
}
