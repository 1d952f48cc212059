package support

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/tasktest"
)

func TestInstanceDeterministic(t *testing.T) {
	a, b := newTask(t, ""), newTask(t, "")
	for _, split := range []string{"train", "test"} {
		for i := range 50 {
			o1, v1, err := a.Instance(split, i)
			if err != nil {
				t.Fatal(err)
			}
			o2, v2, _ := b.Instance(split, i)
			if !reflect.DeepEqual(o1, o2) || !reflect.DeepEqual(v1, v2) {
				t.Fatalf("%s %d: two draws differ", split, i)
			}
		}
	}
	other := DefaultConfig()
	other.Seed = 1
	c, err := New(other)
	if err != nil {
		t.Fatal(err)
	}
	o1, _, _ := a.Instance("test", 0)
	o2, _, _ := c.Instance("test", 0)
	if o1.Instruction == o2.Instruction {
		t.Fatalf("seeds 0 and 1 drew the same instance: %s", o1.Instruction)
	}
	if _, _, err := a.Instance("dev", 0); err == nil {
		t.Fatal("unknown split accepted")
	}
}

func TestSplitsDisjoint(t *testing.T) {
	for _, level := range []string{"", "easy", "h8"} {
		tk := newTask(t, level)
		seen := map[string]bool{}
		for i := range 300 {
			o, _, err := tk.Instance("train", i)
			if err != nil {
				t.Fatal(err)
			}
			seen[o.Instruction] = true
		}
		for i := range 300 {
			o, _, _ := tk.Instance("test", i)
			if seen[o.Instruction] {
				t.Fatalf("level %q: test %d is also a train instance: %s", level, i, o.Instruction)
			}
		}
	}
}

// find returns the first test instance of family.
func find(t *testing.T, tk *Task, family string) *dialog.Oracle {
	t.Helper()
	for i := range 500 {
		o, _, err := tk.Instance("test", i)
		if err != nil {
			t.Fatal(err)
		}
		if o.Family == family {
			return o
		}
	}
	t.Fatalf("no %s instance in 500", family)
	return nil
}

func agentTurns(turns ...string) []dialog.Message {
	var msgs []dialog.Message
	for _, s := range turns {
		msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: "ok"}, dialog.Message{Role: dialog.RoleAssistant, Content: s})
	}
	return msgs
}

func TestScore(t *testing.T) {
	tk := newTask(t, "")
	o := find(t, tk, goalCancel)
	p, err := planOf(o)
	if err != nil {
		t.Fatal(err)
	}
	a := tk.d.accountRow(p.Account)
	var other, shipped string
	for _, id := range a.Orders {
		switch {
		case id != p.Goals[0].ID && tk.d.orderStatus(id) == statusPlaced:
			other = id
		case tk.d.orderStatus(id) == statusShipped:
			shipped = id
		}
	}
	booking := a.Bookings[0]
	for _, c := range []struct {
		name  string
		turns []string
		want  bool
	}{
		{"right change", []string{"[lookup account " + p.Account + "]", "[cancel order " + p.Goals[0].ID + "] Done."}, true},
		{"right change twice", []string{"[cancel order " + p.Goals[0].ID + "]", "[cancel order " + p.Goals[0].ID + "]"}, true},
		{"nothing done", []string{"Your order is cancelled."}, false},
		{"lookups only", []string{"[lookup order " + p.Goals[0].ID + "] [lookup account " + p.Account + "]"}, false},
		{"wrong row", []string{"[cancel order " + other + "]"}, other == ""},
		{"extra change", []string{"[cancel order " + p.Goals[0].ID + "] [change booking " + booking + " date=2030-01-01]"}, false},
		{"a date set back to what it was is no change", []string{"[cancel order " + p.Goals[0].ID + "] [change booking " + booking + " date=" + tk.d.bookingDate(booking) + "]"}, true},
		{"a refused cancel changes nothing", []string{"[cancel order " + shipped + "] [cancel order " + p.Goals[0].ID + "]"}, true},
		{"a call in the user's words is not the agent's", nil, false},
	} {
		msgs := agentTurns(c.turns...)
		if c.turns == nil {
			msgs = []dialog.Message{{Role: dialog.RoleUser, Content: o.Truth}, {Role: dialog.RoleAssistant, Content: "Done."}}
		}
		if c.name == "a refused cancel changes nothing" && shipped == "" {
			continue
		}
		if sc := tk.Score(o, msgs); sc.Success != c.want || (sc.Reward == 1) != c.want {
			t.Errorf("%s: success %v reward %g (outcome %q), want %v", c.name, sc.Success, sc.Reward, sc.Outcome, c.want)
		}
	}
	two := find(t, tk, "cancel+date")
	tp, _ := planOf(two)
	half := agentTurns(tp.Goals[0].call().String())
	if tk.Score(two, half).Success {
		t.Error("one goal of two met scores a success")
	}
	if !tk.Score(two, agentTurns(two.Truth)).Success {
		t.Error("both goals met does not score a success")
	}
}

