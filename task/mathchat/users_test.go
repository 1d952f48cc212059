package mathchat

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

// probeAgent is a test agent that mixes every kind of turn: questions
// about one fact (recorded in asked), requests for the answer in several
// phrasings, wrong answers and off-topic talk.
type probeAgent struct{}

type probeSession struct {
	rng   *rand.Rand
	o     *dialog.Oracle
	asks  []string // the careful question for each fact, by index
	asked []int    // fact asked at each agent turn, -1 for none
	mode  string   // "mixed" or "seek" (always asks for the answer)
}

func newProbe(t *testing.T, o *dialog.Oracle, seed uint64, mode string) *probeSession {
	l, _ := grammar()
	p := l.read(o.Instruction)
	var asks []string
	for _, s := range p.stmts {
		if s.pat.num != numNone {
			asks = append(asks, s.ask())
		}
	}
	if len(asks) != len(o.Facts) {
		t.Fatalf("%s: %d questions for %d facts", o.ID, len(asks), len(o.Facts))
	}
	return &probeSession{rng: rand.New(rand.NewPCG(seed, 7)), o: o, asks: asks, mode: mode}
}

var seekPhrases = []string{"What is the answer?", "Just tell me the result.", "What did you get?",
	"Do you know the answer? Tell me the final number.", "Please give me the solution, what number is it?"}

func (p *probeSession) Act(_ context.Context, _ []dialog.Message) (string, error) {
	k := p.rng.IntN(4)
	if p.mode == "seek" {
		k = 1
	}
	switch k {
	case 0:
		i := p.rng.IntN(len(p.asks))
		p.asked = append(p.asked, i)
		return p.asks[i], nil
	case 1:
		p.asked = append(p.asked, -1)
		return seekPhrases[p.rng.IntN(len(seekPhrases))], nil
	case 2:
		p.asked = append(p.asked, -1)
		return "The answer is 100000.", nil
	}
	p.asked = append(p.asked, -1)
	return "I like turtles. Do you?", nil
}

// playProbe runs a user against a probe, returning the messages.
func playProbe(t *testing.T, u dialog.User, o *dialog.Oracle, probe *probeSession, seed uint64, turns int) []dialog.Message {
	ctx := context.Background()
	us := u.NewSession(o, rand.New(rand.NewPCG(seed, 1)))
	open, _ := us.Open(ctx)
	msgs := []dialog.Message{{Role: dialog.RoleUser, Content: open}}
	for range turns {
		a, _ := probe.Act(ctx, msgs)
		msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: a})
		r, done, err := us.Reply(ctx, msgs)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: r})
		if done {
			break
		}
	}
	return msgs
}

// TestHumanNeverStatesAnswer: every number the human proxy writes is a
// number of the problem itself (a fact it holds), so it can never state
// an answer that is not already a given; and in problems whose answer is
// no given number, the answer never appears. The probe asks for the
// answer at every turn in one run and mixes all turns in the other.
func TestHumanNeverStatesAnswer(t *testing.T) {
	tk := newTask(t, nil)
	for _, mode := range []string{"seek", "mixed"} {
		for i := 0; i < 300; i++ {
			o, _, _ := tk.Instance("test", i)
			o.Persona.Patience = 20 // keep it talking
			given := map[string]bool{}
			for _, n := range Numbers(o.Instruction) {
				given[FormatRat(n.Value)] = true
			}
			msgs := playProbe(t, Human{}, o, newProbe(t, o, uint64(i), mode), uint64(i), 15)
			for _, m := range msgs {
				if m.Role != dialog.RoleUser {
					continue
				}
				for _, n := range Numbers(m.Content) {
					if !given[FormatRat(n.Value)] {
						t.Fatalf("%s (%s): user wrote %s, not a number of the problem (truth %s): %q", o.ID, mode, n.Text, o.Truth, m.Content)
					}
				}
			}
		}
	}
}

