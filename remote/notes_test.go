package remote

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/chatlm"
	"github.com/calibrl/calibrl/dialog"
	"github.com/calibrl/calibrl/rollout"
	"github.com/calibrl/calibrl/task/docedit"
	"github.com/calibrl/calibrl/tokenizer"
)

// dialogue is the part of a chat after its head (the system prompt, and
// for a role-play chat the opening cue), as (role, content) pairs.
func dialogue[M any](msgs []M, head int, get func(M) (string, string)) [][2]string {
	var out [][2]string
	for _, m := range msgs[head:] {
		r, c := get(m)
		out = append(out, [2]string{r, c})
	}
	return out
}

// A docedit episode played by a remote agent and a remote user: both read
// the environment's note on each command turn where it stands, as a
// system message with the note's text, exactly as calibrl's own agent and
// simulator render the same conversation (chatlm); the agent is sent the
// very chat the embedded agent is prompted with; and a role-play chat read
// back gives the conversation with its notes.
func TestRemoteSpeakersReadTheEnvironmentsNotes(t *testing.T) {
	tk, err := docedit.New(docedit.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	handle := func(n int, body map[string]any) fakeReply {
		msgs := body["messages"].([]any)
		sys := fmt.Sprint(msgs[0].(map[string]any)["content"])
		if strings.Contains(sys, "role-playing") {
			return fakeReply{text: `{"message": "Not quite, look again.", "end": false}`}
		}
		// The agent changes the draft's first word, then the word it made.
		_, draft, _ := strings.Cut(sys, "\nDraft:\n")
		from := strings.Fields(draft)[0]
		if len(msgs) > 2 {
			from = fmt.Sprintf("Zzqx%d", len(msgs)-1)
		}
		return fakeReply{text: fmt.Sprintf(`Change "%s" to "Zzqx%d".`, from, len(msgs)+1)}
	}
	f := newFake(t, handle)
	p := testPool(t, testConfig(f))
	eps, err := rollout.Run(context.Background(), tk, NewAgent(p), NewUser(p), rollout.Config{Split: "test", Instances: 3, Seed: 3, MaxTurns: 3})
	if err != nil {
		t.Fatal(err)
	}
	notes := 0
	for _, ep := range eps {
		for k, m := range ep.Messages {
			if dialog.IsNote(m) {
				notes++
				if !strings.Contains(m.Content, docedit.CurrentMarker) || ep.Messages[k-1].Role != dialog.RoleAssistant {
					t.Fatalf("%s: message %d %q is no note on an agent turn", ep.ID, k, m.Content)
				}
			}
		}
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			end := j + 1
			for end < len(ep.Messages) && dialog.IsNote(ep.Messages[end]) {
				end++
			}
			h := ep.Messages[:end] // the agent's turn and the note on it
			// The user's role-play chat against chatlm's simulator context:
			// the same notes at the same places, the speakers flipped.
			chat := RolePlayChat(&ep.Oracle, h, false, false)
			var gotNotes, wantNotes []string
			for i, m := range chat[2:] {
				if m.Role == dialog.RoleSystem {
					gotNotes = append(gotNotes, fmt.Sprintf("%d:%s", i, m.Content))
				}
			}
			for i, m := range chatlm.UserMessages(&ep.Oracle, h, true, nil)[1:] {
				if m.Role == string(dialog.RoleSystem) {
					wantNotes = append(wantNotes, fmt.Sprintf("%d:%s", i, m.Content))
				}
			}
			if len(wantNotes) == 0 || !reflect.DeepEqual(gotNotes, wantNotes) {
				t.Fatalf("%s: the remote user reads notes %q, the embedded one %q", ep.ID, gotNotes, wantNotes)
			}
			_, back, err := ReadRolePlayChat(chat)
			if err != nil {
				t.Fatal(err)
			}
			if strip := stripTokens(h); !reflect.DeepEqual(back, strip) {
				t.Fatalf("%s: read back\n%+v\nwant\n%+v", ep.ID, back, strip)
			}
		}
	}
	if notes == 0 {
		t.Fatal("no notes in the episodes")
	}
	// What the endpoint was sent: the agent's and the user's requests
	// after a command turn carry the note as a system message.
	sent := map[bool]int{}
	for i := range int(f.calls.Load()) {
		msgs := f.body(i)["messages"].([]any)
		roleplay := strings.Contains(fmt.Sprint(msgs[0].(map[string]any)["content"]), "role-playing")
		for _, m := range msgs[1:] {
			mm := m.(map[string]any)
			if mm["role"] == "system" && strings.Contains(fmt.Sprint(mm["content"]), docedit.CurrentMarker) {
				sent[roleplay]++
			}
		}
	}
	if sent[true] == 0 || sent[false] == 0 {
		t.Fatalf("notes sent to the user %d times, to the agent %d times", sent[true], sent[false])
	}
	// Each agent request is the chat calibrl's own agent is prompted with
	// at that turn (chatlm.AgentMessages), system message included.
	asked := map[string]bool{}
	for i := range int(f.calls.Load()) {
		msgs := f.body(i)["messages"].([]any)
		var chat [][2]string
		for _, m := range msgs {
			mm := m.(map[string]any)
			chat = append(chat, [2]string{fmt.Sprint(mm["role"]), fmt.Sprint(mm["content"])})
		}
		asked[fmt.Sprintf("%q", chat)] = true
	}
	for _, ep := range eps {
		for j, m := range ep.Messages {
			if m.Role != dialog.RoleAssistant {
				continue
			}
			want := dialogue(chatlm.AgentMessages(&ep.View, ep.Messages[:j]), 0, func(m tokenizer.Message) (string, string) { return m.Role, m.Content })
			if !asked[fmt.Sprintf("%q", want)] {
				t.Fatalf("%s: no agent request was the embedded agent's chat\n%q", ep.ID, want)
			}
		}
	}
}

func stripTokens(h []dialog.Message) []dialog.Message {
	out := make([]dialog.Message, len(h))
	for i, m := range h {
		out[i] = dialog.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// A system message after the prompt must follow an agent turn; a chat
// may end with the note on the agent's last turn but not with the user's
// own turn.
func TestReadRolePlayChatNotes(t *testing.T) {
	o := testOracle()
	h := []dialog.Message{{Role: dialog.RoleUser, Content: "hi"}, {Role: dialog.RoleAssistant, Content: "42"}, {Role: dialog.RoleSystem, Content: "Current document:\nx"}}
	if _, back, err := ReadRolePlayChat(RolePlayChat(o, h, false, false)); err != nil || !reflect.DeepEqual(back, h) {
		t.Fatalf("got %+v, %v; want %+v", back, err, h)
	}
	bad := append(RolePlayChat(o, h[:1], false, false), dialog.Message{Role: dialog.RoleSystem, Content: "note"})
	if _, _, err := ReadRolePlayChat(bad); err == nil {
		t.Error("a note after the user's own turn was read")
	}
}

// The judge reads the environment's notes in the conversation it grades,
// each after the agent turn it answers.
func TestJudgePromptShowsNotes(t *testing.T) {
	h := []dialog.Message{{Role: dialog.RoleUser, Content: "fix it"}, {Role: dialog.RoleAssistant, Content: `Change "a" to "b".`}, {Role: dialog.RoleSystem, Content: "Current document:\nb c."}}
	p := judgePrompt(testOracle(), h, "b c.")[0].Content
	if !strings.Contains(p, "Assistant: Change \"a\" to \"b\".\nEnvironment: Current document:\nb c.\n") {
		t.Errorf("the judge's prompt lacks the note after the turn:\n%s", p)
	}
}