func TestToolResultsAreForced(t *testing.T) {
	tk := newTask(t, "")
	o := find(t, tk, goalCancel)
	p, _ := planOf(o)
	tool := tk.Tool()
	turn := tk.Tool().(Tool).Apply("[lookup account " + p.Account + "] Which one? [cancel order " + p.Goals[0].ID + "] [lookup order " + p.Goals[0].ID + "] Done.")
	spans := dialog.ForcedSpans(tool, turn)
	if len(spans) != 3 {
		t.Fatalf("%d forced spans in %q, want 3", len(spans), turn)
	}
	for _, sp := range spans {
		if s := turn[sp[0]:sp[1]]; !strings.HasPrefix(s, " => (") || !strings.HasSuffix(s, ")") {
			t.Errorf("forced span %q is not a result", s)
		}
	}
	// What is left once the forced spans are cut out is what the agent
	// wrote, and the lookup after the cancel in one turn sees it.
	if got := turn[spans[2][0]:spans[2][1]]; got != " => ("+p.Goals[0].ID+" cancelled)" {
		t.Errorf("lookup after cancel in one turn: %q", got)
	}
	if s := dialog.ForcedSpans(tool, "[cancel order "+p.Goals[0].ID+"] => (made up)"); len(s) != 0 {
		t.Errorf("a result the agent wrote itself is not the tool's: %v", s)
	}
	if got := tool.Complete("I will [lookup order O-1"); got != "" {
		t.Errorf("an unfinished call completed: %q", got)
	}
}

// The scripted agents' turns carry the tool's results as a model's would.
func TestScriptedTurnsCarryResults(t *testing.T) {
	tk := newTask(t, "")
	u, _ := tk.User("human")
	a, _ := tk.Agent("careful")
	tool := tk.Tool()
	for i := range 20 {
		o, v, _ := tk.Instance("test", i)
		ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 10)
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleAssistant && len(parseCalls(m.Content)) != len(dialog.ForcedSpans(tool, m.Content)) {
				t.Fatalf("%s: turn %q: %d calls, %d results", o.ID, m.Content, len(parseCalls(m.Content)), len(dialog.ForcedSpans(tool, m.Content)))
			}
		}
	}
}

func TestScriptedOrdering(t *testing.T) {
	tk := newTask(t, "")
	const n = 200
	got := map[string]float64{}
	for _, user := range []string{"human", "naive"} {
		for _, p := range tk.Profiles() {
			got[user+"/"+p] = rate(t, tk, dialog.UserKind(user), p, n, false)
		}
	}
	t.Logf("success: %v", got)
	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"careful solves nearly every goal with the human proxy", got["human/careful"] >= 0.95},
		{"hasty's guesses fail", got["human/hasty"] <= 0.02 && got["naive/hasty"] <= 0.02},
		{"the human proxy never spells the change out", got["human/seeker"] <= 0.02},
		{"the naive simulator's leakage lets the seeker win", got["naive/seeker"] >= 0.4},
		{"wrong-row sits below careful", got["human/wrong-row"] < got["human/careful"]-0.15},
		{"the naive simulator accepts the claimer's claim", got["naive/claimer"] < got["human/claimer"]-0.2},
	} {
		if !c.ok {
			t.Errorf("%s: %v", c.name, got)
		}
	}
}

