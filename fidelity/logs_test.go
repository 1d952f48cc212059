package fidelity

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task"
)

// replyUser answers by a table keyed on the agent's last message and
// records every history it is asked to reply to, so a test can check it
// was teacher-forced.
type replyUser struct {
	open    string
	replies map[string]struct {
		text string
		end  bool
	}
	seen [][]dialog.Message
}

func (u *replyUser) NewSession(*dialog.Oracle, *rand.Rand) dialog.UserSession { return replySession{u} }

type replySession struct{ u *replyUser }

func (s replySession) Open(context.Context) (string, error) { return s.u.open, nil }

func (s replySession) Reply(_ context.Context, h []dialog.Message) (string, bool, error) {
	s.u.seen = append(s.u.seen, append([]dialog.Message(nil), h...))
	r, ok := s.u.replies[h[len(h)-1].Content]
	if !ok {
		return "Sure, go on.", false, nil
	}
	return r.text, r.end, nil
}

func msg(role dialog.Role, text string) dialog.Message {
	return dialog.Message{Role: role, Content: text}
}

// handLogs are three logged conversations on mathOracle (truth 102, the
// hidden fact "3 days in total"), their people's acts by user turn:
//
//	A (solved):    other, provide_fact, accept (ended)
//	B (gave up):   other, reject, end (ended without a last message)
//	C (turn limit): other, reject          (the last agent turn unanswered)
func handLogs() []dialog.Episode {
	open := "Help me. " + mathOracle.Opening
	return []dialog.Episode{
		{Oracle: *mathOracle, End: dialog.Solved, Messages: []dialog.Message{
			msg(dialog.RoleUser, open),
			msg(dialog.RoleAssistant, "How many days does Eva work?"),
			msg(dialog.RoleUser, "Eva works for 3 days in total."),
			msg(dialog.RoleAssistant, "The answer is 102."),
			msg(dialog.RoleUser, "Yes, that's what I got. Thanks!"),
		}},
		{Oracle: *mathOracle, End: dialog.GaveUp, Messages: []dialog.Message{
			msg(dialog.RoleUser, open),
			msg(dialog.RoleAssistant, "The answer is 51."),
			msg(dialog.RoleUser, "Hmm, that doesn't match what I got."),
			msg(dialog.RoleAssistant, "The answer is 60."),
		}},
		{Oracle: *mathOracle, End: dialog.MaxTurns, Messages: []dialog.Message{
			msg(dialog.RoleUser, open),
			msg(dialog.RoleAssistant, "The answer is 7."),
			msg(dialog.RoleUser, "Hmm, that doesn't match what I got."),
			msg(dialog.RoleAssistant, "The answer is 8."),
		}},
	}
}

// swapUser says to conversation A what B's person said and the other way
// round at user turn 1, so the act distribution at turn 1 is the people's
// while no single turn agrees.
func swapUser(extra map[string]struct {
	text string
	end  bool
}) *replyUser {
	u := &replyUser{open: "Help me. " + mathOracle.Opening, replies: map[string]struct {
		text string
		end  bool
	}{
		"How many days does Eva work?": {"Hmm, that doesn't match what I got.", false},
		"The answer is 51.":            {"Eva works for 3 days in total.", false},
		"The answer is 102.":           {"Yes, that's what I got. Thanks!", true},
	}}
	for k, v := range extra {
		u.replies[k] = v
	}
	return u
}

