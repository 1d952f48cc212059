package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/reply"
	"github.com/calibrl/calibrl/rollout"
)

func testOracle() *dialog.Oracle {
	return &dialog.Oracle{
		Task: "guess", ID: "guess/test/0", Split: "test",
		Instruction: "I want to know what 6 times 7 is.", Opening: "can you help me multiply?",
		Truth: "42", Facts: []dialog.Fact{{Key: "a", Text: "the numbers are 6 and 7", Hidden: true}},
		Persona: dialog.Persona{Patience: 3},
	}
}

func TestUserReplies(t *testing.T) {
	tests := []struct {
		name       string
		replies    []string // per call; the last repeats
		wantText   string
		wantEnd    bool
		wantReason dialog.EndReason
		wantBad    int64
	}{
		{"valid", []string{`{"message": "what do you mean?", "end": false}`}, "what do you mean?", false, "", 0},
		{"fenced then satisfied", []string{"```json\n{\"message\": \"yes, 42, thanks\", \"end\": true, \"satisfied\": true}\n```"}, "yes, 42, thanks", true, dialog.Solved, 0},
		{"ends unsatisfied", []string{`{"message": "forget it", "end": true}`}, "forget it", true, dialog.UserEnded, 0},
		{"malformed then valid", []string{"sure! 42?", `{"message": "no", "end": false}`}, "no", false, "", 1},
		{"always malformed", []string{`{"msg": "x"}`}, reply.Unclear, false, "", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, func(n int, _ map[string]any) fakeReply {
				return fakeReply{text: tt.replies[min(n, len(tt.replies)-1)]}
			})
			u := NewUser(testPool(t, testConfig(f)))
			s := u.NewSession(testOracle(), rand.New(rand.NewPCG(1, 2)))
			hist := []dialog.Message{{Role: dialog.RoleUser, Content: "can you help me multiply?"}, {Role: dialog.RoleAssistant, Content: "is it 42?"}}
			text, end, err := s.Reply(context.Background(), hist)
			if err != nil {
				t.Fatal(err)
			}
			if text != tt.wantText || end != tt.wantEnd {
				t.Errorf("got (%q, %v), want (%q, %v)", text, end, tt.wantText, tt.wantEnd)
			}
			if r := s.(interface{ EndReason() dialog.EndReason }).EndReason(); r != tt.wantReason {
				t.Errorf("got end reason %q, want %q", r, tt.wantReason)
			}
			if u.Malformed() != tt.wantBad {
				t.Errorf("got %d malformed, want %d", u.Malformed(), tt.wantBad)
			}
		})
	}
}

func TestUserPromptCarriesOracleAndFlipsRoles(t *testing.T) {
	f := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{text: `{"message":"ok","end":false}`} })
	u := NewUser(testPool(t, testConfig(f)))
	s := u.NewSession(testOracle(), rand.New(rand.NewPCG(1, 2)))
	hist := []dialog.Message{{Role: dialog.RoleUser, Content: "open"}, {Role: dialog.RoleAssistant, Content: "agent says"}}
	if _, _, err := s.Reply(context.Background(), hist); err != nil {
		t.Fatal(err)
	}
	msgs := f.body(0)["messages"].([]any)
	role := func(i int) string { return msgs[i].(map[string]any)["role"].(string) }
	content := func(i int) string { return fmt.Sprint(msgs[i].(map[string]any)["content"]) }
	if len(msgs) != 4 {
		t.Fatalf("got %d messages, want 4 (system, cue, own opening, agent)", len(msgs))
	}
	sys := content(0)
	for _, want := range []string{"6 times 7", "never to be revealed", "42", "hidden", `"end"`} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q", want)
		}
	}
	if role(2) != "assistant" || !strings.Contains(content(2), `"message":"open"`) {
		t.Errorf("got own opening as %s %q, want an assistant JSON reply", role(2), content(2))
	}
	if role(3) != "user" || content(3) != "agent says" {
		t.Errorf("got agent turn as %s %q, want user \"agent says\"", role(3), content(3))
	}
}

func TestRolePlayChatEnds(t *testing.T) {
	o := testOracle()
	hist := []dialog.Message{{Role: dialog.RoleUser, Content: "hi"}, {Role: dialog.RoleAssistant, Content: "42"}, {Role: dialog.RoleUser, Content: "thanks!"}}
	msgs := RolePlayChat(o, hist, true, true)
	var last reply.User
	if err := json.Unmarshal([]byte(msgs[len(msgs)-1].Content), &last); err != nil {
		t.Fatal(err)
	}
	if last != (reply.User{Message: "thanks!", End: true, Satisfied: true}) {
		t.Errorf("got last reply %+v, want thanks! ending satisfied", last)
	}
	// Silent end after the agent's turn: an empty ending reply is added.
	msgs = RolePlayChat(o, hist[:2], true, false)
	if got := msgs[len(msgs)-1].Content; got != `{"message":"","end":true}` {
		t.Errorf("got %s, want an empty ending reply", got)
	}
	if got := msgs[2].Content; got != `{"message":"hi","end":false}` {
		t.Errorf("got opening %s, want it not ending", got)
	}
}

