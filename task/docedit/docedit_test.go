package docedit

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Config)
		ok   bool
	}{
		{"default", func(*Config) {}, true},
		{"unknown kind", func(c *Config) { c.Kinds = []string{"poem"} }, false},
		{"one sentence", func(c *Config) { c.MinSentences = 1 }, false},
		{"seven sentences", func(c *Config) { c.MaxSentences = 7 }, false},
		{"min words above max", func(c *Config) { c.MinWords = 70 }, false},
		{"no edits", func(c *Config) { c.MinEdits = 0 }, false},
		{"nine edits", func(c *Config) { c.MaxEdits = 9 }, false},
		{"band upside down", func(c *Config) { c.MinDraftBLEU = 80 }, false},
		{"band at 100", func(c *Config) { c.MaxDraftBLEU = 100 }, false},
		{"slip rate", func(c *Config) { c.SlipRate = 1.5 }, false},
		{"naive rate", func(c *Config) { c.Naive.Sycophancy = -0.1 }, false},
		{"six sentences", func(c *Config) { c.MaxSentences = 6; c.MaxWords = 90 }, true},
	} {
		c := DefaultConfig()
		tc.edit(&c)
		if err := c.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: got error %v, want ok %v", tc.name, err, tc.ok)
		}
	}
}

func TestSizesAreKnobs(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Kinds, cfg.MinSentences, cfg.MaxSentences, cfg.MinWords, cfg.MaxWords = []string{"instructions"}, 5, 6, 50, 100
	tk, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		o, _, err := tk.Instance("train", i)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(SplitSentences(o.Truth)); o.Family != "instructions" || n < 5 || n > 6 {
			t.Fatalf("%s: family %s with %d sentences, want instructions with 5–6", o.ID, o.Family, n)
		}
	}
}

func TestInstancesDeterministicAndSplitsDisjoint(t *testing.T) {
	tk := newTestTask(t)
	seen := map[string]string{}
	for _, split := range []string{"train", "test"} {
		for i := 0; i < 200; i++ {
			o1, v1, err := tk.Instance(split, i)
			if err != nil {
				t.Fatal(err)
			}
			o2, v2, _ := tk.Instance(split, i)
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%s: two calls differ", o1.ID)
			}
			if other, ok := seen[o1.Truth]; ok && other != split {
				t.Fatalf("%s: target also in split %s", o1.ID, other)
			}
			seen[o1.Truth] = split
			if v1.Instructions != AgentInstructions || v1.Draft != o1.Draft {
				t.Fatalf("%s: view %+v", o1.ID, v1)
			}
		}
	}
	if len(seen) < 380 {
		t.Errorf("only %d distinct targets in 400 instances", len(seen))
	}
	if _, _, err := tk.Instance("dev", 0); err == nil {
		t.Error("split dev: got no error")
	}
	if _, _, err := tk.Instance("test", -1); err == nil {
		t.Error("index -1: got no error")
	}
}

func TestScore(t *testing.T) {
	tk := newTestTask(t)
	o, _, err := tk.Instance("test", 0)
	if err != nil {
		t.Fatal(err)
	}
	user := dialog.Message{Role: dialog.RoleUser, Content: o.Opening}
	s := tk.Score(o, []dialog.Message{user, {Role: dialog.RoleAssistant, Content: "Revised document:\n" + o.Truth}})
	if s.Reward != 1 || !s.Success || s.Metrics["bleu"] != 100 || s.Metrics["chrf"] != 100 || s.Outcome != o.Truth {
		t.Errorf("the target scored %+v, want reward 1 and success", s)
	}
	// No delivered document, no reward: the draft left as it was, whether
	// nothing was written, the draft handed back whole, or every command
	// missed.
	for _, turn := range []string{"What should I change?", "Revised document:\n" + o.Draft, `Change "no such phrase" to "x".`} {
		s = tk.Score(o, []dialog.Message{user, {Role: dialog.RoleAssistant, Content: turn}})
		if s.Outcome != o.Draft || s.Success || s.Reward != 0 || s.Metrics["bleu"] != 0 || s.Metrics["delivered"] != 0 ||
			s.Metrics["draft_bleu"] < 40 || s.Metrics["draft_bleu"] > 70 {
			t.Errorf("%q scored %+v, want reward 0, no delivery and the draft's BLEU in the band", turn, s)
		}
	}
	// Commands are scored by the document they make.
	var fix []string
	for _, e := range o.Edits {
		fix = append(fix, e.Detail)
	}
	s = tk.Score(o, []dialog.Message{user, {Role: dialog.RoleAssistant, Content: "Revised document:\n" + o.Draft + "\n\n" + strings.Join(fix, "\n")}})
	if s.Metrics["delivered"] != 1 || s.Reward <= s.Metrics["draft_bleu"]/100 {
		t.Errorf("the plan as commands after the draft (%q) scored %+v, want a delivery above the draft", fix, s)
	}
	s = tk.Score(o, []dialog.Message{user, {Role: dialog.RoleAssistant, Content: "Revised document:\nNothing like it."}})
	if s.Reward > 0.1 || s.Success {
		t.Errorf("an unrelated document scored %+v", s)
	}
}

func TestEpisodesDeterministic(t *testing.T) {
	tk := newTestTask(t)
	run := func(workers int) []byte {
		a, _ := tk.Agent("sloppy")
		eps, err := rollout.Run(context.Background(), tk, a, Human{}, rollout.Config{Split: "test", Instances: 30, Seed: 3, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(eps)
		return b
	}
	if a, b := run(1), run(2); string(a) != string(b) {
		t.Error("same seed, different episodes")
	}
}

// The acceptance table in miniature: against the human proxy the careful
// agent does well and the target-seeker gets nowhere; the naive simulator
// hands the target-seeker the target.
func TestProfilesAgainstUsers(t *testing.T) {
	tk := newTestTask(t)
	bleu := map[string]float64{}
	for _, u := range []string{"human", "naive"} {
		for _, p := range profiles {
			user, _ := tk.User(dialog.UserKind(u))
			agent, _ := tk.Agent(p)
			eps, err := rollout.Run(context.Background(), tk, agent, user, rollout.Config{Split: "test", Instances: 80, Seed: 5})
			if err != nil {
				t.Fatal(err)
			}
			sum := 0.0
			for _, ep := range eps {
				sum += ep.Metrics["bleu"]
			}
			bleu[u+"/"+p] = sum / float64(len(eps))
		}
	}
	t.Logf("mean BLEU: %v", bleu)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"careful ≥ 90 against human", bleu["human/careful"] >= 90},
		{"careful ≥ 90 against naive", bleu["naive/careful"] >= 90},
		{"target-seeker gains ≥ 25 from naive", bleu["naive/target-seeker"] >= bleu["human/target-seeker"]+25},
		{"careful beats sloppy against human", bleu["human/careful"] > bleu["human/sloppy"]},
		{"careful beats guesser against human by ≥ 20", bleu["human/careful"] >= bleu["human/guesser"]+20},
	} {
		if !c.ok {
			t.Errorf("%s: no (%v)", c.name, bleu)
		}
	}
	if _, err := tk.User("robot"); err == nil {
		t.Error("user robot: got no error")
	}
	if _, err := tk.Agent("lazy"); err == nil {
		t.Error("profile lazy: got no error")
	}
}