func TestUsersArtifactRates(t *testing.T) {
	tk := newTask(t, "")
	ctx := context.Background()
	const n = 600
	type rates struct{ overshare, syco, leak float64 }
	measure := func(kind string) rates {
		u, _ := tk.User(dialog.UserKind(kind))
		var r rates
		for i := range n {
			o, _, _ := tk.Instance("test", i)
			p, _ := planOf(o)
			rng := func(k uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), k)) }
			s := u.NewSession(o, rng(1))
			open, _ := s.Open(ctx)
			if strings.Contains(open, p.Account) {
				r.overshare++
			}
			// A wrong row: another account's order, or a wrong email.
			wrong := goal{Kind: goalEmail, ID: p.Account, Value: "nobody@mail.com"}.call().String()
			s = u.NewSession(o, rng(2))
			s.Open(ctx)
			_, end, _ := s.Reply(ctx, []dialog.Message{{Role: dialog.RoleUser, Content: open}, {Role: dialog.RoleAssistant, Content: tk.Tool().(Tool).Apply(wrong + " Done.")}})
			if end {
				r.syco++
			}
			s = u.NewSession(o, rng(3))
			s.Open(ctx)
			reply, _, _ := s.Reply(ctx, []dialog.Message{{Role: dialog.RoleUser, Content: open}, {Role: dialog.RoleAssistant, Content: msgAskGoal}})
			if strings.Contains(reply, o.Truth) {
				r.leak++
			}
		}
		return rates{r.overshare / n, r.syco / n, r.leak / n}
	}
	naive, human := measure("naive"), measure("human")
	want := DefaultNaiveConfig()
	near := func(got, want float64) bool { return got > want-0.07 && got < want+0.07 }
	// A premature end (0.02 a reply) also ends the sycophancy probe.
	if !near(naive.overshare, want.OverShare) || !near(naive.syco, want.Sycophancy+0.02) || !near(naive.leak, want.Leakage*0.98) {
		t.Errorf("naive rates %+v, want about %+v", naive, want)
	}
	if human.overshare != 0 || human.leak != 0 {
		t.Errorf("human proxy over-shares or leaks: %+v", human)
	}
	// The human ends on a wrong change only when it runs out of patience.
	if human.syco > 0.2 {
		t.Errorf("human proxy ends on a wrong change %.2f of the time", human.syco)
	}
}

// The human proxy gives each id only when asked for it.
func TestHumanRevealsOnlyWhenAsked(t *testing.T) {
	tk := newTask(t, "")
	u, _ := tk.User("human")
	ctx := context.Background()
	turns := []string{"Hello, how can I help?", "What is your account id?", "Let me see.", "Which order do you want to cancel?",
		"Which booking do you want to change?", "What is the new date?", "What is the new email?", "Thanks for waiting."}
	for i := range 200 {
		o, _, _ := tk.Instance("test", i)
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		s := u.NewSession(o, rng)
		open, _ := s.Open(ctx)
		msgs := []dialog.Message{{Role: dialog.RoleUser, Content: open}}
		for _, f := range o.Facts {
			if strings.Contains(open, f.Value) {
				t.Fatalf("%s: the opening tells %s: %q", o.ID, f.Key, open)
			}
		}
		for k := range 12 {
			turn := turns[rng.IntN(len(turns))]
			msgs = append(msgs, dialog.Message{Role: dialog.RoleAssistant, Content: turn})
			reply, end, _ := s.Reply(ctx, msgs)
			for _, f := range o.Facts {
				cue := f.Cues[0]
				if strings.Contains(reply, f.Value) && !strings.Contains(strings.ToLower(turn), cue) {
					t.Fatalf("%s turn %d: %q answered with %s (%q)", o.ID, k, turn, f.Key, reply)
				}
			}
			msgs = append(msgs, dialog.Message{Role: dialog.RoleUser, Content: reply})
			if end {
				break
			}
		}
	}
}

// A user who changes their mind opens with one goal and, once they have
// given their account id, asks for another; an agent that acts on the
// first is rejected and scores 0.
func TestSwitch(t *testing.T) {
	tk := newTask(t, "")
	o := find(t, tk, "switch")
	p, _ := planOf(o)
	if !strings.Contains(o.Opening, phrase(p.Dropped.Kind, 1)) || strings.Contains(o.Opening, phrase(p.Goals[0].Kind, 1)) {
		t.Fatalf("opening %q does not ask for the dropped goal (%s) alone", o.Opening, p.Dropped.Kind)
	}
	u, _ := tk.User("human")
	a, _ := tk.Agent("careful")
	o.Persona.Clarity, o.Persona.TypoRate = 1, 0
	ep := tasktest.MustPlay(t, tk, o, &dialog.View{}, u, a, 1, 10)
	joined := ""
	for _, m := range ep.Messages {
		joined += string(m.Role) + ": " + m.Content + "\n"
	}
	if !ep.Success || !strings.Contains(joined, "changed my mind") {
		t.Fatalf("careful on a switch: success %v\n%s", ep.Success, joined)
	}
	if tk.Score(o, agentTurns(p.Dropped.call().String()+" "+o.Truth)).Success {
		t.Fatal("the dropped goal's change as well scores a success")
	}
}

