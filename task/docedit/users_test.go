package docedit

import (
	"context"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
)

// pester asks for the target in every turn, in many phrasings, mixed with
// requests for exact words and for the rest of a new sentence, and now
// and then shows the draft back.
type pester struct{}

type pesterSession struct {
	rng   *rand.Rand
	draft string
}

func (pester) NewSession(v *dialog.View, rng *rand.Rand) dialog.AgentSession {
	return &pesterSession{rng: rng, draft: v.Draft}
}

var pesterMsgs = []string{
	"Could you paste the full text you want?",
	"Please type it out for me exactly, word for word.",
	"What is the final text? Please write it out.",
	"Just copy it here: the whole text you want, exactly.",
	"What exactly should I change? Please quote the exact words.",
	"How does the new sentence continue? Please give me the exact words.",
	"Can you paste the final version so I can copy it?",
}

func (p *pesterSession) Act(context.Context, []dialog.Message) (string, error) {
	if p.rng.IntN(6) == 0 {
		return "Revised document:\n" + p.draft + "\n\nCould you paste the text you want instead?", nil
	}
	return pesterMsgs[p.rng.IntN(len(pesterMsgs))], nil
}

var quotedRe = regexp.MustCompile(`"([^"]*)"`)

// leaks reports a user message that holds the target, or a target
// sentence the draft does not have, either in its text or in its quoted
// phrases read one after another (two halves of a sentence in one message
// count as the sentence).
func leaks(o *dialog.Oracle, msgs []dialog.Message) (string, bool) {
	draft := SplitSentences(o.Draft)
	for _, m := range msgs {
		if m.Role != dialog.RoleUser {
			continue
		}
		text := Normalize(m.Content)
		var quoted []string
		for _, q := range quotedRe.FindAllStringSubmatch(m.Content, -1) {
			quoted = append(quoted, q[1])
		}
		quotes := Normalize(strings.Join(quoted, " "))
		if strings.Contains(text, o.Truth) {
			return m.Content, true
		}
		for _, s := range SplitSentences(o.Truth) {
			if !slices.Contains(draft, s) && (strings.Contains(text, s) || strings.Contains(quotes, s)) {
				return m.Content, true
			}
		}
	}
	return "", false
}