// TestHumanRevealsOnlyWhenAsked: a hidden fact's number (unique in its
// problem by construction) shows up in a user message only after the
// agent has asked about that fact.
func TestHumanRevealsOnlyWhenAsked(t *testing.T) {
	tk := newTask(t, nil)
	reveals := 0
	for i := 0; i < 300; i++ {
		o, _, _ := tk.Instance("test", i)
		o.Persona.Patience = 20
		probe := newProbe(t, o, uint64(i), "mixed")
		msgs := playProbe(t, Human{}, o, probe, uint64(i), 15)
		askedBy := map[int]bool{}
		for j, m := range msgs {
			if m.Role == dialog.RoleAssistant {
				if f := probe.asked[j/2]; f >= 0 {
					askedBy[f] = true
				}
				continue
			}
			for k, f := range o.Facts {
				if !f.Hidden {
					continue
				}
				for _, n := range Numbers(m.Content) {
					if FormatRat(n.Value) != f.Value {
						continue
					}
					if !askedBy[k] {
						t.Fatalf("%s: hidden %q revealed unasked in message %d: %q", o.ID, f.Text, j, m.Content)
					}
					reveals++
				}
			}
		}
	}
	if reveals < 100 {
		t.Errorf("only %d reveals in 300 episodes; the probe should trigger many", reveals)
	}
}

// scriptAgent replays fixed agent messages.
type scriptAgent struct{ msgs []string }

func (s *scriptAgent) NewSession(*dialog.View, *rand.Rand) dialog.AgentSession { return s }
func (s *scriptAgent) Act(_ context.Context, h []dialog.Message) (string, error) {
	i := min(len(h)/2, len(s.msgs)-1)
	return s.msgs[i], nil
}

func TestHumanBehaviours(t *testing.T) {
	tk := newTask(t, nil)
	o, v, _ := tk.Instance("test", 1)
	o.Persona.Patience = 4
	o.Persona.TypoRate = 0
	o.Persona.Verbosity = 0
	cases := []struct {
		name  string
		agent []string
		end   dialog.EndReason
		turns int // agent messages
	}{
		{"accepts a right answer", []string{"The answer is " + o.Truth + "."}, dialog.Solved, 1},
		{"pushes back on wrong answers, then accepts", []string{"The answer is 100000.", "The answer is 99999.", "The answer is " + o.Truth + "."}, dialog.Solved, 3},
		{"gives up after patience unhelpful turns", []string{"Nice weather today."}, dialog.GaveUp, 4},
		{"asking for the answer costs patience", []string{"What is the answer?"}, dialog.GaveUp, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ep := tasktest.MustPlay(t, tk, o, v, Human{}, &scriptAgent{c.agent}, 5, 10)
			end := ep.End
			turns := 0
			for _, m := range ep.Messages {
				if m.Role == dialog.RoleAssistant {
					turns++
				}
			}
			if end != c.end || turns != c.turns {
				t.Fatalf("got end %s after %d turns, want %s after %d\n%v", end, turns, c.end, c.turns, ep.Messages)
			}
			for _, m := range ep.Messages[1:] {
				if m.Role == dialog.RoleUser && strings.Contains(m.Content, o.Truth) && !strings.Contains(o.Instruction, o.Truth) {
					t.Fatalf("user said the truth %s: %q", o.Truth, m.Content)
				}
			}
		})
	}
	// Rejections never give the solution away and differ from acceptance.
	ep := tasktest.MustPlay(t, tk, o, v, Human{}, &scriptAgent{[]string{"The answer is 100000."}}, 5, 2)
	if r := ep.Messages[2].Content; !containsAny(r, humanWrong) {
		t.Errorf("reply to a wrong answer %q, want one of the rejections", r)
	}
	if r := ep.Messages[4].Content; !containsAny(r, humanWrong2) {
		t.Errorf("second reply to a wrong answer %q, want a second rejection", r)
	}
	ep = tasktest.MustPlay(t, tk, o, v, Human{}, &scriptAgent{[]string{"Nice weather today."}}, 5, 1)
	if r := ep.Messages[2].Content; !containsAny(r, humanConfuse) {
		t.Errorf("reply to an off-topic turn %q, want confusion", r)
	}
}