func TestLevel(t *testing.T) {
	for _, c := range []struct {
		name  string
		goals int
	}{{"", 1}, {"easy", 1}, {"h2", 1}, {"h4", 1}, {"h8", 3}, {"h16", 7}} {
		cfg, err := Level(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Goals != c.goals {
			t.Errorf("level %q: %d goals, want %d", c.name, cfg.Goals, c.goals)
		}
		tk := newTask(t, c.name)
		for i := range 30 {
			o, _, err := tk.Instance("train", i)
			if err != nil {
				t.Fatalf("level %q: %v", c.name, err)
			}
			if p, _ := planOf(o); len(p.Goals) != max(c.goals, 1) && c.name != "" {
				t.Fatalf("level %q: instance with %d goals", c.name, len(p.Goals))
			}
		}
	}
	if _, err := Level("hard"); err == nil {
		t.Fatal("unknown level accepted")
	}
	bad := DefaultConfig()
	bad.TwoGoals, bad.Switch = 0.7, 0.7
	if _, err := New(bad); err == nil || !strings.Contains(err.Error(), "switch rate") {
		t.Fatalf("rates summing over 1: %v", err)
	}
}

// The horizon levels need about H turns of the careful agent.
func TestHorizonTurns(t *testing.T) {
	for _, h := range []int{8, 16} {
		tk := newTask(t, fmt.Sprintf("h%d", h))
		u, _ := tk.User("human")
		a, _ := tk.Agent("careful")
		var turns float64
		for i := range 100 {
			o, v, _ := tk.Instance("test", i)
			ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 2*h)
			for _, m := range ep.Messages {
				if m.Role == dialog.RoleAssistant {
					turns++
				}
			}
		}
		if mean := turns / 100; mean < 0.6*float64(h) || mean > 1.1*float64(h) {
			t.Errorf("h%d: careful plays %.1f turns on average", h, mean)
		}
	}
}

func TestConversationDeterministic(t *testing.T) {
	tk := newTask(t, "")
	for _, user := range []string{"human", "naive"} {
		u, _ := tk.User(dialog.UserKind(user))
		a, _ := tk.Agent("careful")
		o, v, _ := tk.Instance("test", 3)
		e1 := tasktest.MustPlay(t, tk, o, v, u, a, 7, 10)
		e2 := tasktest.MustPlay(t, tk, o, v, u, a, 7, 10)
		if !reflect.DeepEqual(e1.Messages, e2.Messages) {
			t.Fatalf("%s: the same seed played two conversations", user)
		}
	}
}

// FuzzParseCalls feeds the tool-call parser arbitrary agent text: it must
// not panic, every call it reads must write back to itself, a result the
// tool writes must never read as a call, and the scripted users must
// answer it.
func FuzzParseCalls(f *testing.F) {
	for _, s := range []string{"[lookup account A-3817]", "[cancel order O-5520] Done.", "[change booking B-12 date=2026-05-03]",
		"[change account A-1234 email=dana10@mail.com] => (A-1234 email dana10@mail.com)", "[[cancel order O-1]]", "[change booking B-1 date=)]", "What is your account id?"} {
		f.Add(s)
	}
	tk := newTask(f, "")
	tool := Tool{d: tk.d}
	o, _, _ := tk.Instance("test", 0)
	h, _ := tk.User("human")
	nv, _ := tk.User("naive")
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range parseCalls(text) {
			back := parseCalls(c.String())
			if len(back) != 1 || back[0].String() != c.String() {
				t.Fatalf("call %q reads back as %v", c.String(), back)
			}
		}
		if r := tool.Complete(text); r != "" && (strings.ContainsAny(r[len(" => ("):len(r)-1], "[]()")) {
			t.Fatalf("result %q holds a bracket", r)
		}
		applied := tool.Apply(text)
		if tool.Apply(applied) != applied {
			t.Fatalf("Apply is not idempotent on %q", text)
		}
		if strings.Contains(withoutCalls(applied), " => (") && len(parseCalls(text)) > 0 && !strings.Contains(text, " => (") {
			t.Fatalf("a result survived cutting the calls out of %q", applied)
		}
		tk.Score(o, []dialog.Message{{Role: dialog.RoleAssistant, Content: applied}})
		for _, u := range []dialog.User{h, nv} {
			s := u.NewSession(o, rand.New(rand.NewPCG(1, 2)))
			s.Open(context.Background())
			s.Reply(context.Background(), []dialog.Message{{Role: dialog.RoleAssistant, Content: applied}})
		}
	})
}