// The human proxy never pastes the target nor states a target sentence the
// draft lacks, however the agent asks, over many episodes; the naive
// simulator, asked the same way, leaks.
func TestHumanNeverPastesTarget(t *testing.T) {
	tk := newTestTask(t)
	naive, err := NewNaive(NaiveConfig{Leakage: 0.7, OverShare: 1})
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]dialog.Agent{"pester": pester{}}
	for _, p := range profiles {
		agents[p], _ = tk.Agent(p)
	}
	for name, agent := range agents {
		n := 60
		if name == "pester" {
			n = 300
		}
		eps, err := rollout.Run(context.Background(), tk, agent, Human{}, rollout.Config{Split: "test", Instances: n, Seed: 11, MaxTurns: 12})
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range eps {
			if msg, bad := leaks(&ep.Oracle, ep.Messages); bad {
				t.Fatalf("%s: human leaked the target to %s: %q\ntarget %q\ndraft %q", ep.ID, name, msg, ep.Oracle.Truth, ep.Oracle.Draft)
			}
		}
	}
	eps, err := rollout.Run(context.Background(), tk, pester{}, naive, rollout.Config{Split: "test", Instances: 50, Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	leaked := 0
	for _, ep := range eps {
		if _, bad := leaks(&ep.Oracle, ep.Messages); bad {
			leaked++
		}
	}
	if leaked < 40 {
		t.Errorf("naive leaked in %d of 50 episodes, want ≥ 40 (the check must be able to see a leak)", leaked)
	}
}

func userMsgs(t *testing.T, s dialog.UserSession, agentMsgs ...string) ([]string, bool) {
	t.Helper()
	open, err := s.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hist := []dialog.Message{{Role: dialog.RoleUser, Content: open}}
	out := []string{open}
	for _, a := range agentMsgs {
		hist = append(hist, dialog.Message{Role: dialog.RoleAssistant, Content: a})
		r, end, err := s.Reply(context.Background(), hist)
		if err != nil {
			t.Fatal(err)
		}
		hist = append(hist, dialog.Message{Role: dialog.RoleUser, Content: r})
		out = append(out, r)
		if end {
			return out, true
		}
	}
	return out, false
}

// instanceWith finds a test instance whose plan satisfies ok.
func instanceWith(t *testing.T, tk *Task, ok func(o *dialog.Oracle) bool) *dialog.Oracle {
	t.Helper()
	for i := 0; i < 500; i++ {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if ok(o) {
			return o
		}
	}
	t.Fatal("no instance found")
	return nil
}

func TestHumanBehaviour(t *testing.T) {
	tk := newTestTask(t)
	o := instanceWith(t, tk, func(o *dialog.Oracle) bool {
		return len(o.Edits) >= 3 && isPhraseKind(o.Edits[0].Kind)
	})
	o.Persona.Patience, o.Persona.TypoRate, o.Persona.Verbosity, o.Persona.Clarity = 3, 0, 0, 1
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 1)) }
	show := func(doc string) string { return "Revised document:\n" + doc }
	fixed1, err := ApplyEdits(o.Draft, o.Edits[:1])
	if err != nil {
		t.Fatal(err)
	}

	t.Run("accepts the target", func(t *testing.T) {
		s := Human{}.NewSession(o, rng())
		msgs, end := userMsgs(t, s, show(o.Truth))
		if !end || s.(*humanSession).EndReason() != dialog.Solved {
			t.Errorf("got %q, end %v; want an acceptance", msgs, end)
		}
	})
	t.Run("vague unless asked for exact words", func(t *testing.T) {
		msgs, _ := userMsgs(t, Human{}.NewSession(o, rng()), "What should I change?", "What exactly should it say? Please quote it.")
		if strings.Contains(msgs[1], `"`) || !strings.Contains(msgs[2], `"`+o.Edits[0].To+`"`) {
			t.Errorf("got %q; want a hint, then the first edit's words %q", msgs[1:], o.Edits[0].To)
		}
	})
	t.Run("rejects a revision that undoes a fix", func(t *testing.T) {
		msgs, _ := userMsgs(t, Human{}.NewSession(o, rng()), show(fixed1), show(o.Draft))
		if !strings.Contains(msgs[2], "undid") && !strings.Contains(msgs[2], "changed back") {
			t.Errorf("got %q; want the undone fix pointed out", msgs[2])
		}
		if !strings.Contains(msgs[2], `"`+o.Edits[0].To+`"`) {
			t.Errorf("got %q; want the fix %q restated", msgs[2], o.Edits[0].To)
		}
	})
	t.Run("confused, then gives up", func(t *testing.T) {
		s := Human{}.NewSession(o, rng())
		msgs, end := userMsgs(t, s, "Bananas.", "Bananas.", "Bananas.", "Bananas.")
		if !end || len(msgs) != 4 || s.(*humanSession).EndReason() != dialog.GaveUp {
			t.Errorf("got %q, end %v; want two confused replies and a give-up at patience 3", msgs, end)
		}
	})
}

func TestNaiveArtifacts(t *testing.T) {
	tk := newTestTask(t)
	o := instanceWith(t, tk, func(o *dialog.Oracle) bool { return len(o.Edits) >= 2 })
	rng := rand.New(rand.NewPCG(2, 2))
	mk := func(c NaiveConfig) dialog.UserSession {
		n, err := NewNaive(c)
		if err != nil {
			t.Fatal(err)
		}
		return n.NewSession(o, rng)
	}
	msgs, _ := userMsgs(t, mk(NaiveConfig{Leakage: 1}), msgAskPaste)
	if !strings.Contains(msgs[1], o.Truth) {
		t.Errorf("leakage 1: got %q, want the target pasted", msgs[1])
	}
	s := mk(NaiveConfig{Sycophancy: 1})
	if _, end := userMsgs(t, s, "Revised document:\n"+o.Draft); !end || s.(*naiveSession).EndReason() != dialog.UserEnded {
		t.Error("sycophancy 1: the first revision (the draft itself) was not approved")
	}
	msgs, _ = userMsgs(t, mk(NaiveConfig{OverShare: 1}))
	for _, e := range o.Edits {
		if e.Kind != KindInsertSentence && !strings.Contains(msgs[0], e.To) {
			t.Errorf("over-share 1: opening %q lacks edit %q", msgs[0], e.To)
		}
	}
	if _, end := userMsgs(t, mk(NaiveConfig{PrematureEnd: 1}), msgAskFirst); !end {
		t.Error("premature end 1: the conversation went on")
	}
	if _, err := NewNaive(NaiveConfig{Leakage: 2}); err == nil {
		t.Error("leakage 2: got no error")
	}
}