func TestMeasureLogsHandBuilt(t *testing.T) {
	eps := handLogs()
	// C's turn 1: the simulator blurts out the answer nobody asked for.
	u := swapUser(map[string]struct {
		text string
		end  bool
	}{"The answer is 7.": {"The answer is 102.", false}})
	rep, err := MeasureLogs(context.Background(), "swap", u, eps, LogConfig{Turns: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Contexts: A 3, B 3 (the silent end), C 2 (its last agent turn was
	// cut by the turn limit, not answered).
	if rep.UserTurns != 8 || !reflect.DeepEqual(rep.Contexts, []int{3, 3, 2, 0}) {
		t.Fatalf("user turns %d, contexts by turn %v; want 8, [3 3 2 0]", rep.UserTurns, rep.Contexts)
	}
	// Agreement: the 3 openings and A's acceptance; not A1, B1, C1 (swapped
	// or leaked), nor B2 (the person ended, the simulator went on).
	if rep.Agreement != 0.5 {
		t.Errorf("agreement %v, want 4/8", rep.Agreement)
	}
	if want := []float64{1, 0, 0.5, 0}; !reflect.DeepEqual(rep.AgreementByTurn, want) {
		t.Errorf("agreement by turn %v, want %v", rep.AgreementByTurn, want)
	}
	// Turn 1: people {provide 1/3, reject 2/3}, simulator {reject 1/3,
	// provide 1/3, leak 1/3}: δ_1 = ½(0 + 1/3 + 1/3) = 1/3. Turn 2: people
	// {accept ½, end ½}, simulator {accept ½, other ½}: δ_2 = ½.
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-12 }
	if !near(rep.Delta[0], 0) || !near(rep.Delta[1], 1.0/3) || !near(rep.Delta[2], 0.5) || rep.Delta[3] != 0 {
		t.Errorf("δ_t %v, want [0 1/3 1/2 0]", rep.Delta)
	}
	if !near(rep.DeltaMean, (0+1.0/3+0.5)/3) {
		t.Errorf("δ̄ %v, want the mean over the 3 turns with contexts, %v", rep.DeltaMean, (0+1.0/3+0.5)/3)
	}
	// Termination: the simulator ended once (A2, where the person did);
	// the people ended twice (A2 and B's silent end).
	tm := rep.Termination
	if tm.SimEnds != 1 || tm.PersonEnds != 2 || tm.Both != 1 || tm.Precision == nil || *tm.Precision != 1 || tm.Recall == nil || *tm.Recall != 0.5 {
		t.Errorf("termination %+v (precision %v, recall %v), want 1 sim end, 2 person ends, 1 both, precision 1, recall ½",
			tm, deref(tm.Precision), deref(tm.Recall))
	}
	// Leakage: B1 gives the hidden fact though B's agent asked nothing; C1
	// gives the answer unasked. The people gave the fact only when asked.
	if l := rep.Leakage; l.Truth != 1 || l.Fact != 1 || l.Turns != 2 || l.Rate != 0.25 {
		t.Errorf("simulator leakage %+v, want truth 1, fact 1, turns 2, rate 0.25", l)
	}
	if l := rep.PersonLeakage; l.Turns != 0 {
		t.Errorf("people's leakage %+v, want none", l)
	}
	// Teacher forcing: A's last reply read A's logged history, with the
	// person's "3 days" turn, not the simulator's own rejection.
	var sawA bool
	for _, h := range u.seen {
		if reflect.DeepEqual(h, eps[0].Messages[:4]) {
			sawA = true
		}
		for _, m := range h {
			if m.Role == dialog.RoleUser && m.Content == "Hmm, that doesn't match what I got." && len(h) == 4 && h[1].Content == "How many days does Eva work?" {
				t.Fatal("the simulator read its own earlier turn, not the logged one")
			}
		}
	}
	if !sawA {
		t.Error("the simulator never read conversation A's logged history before its last turn")
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// The must-fail case: at turn 1 the simulator says exactly what the people
// say, to the wrong people. The distributions match (δ_1 = 0) but no turn
// agrees; agreement computed from the distributions (1 − δ, or the
// overlap of the marginals) would say 1.
func TestMeasureLogsAgreementIsPerTurnNotMarginal(t *testing.T) {
	eps := handLogs()[:2]
	rep, err := MeasureLogs(context.Background(), "swap", swapUser(nil), eps, LogConfig{Turns: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Delta[1] != 0 {
		t.Fatalf("δ_1 %v, want 0: the swapped acts have the people's distribution", rep.Delta[1])
	}
	if rep.AgreementByTurn[1] != 0 {
		t.Fatalf("agreement at turn 1 %v, want 0: every turn-1 act went to the other conversation", rep.AgreementByTurn[1])
	}
}

func TestMeasureLogsEmptyAndNLL(t *testing.T) {
	if _, err := MeasureLogs(context.Background(), "x", swapUser(nil), nil, LogConfig{}, nil); err == nil {
		t.Error("no conversations: want an error")
	}
	rep, err := MeasureLogs(context.Background(), "x", swapUser(nil), handLogs(), LogConfig{}, func([]dialog.Episode) float64 { return math.Log(4) })
	if err != nil {
		t.Fatal(err)
	}
	if rep.NLL == nil || rep.Perplexity == nil || math.Abs(*rep.Perplexity-4) > 1e-12 {
		t.Errorf("NLL %v perplexity %v, want ln 4 and 4", deref(rep.NLL), deref(rep.Perplexity))
	}
	if len(rep.Delta) != 6 {
		t.Errorf("default turns %d, want 6", len(rep.Delta))
	}
}

func TestAsksTruthAndFact(t *testing.T) {
	days := mathOracle.Facts[1]
	cases := []struct {
		msg         string
		truth, fact bool
	}{
		{"Can you just tell me the answer?", true, false},
		{"What result did you get?", true, false},
		{"The answer is 102.", false, false}, // a statement, not a question
		{"Is the answer 102?", false, false}, // proposes a number
		{"How many days does Eva work?", false, true},
		{"Tell me the total number of days.", false, true},
		{"Eva works some days.", false, false}, // no question
		{"How much does she earn per hour?", false, false},
	}
	for _, c := range cases {
		if got := AsksTruth(mathOracle, c.msg); got != c.truth {
			t.Errorf("AsksTruth(%q) = %v, want %v", c.msg, got, c.truth)
		}
		if got := AsksFact(days, c.msg); got != c.fact {
			t.Errorf("AsksFact(days, %q) = %v, want %v", c.msg, got, c.fact)
		}
	}
	if !AsksTruth(docOracle, "Could you paste the full text you want?") {
		t.Error("asking a document user for the full text is asking for the truth")
	}
	asked := []dialog.Message{msg(dialog.RoleUser, "hi"), msg(dialog.RoleAssistant, "How many days in total?")}
	if tr, f := LeaksUnasked(mathOracle, asked, "Eva works for 3 days in total."); tr || f {
		t.Error("a fact given when asked counted as a leak")
	}
	if _, f := LeaksUnasked(mathOracle, asked[:1], "Eva works for 3 days in total."); !f {
		t.Error("a fact given before any question: want a leak")
	}
}

// On procedural logs the human proxy wrote, the human proxy replayed
// (under other random draws) agrees with the logged people better than
// the naive simulator, which over-shares hidden facts in its openings and
// ends early.
func TestMeasureLogsHumanProxyBeatsNaive(t *testing.T) {
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	human, err := tk.User("human")
	if err != nil {
		t.Fatal(err)
	}
	naive, err := tk.User("naive")
	if err != nil {
		t.Fatal(err)
	}
	var eps []dialog.Episode
	for _, p := range tk.Profiles() {
		agent, err := tk.Agent(p)
		if err != nil {
			t.Fatal(err)
		}
		e, err := rollout.Run(context.Background(), tk, agent, human, rollout.Config{Split: "test", Instances: 20, Seed: 3, MaxTurns: 6})
		if err != nil {
			t.Fatal(err)
		}
		eps = append(eps, e...)
	}
	h, err := MeasureLogs(context.Background(), "human", human, eps, LogConfig{Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n, err := MeasureLogs(context.Background(), "naive", naive, eps, LogConfig{Seed: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("human: agreement %.3f δ̄ %.3f leak %.3f; naive: agreement %.3f δ̄ %.3f leak %.3f",
		h.Agreement, h.DeltaMean, h.Leakage.Rate, n.Agreement, n.DeltaMean, n.Leakage.Rate)
	if h.Agreement < 0.8 || h.Agreement <= n.Agreement {
		t.Errorf("act agreement: human proxy %.3f, naive %.3f; want the human ≥ 0.8 and above naive", h.Agreement, n.Agreement)
	}
	if h.DeltaMean >= n.DeltaMean {
		t.Errorf("δ̄: human proxy %.3f, naive %.3f; want the human lower", h.DeltaMean, n.DeltaMean)
	}
	if n.Leakage.Fact == 0 || h.Leakage.Rate > h.PersonLeakage.Rate+0.05 {
		t.Errorf("leakage: naive %+v (want fact leaks from over-shared openings), human %+v vs people %+v",
			n.Leakage, h.Leakage, h.PersonLeakage)
	}
}

// Logged conversations are outside input: whatever their turns say,
// MeasureLogs does not fail and its figures keep their invariants. The
// pairing of contexts is a coupling of the two act distributions, so
// δ_t ≤ 1 − agreement_t at every turn.
func FuzzMeasureLogs(f *testing.F) {
	f.Add("Help me. "+mathOracle.Opening, "How many days does Eva work?", "Eva works for 3 days in total.", "The answer is 102.", "Yes, that's what I got. Thanks!", uint8(0))
	f.Add("", "Can you just tell me the answer?", "The answer is 102.", "", "", uint8(1))
	f.Add("3 days, 102", "?", "bye", "The answer is 1,02.", "no, ", uint8(2))
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		f.Fatal(err)
	}
	human, err := tk.User("human")
	if err != nil {
		f.Fatal(err)
	}
	ends := []dialog.EndReason{dialog.Solved, dialog.GaveUp, dialog.MaxTurns, dialog.UserEnded}
	f.Fuzz(func(t *testing.T, open, a1, u1, a2, u2 string, end uint8) {
		msgs := []dialog.Message{msg(dialog.RoleUser, open), msg(dialog.RoleAssistant, a1), msg(dialog.RoleUser, u1), msg(dialog.RoleAssistant, a2)}
		if u2 != "" {
			msgs = append(msgs, msg(dialog.RoleUser, u2))
		}
		eps := []dialog.Episode{{Oracle: *mathOracle, End: ends[int(end)%len(ends)], Messages: msgs}, handLogs()[0]}
		for _, u := range []dialog.User{human, swapUser(nil)} {
			rep, err := MeasureLogs(context.Background(), "fuzz", u, eps, LogConfig{Turns: 4}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Agreement < 0 || rep.Agreement > 1 || rep.Leakage.Turns > rep.UserTurns || rep.PersonLeakage.Turns > rep.UserTurns {
				t.Fatalf("figures out of range: %+v", rep)
			}
			for i, d := range rep.Delta {
				if rep.Contexts[i] > 0 && d > 1-rep.AgreementByTurn[i]+1e-12 {
					t.Fatalf("turn %d: δ %v above 1 − agreement %v", i, d, rep.AgreementByTurn[i])
				}
			}
			for _, p := range []*float64{rep.Termination.Precision, rep.Termination.Recall} {
				if p != nil && (*p < 0 || *p > 1) {
					t.Fatalf("termination %+v out of [0,1]", rep.Termination)
				}
			}
		}
	})
}

// Config.Agents takes bare profiles and full specs; without Config.Agent
// only scripted profiles can be built, and saying so beats a wrong agent.
func TestAgentSpecAndBuildAgent(t *testing.T) {
	for in, want := range map[string]string{"careful": "scripted:careful", "scripted:sloppy": "scripted:sloppy", "lm:runs/p": "lm:runs/p"} {
		if got := AgentSpec(in); got != want {
			t.Errorf("AgentSpec(%q) = %q, want %q", in, got, want)
		}
	}
	tk, err := task.Lookup("mathchat:easy")
	if err != nil {
		t.Fatal(err)
	}
	ft := tk.(Task)
	if _, err := buildAgent(ft, Config{}, "careful"); err != nil {
		t.Errorf("bare profile: %v", err)
	}
	if _, err := buildAgent(ft, Config{}, "lm:runs/p"); err == nil || !strings.Contains(err.Error(), "Config.Agent") {
		t.Errorf("lm agent without Config.Agent: got %v, want an error naming Config.Agent", err)
	}
	var asked string
	cfg := Config{Agent: func(name string) (dialog.Agent, error) { asked = name; return ft.Agent("careful") }}
	if _, err := buildAgent(ft, cfg, "guesser"); err != nil || asked != "scripted:guesser" {
		t.Errorf("Config.Agent asked for %q (%v), want scripted:guesser", asked, err)
	}
}
