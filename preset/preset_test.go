package preset

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/lm"
)

func TestPresetsAreValid(t *testing.T) {
	if got := strings.Join(Names(), ","); got != "tiny,quick,standard,paper" {
		t.Fatalf("Names() = %s, want tiny,quick,standard,paper in size order", got)
	}
	for _, n := range Names() {
		p, err := Get(n)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			what string
			err  error
		}{{"policy sft", p.PolicySFT.Config(1).Validate()}, {"sim sft", p.SimSFT.Config(1).Validate()}, {"rl", p.RLConfig(1).Validate()}} {
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
		if c := p.RLConfig(1); c.MaxTurns != p.MaxTurns {
			t.Errorf("%s: RL turn limit %d differs from the evaluation's %d", n, c.MaxTurns, p.MaxTurns)
		}
		if p.LogEpisodes <= 0 || p.EvalEpisodes <= 0 {
			t.Errorf("%s: log or eval size not positive", n)
		}
		if p.RLSeeds < 1 {
			t.Errorf("%s: %d RL seeds", n, p.RLSeeds)
		}
		if err := p.Recalibration.Validate(p.RL.Iterations); err != nil {
			t.Errorf("%s: %v", n, err)
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

// The round schedule spends exactly the other arms' RL budget, in rounds
// as even as the budget allows, the remainder in the last.
func TestRoundIterationsSumToTheBudget(t *testing.T) {
	for _, c := range []struct {
		total, rounds int
		want          []int
	}{
		{30, 3, []int{10, 10, 10}},
		{30, 2, []int{15, 15}},
		{31, 3, []int{10, 10, 11}},
		{2, 2, []int{1, 1}},
		{5, 1, []int{5}},
		{7, 4, []int{1, 1, 1, 4}},
	} {
		got := Recalibration{Rounds: c.rounds}.RoundIterations(c.total)
		if !slices.Equal(got, c.want) {
			t.Errorf("%d iterations in %d rounds: %v, want %v", c.total, c.rounds, got, c.want)
		}
	}
	for _, n := range []string{"tiny", "quick"} {
		p, _ := Get(n)
		sum := 0
		for _, it := range p.Recalibration.RoundIterations(p.RL.Iterations) {
			sum += it
		}
		if sum != p.RL.Iterations {
			t.Errorf("%s: rounds sum to %d iterations, the other arms get %d", n, sum, p.RL.Iterations)
		}
	}
	if p, _ := Get("tiny"); p.Recalibration.Rounds != 2 {
		t.Errorf("tiny: %d rounds, want 2 (one re-fit, so the suite covers it)", p.Recalibration.Rounds)
	}
	if p, _ := Get("quick"); p.Recalibration.Rounds < 2 || p.Recalibration.Rounds > 3 {
		t.Errorf("quick: %d rounds, want 2 or 3", p.Recalibration.Rounds)
	}
}

func TestRecalibrationValidate(t *testing.T) {
	p, _ := Get("tiny")
	ok := p.Recalibration
	for name, c := range map[string]Recalibration{
		"more rounds than iterations":  func() Recalibration { c := ok; c.Rounds = p.RL.Iterations + 1; return c }(),
		"no rounds":                    func() Recalibration { c := ok; c.Rounds = 0; return c }(),
		"re-fit without conversations": func() Recalibration { c := ok; c.HumanEpisodes = 0; return c }(),
		"no gap problems":              func() Recalibration { c := ok; c.GapEpisodes = 0; return c }(),
		"no re-fit steps":              func() Recalibration { c := ok; c.SFT.Steps = 0; return c }(),
	} {
		if err := c.Validate(p.RL.Iterations); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	one := ok
	one.Rounds, one.HumanEpisodes = 1, 0 // one round has no re-fit
	if err := one.Validate(p.RL.Iterations); err != nil {
		t.Errorf("one round: %v", err)
	}
}

// A task family's own sizing is put over its preset, for that family
// only, whatever the level and data its name carries, and stays a valid
// budget.
func TestForSizesTheTaskFamily(t *testing.T) {
	quick, _ := Get("quick")
	for _, name := range []string{"docedit", "docedit:easy", "docedit:data=sha256:" + strings.Repeat("0", 64)} {
		p := quick.For(name)
		if p.Level != "easy" || p.PolicySFT.Steps != 1200 || p.SimSFT.Steps != 700 || p.RL.Iterations != 16 || p.EvalEpisodes != 300 {
			t.Errorf("%s: level %q, SFT %d and %d steps, %d RL iterations, %d eval episodes; want easy, 1200, 700, 16, 300",
				name, p.Level, p.PolicySFT.Steps, p.SimSFT.Steps, p.RL.Iterations, p.EvalEpisodes)
		}
		if p.PolicySFT.BatchSize != quick.PolicySFT.BatchSize || p.PolicySFT.LR != quick.PolicySFT.LR || p.RLSeeds != quick.RLSeeds {
			t.Errorf("%s: changed what docedit does not size", name)
		}
		// Its RL rate is the one quick had before mathchat's were chosen
		// on validation problems, for every optimizer.
		if p.RL.LR != 6e-5 || p.RL.RFTLR != 0 || p.RL.GreedyBaselineLR != 0 || p.RL.TurnCreditLR != 0 {
			t.Errorf("%s: RL rates %+v, want 6e-5 for every optimizer", name, p.RL)
		}
		pc, sc, rc := p.PolicySFT.Config(1), p.SimSFT.Config(1), p.RLConfig(1)
		if pc.CheckpointEvery > pc.Steps || sc.Warmup > sc.Steps/10 || rc.CheckpointEvery > rc.Iterations/3 {
			t.Errorf("%s: checkpoints or warm-up not derived from the new budgets: %+v %+v", name, pc, sc)
		}
		for _, err := range []error{pc.Validate(), sc.Validate(), rc.Validate(), p.Recalibration.Validate(p.RL.Iterations)} {
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if p := quick.For("mathchat:easy"); !reflect.DeepEqual(p, quick) {
		t.Errorf("mathchat changed: %+v", p)
	}
	for _, n := range []string{"tiny", "paper"} {
		p, _ := Get(n)
		if got := p.For("docedit"); !reflect.DeepEqual(got, p) {
			t.Errorf("%s changed for docedit", n)
		}
	}
}

// standard is quick with four times the RL iterations and the monitor as
// often per run, for every task family; nothing else differs, so a
// standard run's base, simulator and evaluations are quick's.
func TestStandardIsQuickWithMoreRL(t *testing.T) {
	for _, family := range []string{"mathchat", "docedit", "support"} {
		q, _ := Get("quick")
		s, err := Get("standard")
		if err != nil {
			t.Fatal(err)
		}
		q, s = q.For(family), s.For(family)
		if s.RL.Iterations != 4*q.RL.Iterations || s.RL.MonitorEvery != 4*q.RL.MonitorEvery {
			t.Errorf("%s: standard trains %d iterations (monitor every %d), quick %d (%d): want four times", family,
				s.RL.Iterations, s.RL.MonitorEvery, q.RL.Iterations, q.RL.MonitorEvery)
		}
		s.Name, s.RL.Iterations, s.RL.MonitorEvery = q.Name, q.RL.Iterations, q.RL.MonitorEvery
		if !reflect.DeepEqual(s, q) {
			t.Errorf("%s: standard differs from quick in more than RL iterations:\n%+v\n%+v", family, s, q)
		}
	}
}