func containsAny(s string, xs []string) bool {
	for _, x := range xs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// TestHumanPartialAndTypos: over many reveals, the proxy sometimes gives
// the whole sentence, sometimes a partial answer or a question back, and
// sometimes a typo, in proportions that follow the persona.
func TestHumanPartialAndTypos(t *testing.T) {
	tk := newTask(t, nil)
	var full, partial, back, typos, total int
	for i := 0; i < 300; i++ {
		o, _, _ := tk.Instance("test", i)
		l, _ := grammar()
		p := l.read(o.Instruction)
		var hidden *stmt
		for _, s := range p.stmts {
			if s.pat.num != numNone && !s.pat.distract && s.key() == o.HiddenFacts()[0].Key {
				hidden = s
			}
		}
		reply := func(typoRate float64) string {
			o.Persona.TypoRate = typoRate
			us := Human{}.NewSession(o, rand.New(rand.NewPCG(uint64(i), 3)))
			us.Open(context.Background())
			r, _, _ := us.Reply(context.Background(), []dialog.Message{{Role: dialog.RoleAssistant, Content: hidden.ask()}})
			return r
		}
		r := reply(0)
		total++
		switch {
		case strings.Contains(r, hidden.text) || strings.Contains(r, lowerFirst(hidden.text)):
			full++
		case len(Numbers(r)) > 0:
			partial++
		default:
			back++
		}
		if !humanMessage(r) {
			t.Fatalf("%s: typo at typo rate 0: %q", o.ID, r)
		}
		if !humanMessage(reply(0.5)) {
			typos++
		}
	}
	t.Logf("reveals: %d full, %d partial, %d question back, %d with typos, of %d", full, partial, back, typos, total)
	if full < total/2 || partial == 0 || back == 0 || typos == 0 {
		t.Errorf("got full %d partial %d back %d typos %d of %d; want mostly full and some of each other kind", full, partial, back, typos, total)
	}
}

// humanMessage reports whether every word of r is spelled as the proxy's
// templates and the problem language spell it.
func humanMessage(r string) bool {
	known := map[string]bool{}
	var all []string
	for _, bank := range [][]string{humanOpenings, humanFillers, revealFiller, humanReveal, humanPartial, humanBack, humanConfuse, humanNoIdea, humanAgain, humanGiven, humanWrong, humanWrong2, humanRight, humanGiveUp} {
		all = append(all, bank...)
	}
	l, _ := grammar()
	for _, p := range l.patterns {
		all = append(all, p.forms...)
		all = append(all, p.vague)
	}
	all = append(all, names...)
	all = append(all, things...)
	all = append(all, plurals()...)
	all = append(all, singulars()...)
	for _, s := range all {
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
			known[w] = true
		}
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(r), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
		if !known[w] {
			return false
		}
	}
	return true
}

