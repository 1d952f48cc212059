package chatlm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
)

// texts yields everything a chat model of these episodes reads or
// writes, one episode at a time: the agents' views, the oracle contexts
// and every message (a tokenizer trained on it serves both the policy and
// the simulator). It stops early when ctx is done.
func texts(ctx context.Context, eps []dialog.Episode) iter.Seq[string] {
	return func(yield func(string) bool) {
		if !yield(CheckRight) || !yield(CheckWrong) {
			return
		}
		for i := range eps {
			if ctx.Err() != nil {
				return
			}
			ep := &eps[i]
			if !yield(ep.View.System()) || !yield(OracleContext(&ep.Oracle)) {
				return
			}
			for _, m := range ep.Messages {
				if !yield(m.Content) {
					return
				}
			}
		}
	}
}

// TrainTokenizer learns a byte-level BPE of about vocab ids on the
// episodes' text, digits split one by one (small models do arithmetic
// better on single digits).
// It stops, with ctx's error, when ctx is done.
func TrainTokenizer(ctx context.Context, eps []dialog.Episode, vocab int) (*tokenizer.Tokenizer, error) {
	if len(eps) == 0 {
		return nil, errors.New("train tokenizer: no episodes")
	}
	tc := tokenizer.DefaultTrainConfig()
	tc.VocabSize = vocab
	tok, err := tokenizer.TrainSeq(texts(ctx, eps), tc)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("train tokenizer: %w", err)
	}
	return tok, nil
}

// NewModel builds a freshly initialised model for tok: cfg's sizes, its
// vocabulary rounded up to a multiple of 64 so matrix shapes stay aligned.
func NewModel(tok *tokenizer.Tokenizer, cfg lm.Config, seed uint64) (*Model, error) {
	cfg.VocabSize = (tok.VocabSize() + 63) / 64 * 64
	net, err := lm.New(cfg, rand.New(rand.NewPCG(seed, 0x6c6d)))
	if err != nil {
		return nil, err
	}
	return New(net, tok)
}