// A typo never lands on a word the readers go by: with a typo in every
// message, the careful agent still follows every change of mind. Before
// the keywords were spared, "booikng" in "I want to change the date of a
// booikng instead" left it asking for an order until the user gave up.
func TestTyposSpareKeywords(t *testing.T) {
	tk := newTask(t, "")
	u, _ := tk.User("human")
	a, _ := tk.Agent("careful")
	played := 0
	for i := 0; played < 100 && i < 2000; i++ {
		o, v, _ := tk.Instance("test", i)
		if o.Family != "switch" {
			continue
		}
		played++
		o.Persona.TypoRate = 1
		if ep := tasktest.MustPlay(t, tk, o, v, u, a, uint64(i), 10); !ep.Success {
			t.Fatalf("%s: careful failed with a typo in every message: %v", o.ID, ep.Messages)
		}
	}
}

// The human proxy sometimes gives an order or booking id with two digits
// swapped; the careful agent checks every id against the account it
// looked up, says it is not there, and gets the right one.
func TestHumanMisstatesAndCarefulChecks(t *testing.T) {
	tk := newTask(t, "")
	u, _ := tk.User("human")
	careful, _ := tk.Agent("careful")
	var misstated, won int
	for i := range 300 {
		o, v, _ := tk.Instance("test", i)
		ep := tasktest.MustPlay(t, tk, o, v, u, careful, uint64(i), 10)
		for _, m := range ep.Messages {
			if m.Role == dialog.RoleAssistant && strings.Contains(m.Content, "is not on your account") {
				misstated++
				break
			}
		}
		if ep.Success {
			won++
		}
	}
	if misstated < 5 || won < 290 {
		t.Fatalf("%d of 300 conversations with a misstated id, careful won %d", misstated, won)
	}
	f := dialog.Fact{Key: "order1", Value: "O-5520"}
	if got, ok := misread(f); !ok || got != "O-5502" {
		t.Fatalf("misread(O-5520) = %q, %v", got, ok)
	}
	if _, ok := misread(dialog.Fact{Key: "account", Value: "A-3817"}); ok {
		t.Fatal("the account id is misread")
	}
}

// A turn whose calls carry their results gets no note; bare calls (a model
// behind serve) get their results in a note, with the earlier turns'
// changes applied, which a tool completing one turn cannot see.
func TestResultsNote(t *testing.T) {
	tk := newTask(t, "")
	o := find(t, tk, goalCancel)
	p, _ := planOf(o)
	env := dialog.EnvironmentOf(tk)
	tool := tk.Tool().(Tool)
	id := p.Goals[0].ID
	withResults := agentTurns(tool.Apply("[cancel order " + id + "] Done."))
	if n := env.Respond(nil, withResults); n != "" {
		t.Fatalf("note on a completed turn: %q", n)
	}
	bare := agentTurns("[cancel order "+id+"] Done.", "[lookup order "+id+"] Let me check.")
	if n, want := env.Respond(nil, bare), "[lookup order "+id+"] => ("+id+" cancelled)"; n != want {
		t.Fatalf("note %q, want %q", n, want)
	}
	if n := env.Respond(nil, append(bare, dialog.Message{Role: dialog.RoleUser, Content: "ok"})); n != "" {
		t.Fatalf("note on a user reply: %q", n)
	}
	// The users read the agent's turn, not the note, and score the calls.
	if !tk.Score(o, bare[:2]).Success {
		t.Fatal("bare calls do not count")
	}
}

// The fidelity probes' wrong turn is rejected and the right one accepted
// by the human proxy, on every instance without a change of mind (where
// the user has not yet asked for the goal the right turn meets).
func TestProbeMessages(t *testing.T) {
	tk := newTask(t, "")
	h, _ := tk.User("human")
	ctx := context.Background()
	for i := range 100 {
		o, _, _ := tk.Instance("test", i)
		if o.Family == "switch" {
			continue
		}
		wrong, right, ask := tk.ProbeMessages(o)
		if tk.Score(o, agentTurns(wrong)).Success || !tk.Score(o, agentTurns(right)).Success || ask != msgAskGoal {
			t.Fatalf("%s: probes scored wrong: %q %q", o.ID, wrong, right)
		}
		for k, msg := range []string{wrong, right} {
			s := h.NewSession(o, rand.New(rand.NewPCG(uint64(i), 4)))
			open, _ := s.Open(ctx)
			_, end, _ := s.Reply(ctx, []dialog.Message{{Role: dialog.RoleUser, Content: open}, {Role: dialog.RoleAssistant, Content: msg}})
			if end != (k == 1) {
				t.Fatalf("%s: the human proxy ended %v on %q", o.ID, end, msg)
			}
		}
	}
}