func TestJudge(t *testing.T) {
	f := newFake(t, func(n int, _ map[string]any) fakeReply {
		if n == 0 {
			return fakeReply{text: "I think it is right"}
		}
		return fakeReply{text: `{"score": 0.9, "reason": "matches"}`}
	})
	j := NewJudge(testPool(t, testConfig(f)))
	v, err := j.Score(context.Background(), testOracle(), nil, "42", 7)
	if err != nil {
		t.Fatal(err)
	}
	if v.Score != 0.9 || v.Reason != "matches" {
		t.Errorf("got %+v, want score 0.9", v)
	}
	g := newFake(t, func(int, map[string]any) fakeReply { return fakeReply{text: "no json"} })
	if _, err := NewJudge(testPool(t, testConfig(g))).Score(context.Background(), testOracle(), nil, "41", 7); err == nil {
		t.Error("got no error from a judge that never answers in JSON")
	}
}

// guessTask is a one-instance-per-index task for rollout tests.
type guessTask struct{}

func (guessTask) Name() string { return "guess" }
func (guessTask) Spec() string { return "guess" }
func (guessTask) Instance(split string, i int) (*dialog.Oracle, *dialog.View, error) {
	o := testOracle()
	o.ID = fmt.Sprintf("guess/%s/%d", split, i)
	return o, &dialog.View{Task: "guess", Instructions: "Help the user."}, nil
}
func (guessTask) Score(o *dialog.Oracle, msgs []dialog.Message) dialog.Score {
	last := ""
	for _, m := range msgs {
		if m.Role == dialog.RoleAssistant {
			last = m.Content
		}
	}
	ok := strings.Contains(last, o.Truth)
	r := 0.0
	if ok {
		r = 1
	}
	return dialog.Score{Outcome: last, Reward: r, Success: ok}
}

func TestRolloutWithRemoteAgentAndUser(t *testing.T) {
	// One server plays both sides: requests with the role-play prompt get
	// user replies, the others agent replies.
	handle := func(n int, body map[string]any) fakeReply {
		msgs := body["messages"].([]any)
		sys := fmt.Sprint(msgs[0].(map[string]any)["content"])
		if strings.Contains(sys, "role-playing") {
			if len(msgs) <= 2 {
				return fakeReply{text: `{"message": "help me multiply", "end": false}`}
			}
			if last := fmt.Sprint(msgs[len(msgs)-1].(map[string]any)["content"]); strings.Contains(last, "42") {
				return fakeReply{text: `{"message": "right, thanks", "end": true, "satisfied": true}`}
			}
			return fakeReply{text: `{"message": "6 and 7", "end": false}`}
		}
		if len(msgs) <= 2 {
			return fakeReply{text: "which numbers?"}
		}
		return fakeReply{text: "it is 42"}
	}
	a, b := newFake(t, handle), newFake(t, handle)
	p := testPool(t, testConfig(a, b))
	eps, err := rollout.Run(context.Background(), guessTask{}, NewAgent(p), NewUser(p), rollout.Config{Split: "test", Instances: 6, Group: 2, Seed: 3, MaxTurns: 4})
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if !ep.Success || ep.End != dialog.Solved || ep.Turns != 2 || len(ep.Messages) != 5 {
			t.Errorf("episode %s: got success %v end %s turns %d messages %d, want solved in 2 turns with 5 messages", ep.ID, ep.Success, ep.End, ep.Turns, len(ep.Messages))
		}
	}
	// 12 episodes × (open + 2 agent + 2 user) requests.
	if s := p.Stats(); s.Requests != 60 || s.Errors != 0 {
		t.Errorf("got %+v, want 60 requests and no errors", s)
	}
	if a.calls.Load() == 0 || b.calls.Load() == 0 {
		t.Errorf("got calls %d and %d, want both endpoints used", a.calls.Load(), b.calls.Load())
	}
}

var (
	_ dialog.BatchUser   = (*User)(nil)
	_ dialog.BatchOpener = (*User)(nil)
	_ dialog.BatchAgent  = (*Agent)(nil)
)

func TestBatchFailsOnOneBadConversation(t *testing.T) {
	f := newFake(t, func(_ int, body map[string]any) fakeReply {
		msgs := body["messages"].([]any)
		if last := fmt.Sprint(msgs[len(msgs)-1].(map[string]any)["content"]); last == "poison" {
			return fakeReply{status: 400}
		}
		return fakeReply{text: "fine", delay: 5 * time.Millisecond}
	})
	a := NewAgent(testPool(t, testConfig(f)))
	v := &dialog.View{Instructions: "x"}
	var sessions []dialog.AgentSession
	var hists [][]dialog.Message
	for i := range 8 {
		sessions = append(sessions, a.NewSession(v, rand.New(rand.NewPCG(uint64(i), 0))))
		content := "hello"
		if i == 5 {
			content = "poison"
		}
		hists = append(hists, []dialog.Message{{Role: dialog.RoleUser, Content: content}})
	}
	_, err := a.ActBatch(context.Background(), sessions, hists)
	if err == nil || !strings.Contains(err.Error(), "conversation 5") {
		t.Fatalf("got %v, want an error naming conversation 5", err)
	}
	hists[5][0].Content = "hello"
	out, err := a.ActBatch(context.Background(), sessions, hists)
	if err != nil || len(out) != 8 || out[7] != "fine" {
		t.Fatalf("got %v, %v; want 8 replies", out, err)
	}
}
