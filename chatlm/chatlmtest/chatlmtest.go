// Package chatlmtest provides a toy dialog task and a tiny chat model for
// tests of the packages that train and run chat models.
package chatlmtest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/lm"
)

// AddEpisodes is a toy task: the user asks for a sum, the agent answers,
// the user says right or wrong and ends.
func AddEpisodes(n int, seed uint64) []dialog.Episode {
	rng := rand.New(rand.NewPCG(seed, 0))
	eps := make([]dialog.Episode, n)
	for i := range eps {
		a, b := rng.IntN(5), rng.IntN(5)
		eps[i] = dialog.Episode{
			Oracle: dialog.Oracle{Instruction: fmt.Sprintf("add %d and %d", a, b), Truth: fmt.Sprint(a + b), Persona: dialog.Persona{Patience: 3}},
			View:   dialog.View{Instructions: "Answer sums."},
			Messages: []dialog.Message{
				{Role: dialog.RoleUser, Content: fmt.Sprintf("what is %d plus %d?", a, b)},
				{Role: dialog.RoleAssistant, Content: fmt.Sprintf("%d + %d = %d.", a, b, a+b)},
				{Role: dialog.RoleUser, Content: "right, thanks!"},
			},
			End: dialog.Solved,
		}
	}
	return eps
}

// TinyModel trains a tokenizer on eps and builds a 2-layer, 32-wide model.
func TinyModel(t testing.TB, eps []dialog.Episode) *chatlm.Model {
	t.Helper()
	tok, err := chatlm.TrainTokenizer(context.Background(), eps, 300)
	if err != nil {
		t.Fatal(err)
	}
	cfg := lm.Config{VocabSize: tok.VocabSize(), Context: 128, Dim: 32, Layers: 2, Heads: 2}
	net, err := lm.New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	m, err := chatlm.New(net, tok)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
