package preset

import (
	"strings"
	"testing"

	"github.com/calibrl/calibrl/lm"
)

func TestPresetsAreValid(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "tiny,quick,paper" {
		t.Fatalf("Names() = %s, want tiny,quick,paper in size order", got)
	}
	for _, n := range Names() {
		p, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			err  error
		}{{"policy sft", p.PolicySFT.Validate()}, {"sim sft", p.SimSFT.Validate()}, {"rl", p.RL.Validate()}} {
			if c.err != nil {
				t.Errorf("%s %s: %v", n, c.what, c.err)
			}
		}
		for _, m := range []struct {
			what string
			cfg  interface{ Validate() error }
		}{{"policy", withVocab(p.Policy, p.Vocab)}, {"sim", withVocab(p.Sim, p.Vocab)}} {
			if err := m.cfg.Validate(); err != nil {
				t.Errorf("%s %s model: %v", n, m.what, err)
			}
		}
		if p.RL.MaxTurns != p.MaxTurns {
			t.Errorf("%s: RL turn limit %d differs from the evaluation's %d", n, p.RL.MaxTurns, p.MaxTurns)
		}
		if p.LogEpisodes <= 0 || p.EvalEpisodes <= 0 {
			t.Errorf("%s: log or eval size not positive", n)
		}
		if p.RLSeeds < 1 {
			t.Errorf("%s: %d RL seeds", n, p.RLSeeds)
		}
	}
	if _, err := Get("huge"); err == nil {
		t.Fatal("unknown preset: want an error")
	}
}

func withVocab(c lm.Config, v int) lm.Config {
	c.VocabSize = v
	return c
}