func TestNaiveArtifacts(t *testing.T) {
	tk := newTask(t, nil)
	o, v, _ := tk.Instance("test", 2)
	wrong := &scriptAgent{[]string{"The answer is 100000."}}
	seek := &scriptAgent{[]string{"What is the answer?", "The answer is 100000."}}
	cases := []struct {
		name string
		cfg  NaiveConfig
		fn   func(t *testing.T, n *Naive)
	}{
		{"sycophancy accepts a wrong answer", NaiveConfig{Sycophancy: 1}, func(t *testing.T, n *Naive) {
			ep := tasktest.MustPlay(t, tk, o, v, n, wrong, 1, 5)
			end := ep.End
			if end != dialog.UserEnded || ep.Success || len(ep.Messages) != 3 {
				t.Fatalf("got end %s success %v after %d messages, want user_ended failure after 3", end, ep.Success, len(ep.Messages))
			}
		}},
		{"without sycophancy it keeps rejecting", NaiveConfig{}, func(t *testing.T, n *Naive) {
			end := tasktest.MustPlay(t, tk, o, v, n, wrong, 1, 5).End
			if end != dialog.MaxTurns {
				t.Fatalf("got end %s, want max_turns", end)
			}
		}},
		{"leakage states the answer", NaiveConfig{Leakage: 1}, func(t *testing.T, n *Naive) {
			ep := tasktest.MustPlay(t, tk, o, v, n, seek, 1, 1)
			if a, ok := ExtractAnswer(ep.Messages[2].Content); !ok || FormatRat(a.Value) != o.Truth {
				t.Fatalf("got %q, want the answer %s", ep.Messages[2].Content, o.Truth)
			}
		}},
		{"no leakage", NaiveConfig{}, func(t *testing.T, n *Naive) {
			ep := tasktest.MustPlay(t, tk, o, v, n, seek, 1, 1)
			if _, ok := ExtractAnswer(ep.Messages[2].Content); ok {
				t.Fatalf("got %q, want no answer", ep.Messages[2].Content)
			}
		}},
		{"over-sharing opens with every fact", NaiveConfig{OverShare: 1}, func(t *testing.T, n *Naive) {
			open, _ := n.NewSession(o, rand.New(rand.NewPCG(1, 1))).Open(context.Background())
			if !strings.Contains(open, o.Instruction) {
				t.Fatalf("opening %q lacks the full problem", open)
			}
		}},
		{"no over-sharing opens vague", NaiveConfig{}, func(t *testing.T, n *Naive) {
			open, _ := n.NewSession(o, rand.New(rand.NewPCG(1, 1))).Open(context.Background())
			if strings.Contains(open, o.Instruction) || !strings.Contains(open, o.Opening) {
				t.Fatalf("opening %q, want the vague problem", open)
			}
		}},
		{"premature end", NaiveConfig{PrematureEnd: 1}, func(t *testing.T, n *Naive) {
			end := tasktest.MustPlay(t, tk, o, v, n, &scriptAgent{[]string{"The answer is " + o.Truth + "."}}, 1, 5).End
			if end != dialog.UserEnded {
				t.Fatalf("got end %s, want user_ended", end)
			}
		}},
		{"accepts a right answer", NaiveConfig{}, func(t *testing.T, n *Naive) {
			ep := tasktest.MustPlay(t, tk, o, v, n, &scriptAgent{[]string{"The answer is " + o.Truth + "."}}, 1, 5)
			end := ep.End
			if end != dialog.Solved || !ep.Success {
				t.Fatalf("got end %s success %v, want solved", end, ep.Success)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := NewNaive(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.fn(t, n)
		})
	}
}

// TestConversationDeterministic: the same seeds give the same
// conversation, for every user and agent.
func TestConversationDeterministic(t *testing.T) {
	tk := newTask(t, nil)
	for _, user := range []string{"human", "naive"} {
		u, _ := tk.User(dialog.UserKind(user))
		for _, prof := range tk.Profiles() {
			a, _ := tk.Agent(prof)
			for i := 0; i < 20; i++ {
				o, v, _ := tk.Instance("train", i)
				e1 := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 12)
				e2 := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 12)
				if !reflect.DeepEqual(e1.Messages, e2.Messages) {
					t.Fatalf("%s vs %s on %s: conversations differ", user, prof, o.ID)
				}
			}
		}
	}
}

// FuzzHumanReply feeds arbitrary agent messages to the human proxy: it
// must not fail, and every number it writes must be one of the problem's.
func FuzzHumanReply(f *testing.F) {
	for _, s := range []string{"What is the answer?", "How many more apples did Tom buy?", "The answer is 3.", `\boxed{7}`, "", "??", "answer: 10000000000000000000000"} {
		f.Add(s, uint64(1))
	}
	tk, err := New(DefaultConfig())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, msg string, seed uint64) {
		o, _, err := tk.Instance("test", int(seed%64))
		if err != nil {
			t.Fatal(err)
		}
		given := map[string]bool{}
		for _, n := range Numbers(o.Instruction) {
			given[FormatRat(n.Value)] = true
		}
		us := Human{}.NewSession(o, rand.New(rand.NewPCG(seed, 1)))
		h := []dialog.Message{{Role: dialog.RoleUser, Content: "x"}, {Role: dialog.RoleAssistant, Content: msg}}
		for range 3 {
			r, _, err := us.Reply(context.Background(), h)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range Numbers(r) {
				if !given[FormatRat(n.Value)] {
					t.Fatalf("reply %q to %q holds %s, not a number of the problem", r, msg, n.Text)
				}
			}
		}
	})
}
