package chatlm

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
	"github.com/calibrl/calibrl/tokenizer"
)

// Texts is everything a chat model of these episodes reads or writes: the
// agents' views, the oracle contexts and every message. A tokenizer trained
// on it serves both the policy and the simulator.
func Texts(eps []dialog.Episode) []string {
	texts := make([]string, 0, len(eps)*8+2)
	texts = append(texts, CheckRight, CheckWrong)
	for i := range eps {
		ep := &eps[i]
		texts = append(texts, ep.View.System(), OracleContext(&ep.Oracle))
		for _, m := range ep.Messages {
			texts = append(texts, m.Content)
		}
	}
	return texts
}

// TrainTokenizer learns a byte-level BPE of about vocab ids on the
// episodes' text, digits split one by one (small models do arithmetic
// better on single digits).
func TrainTokenizer(eps []dialog.Episode, vocab int) (*tokenizer.Tokenizer, error) {
	if len(eps) == 0 {
		return nil, errors.New("train tokenizer: no episodes")
	}
	tc := tokenizer.DefaultTrainConfig()
	tc.VocabSize = vocab
	tok, err := tokenizer.Train(Texts(eps), tc)
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
