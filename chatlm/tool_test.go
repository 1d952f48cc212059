package chatlm_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/chatlm/chatlmtest"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/task/mathchat"
	"github.com/calibrl/calibrl/tokenizer"
)

// trained decodes the ids a sequence puts weight on.
func trained(m *chatlm.Model, s chatlm.Sequence) string {
	var ids []int
	for i, w := range s.Mask {
		if w > 0 {
			ids = append(ids, s.IDs[i+1])
		}
	}
	return m.Tok.Decode(ids)
}

// In a logged turn the calculator's results carry no loss, and encoding
// the turn in pieces at their edges gives the same ids as encoding it
// whole (digits are their own pieces), so the policy reads what it would
// have sampled.
func TestAgentSequenceMasksToolResults(t *testing.T) {
	eps := chatlmtest.AddEpisodes(4, 1)
	eps[0].Messages[1].Content = "2 + 3 = 5. 5 × 12 = 60. The answer is 60."
	m := chatlmtest.TinyModel(t, eps)
	plain, err := m.AgentSequence(&eps[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	tooled, err := m.AgentSequence(&eps[0], mathchat.Calculator{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(plain.IDs, tooled.IDs) {
		t.Fatalf("ids differ with the tool:\n%v\n%v", plain.IDs, tooled.IDs)
	}
	if got, want := trained(m, tooled), "2 + 3 =. 5 × 12 =. The answer is 60.<|end|>"; got != want {
		t.Fatalf("trained text with the calculator %q, want %q", got, want)
	}
	if got := trained(m, plain); !strings.Contains(got, "= 5.") {
		t.Fatalf("without a tool every agent token is trained, got %q", got)
	}
}

// fortyTwo writes " 42" once, as soon as a turn has two bytes.
type fortyTwo struct{}

func (fortyTwo) Complete(text string) string {
	if len(text) >= 2 && !strings.Contains(text, "42") {
		return " 42"
	}
	return ""
}

// A model agent with a tool samples around what the tool writes, records
// which ids were forced, and the trainers' sequences give those ids no
// weight.
func TestAgentToolForcesAndIsMasked(t *testing.T) {
	eps := chatlmtest.AddEpisodes(8, 2)
	m := chatlmtest.TinyModel(t, eps)
	a := &chatlm.Agent{Model: m, Gen: chatlm.GenConfig{MaxNewTokens: 16, Temperature: 1, TopP: 1}, Tool: fortyTwo{}}
	forcedTurns := 0
	for i := range 8 {
		s := a.NewSession(&eps[i].View, rand.New(rand.NewPCG(uint64(i), 3))).(*chatlm.AgentSession)
		h := eps[i].Messages[:1]
		text, err := s.Act(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		turn := s.Turns[0]
		var forced []int
		for j, f := range turn.Forced {
			if f {
				forced = append(forced, turn.IDs[j])
			}
		}
		if len(forced) == 0 {
			continue // the model stopped before two bytes
		}
		forcedTurns++
		if got := m.Tok.Decode(forced); got != " 42" || !strings.Contains(text, "42") {
			t.Fatalf("forced %q into %q, want \" 42\"", got, text)
		}
		h = append(h, dialog.Message{Role: dialog.RoleAssistant, Content: text})
		seq, err := m.Encode(chatlm.AgentMessages(&eps[i].View, h), tokenizer.RoleAssistant, s.Sampled(h), nil, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got := trained(m, seq); strings.Contains(got, "42") {
			t.Fatalf("forced ids trained: %q", got)
		}
	}
	if forcedTurns == 0 {
		t.Fatal("no turn got the tool's text")
	}
}

// echoUser is a conversation tool: bound to a conversation, it writes the
// user's last message once, as soon as a turn has two bytes.
type echoUser struct{ msg string }

func (e echoUser) Complete(text string) string {
	if e.msg != "" && len(text) >= 2 && !strings.Contains(text, e.msg) {
		return e.msg
	}
	return ""
}

func (echoUser) MaxForced() int { return 256 }

func (echoUser) For(history []dialog.Message) dialog.Tool {
	for i := len(history) - 1; i >= 0; i-- {
		if history[i].Role == dialog.RoleUser {
			return echoUser{history[i].Content}
		}
	}
	return echoUser{}
}

// A tool that reads the conversation is bound to each conversation of a
// batch (dialog.ToolFor), may force more ids than a calculator's result
// (its MaxForced), and what it wrote carries no loss.
func TestConversationToolIsBoundPerConversation(t *testing.T) {
	eps := chatlmtest.AddEpisodes(8, 2)
	m := chatlmtest.TinyModel(t, eps)
	a := &chatlm.Agent{Model: m, Gen: chatlm.GenConfig{MaxNewTokens: 80, Temperature: 1, TopP: 1}, Tool: echoUser{}}
	forcedTurns := 0
	for i := range 8 {
		msg := strings.Repeat(eps[i].Messages[0].Content+" ", 3)
		h := []dialog.Message{{Role: dialog.RoleUser, Content: msg}}
		s := a.NewSession(&eps[i].View, rand.New(rand.NewPCG(uint64(i), 3))).(*chatlm.AgentSession)
		text, err := s.Act(t.Context(), h)
		if err != nil {
			t.Fatal(err)
		}
		turn := s.Turns[0]
		var forced []int
		for j, f := range turn.Forced {
			if f {
				forced = append(forced, turn.IDs[j])
			}
		}
		if len(forced) == 0 {
			continue // the model stopped before two bytes
		}
		forcedTurns++
		if got := m.Tok.Decode(forced); got != msg || len(forced) <= 24 {
			t.Fatalf("forced %q (%d ids) into %q, want the user's message %q whole, over 24 ids", got, len(forced), text, msg)
		}
		// Sampled: the forced ids carry no loss.
		h = append(h, dialog.Message{Role: dialog.RoleAssistant, Content: text})
		seq, err := m.Encode(chatlm.AgentMessages(&eps[i].View, h), tokenizer.RoleAssistant, s.Sampled(h), echoUser{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got := trained(m, seq); strings.Contains(got, msg) {
			t.Fatalf("the tool's text trained: %q", got)
		}
		// Logged (a scripted agent's text): the tool's text, bound to the
		// conversation before the turn, carries no loss.
		h[1].Content = "ok" + msg + "done"
		seq, err = m.Encode(chatlm.AgentMessages(&eps[i].View, h), tokenizer.RoleAssistant, nil, echoUser{}, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := trained(m, seq), "okdone<|end|>"; got != want {
			t.Fatalf("trained text of a logged turn %q, want %q", got, want)
		}
	}
	if forcedTurns == 0 {
		t.Fatal("no turn got the tool's text")
	}
}
