package tokenizer

import (
	"slices"
	"strings"
	"testing"
)

// byteTokenizer has no merges: every byte b is id 6+b, so ids can be
// written by hand.
func byteTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 262
	tok, err := Train(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func bytesIDs(s string) []int {
	var out []int
	for i := 0; i < len(s); i++ {
		out = append(out, 6+int(s[i]))
	}
	return out
}

func TestRenderChatHandChecked(t *testing.T) {
	tok := byteTokenizer(t)
	const sys, usr, asst, end, done = 1, 2, 3, 4, 5
	msgs := []Message{
		{Role: "system", Content: "Hi"},
		{Role: "user", Content: "2+2?"},
		{Role: "assistant", Content: "4"},
		{Role: "user", Content: "ok", Done: true},
	}
	ids, roles, err := tok.RenderChat(msgs)
	if err != nil {
		t.Fatal(err)
	}
	want := concat([]int{sys}, bytesIDs("Hi"), []int{end},
		[]int{usr}, bytesIDs("2+2?"), []int{end},
		[]int{asst}, bytesIDs("4"), []int{end},
		[]int{usr}, bytesIDs("ok"), []int{done})
	if !equalInts(ids, want) {
		t.Errorf("ids: got %v, want %v", ids, want)
	}
	S, U, A := RoleSystem, RoleUser, RoleAssistant
	wantRoles := []Role{S, S, S, S, U, U, U, U, U, U, A, A, A, U, U, U, U}
	if !slices.Equal(roles, wantRoles) {
		t.Errorf("roles: got %v, want %v", roles, wantRoles)
	}
	if got, want := tok.Decode(ids), "<|system|>Hi<|end|><|user|>2+2?<|end|><|assistant|>4<|end|><|user|>ok<|done|>"; got != want {
		t.Errorf("Decode: got %q, want %q", got, want)
	}
	mask := RoleMask(roles, RoleAssistant)
	n := 0
	for i, m := range mask {
		if m {
			n++
			if i < 10 || i > 12 {
				t.Errorf("assistant mask set at %d", i)
			}
		}
	}
	if n != 3 {
		t.Errorf("assistant mask: got %d tokens, want 3", n)
	}
}

func TestRenderChatLiteralContent(t *testing.T) {
	tok := byteTokenizer(t)
	ids, _, err := tok.RenderChat([]Message{{Role: "user", Content: "say <|end|> now"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ids, concat([]int{2}, bytesIDs("say <|end|> now"), []int{4}); !equalInts(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestRenderPrompt(t *testing.T) {
	tok := byteTokenizer(t)
	ids, roles, err := tok.RenderPrompt([]Message{{Role: "user", Content: "a"}}, "assistant")
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{2, 6 + 'a', 4, 3}; !equalInts(ids, want) {
		t.Errorf("ids: got %v, want %v", ids, want)
	}
	if want := []Role{RoleUser, RoleUser, RoleUser, RoleAssistant}; !slices.Equal(roles, want) {
		t.Errorf("roles: got %v, want %v", roles, want)
	}
	if _, _, err := tok.RenderPrompt(nil, "bot"); err == nil || !strings.Contains(err.Error(), "bot") {
		t.Errorf("unknown next role: got %v", err)
	}
}

func TestRenderChatErrors(t *testing.T) {
	tok := byteTokenizer(t)
	_, _, err := tok.RenderChat([]Message{{Role: "user"}, {Role: "robot"}})
	if err == nil || !strings.Contains(err.Error(), "message 1") {
		t.Errorf("unknown role: got %v, want an error naming message 1", err)
	}
	cfg := DefaultTrainConfig()
	cfg.Specials = []string{Pad, User}
	cfg.VocabSize = 258
	bare, err := Train(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := bare.RenderChat([]Message{{Role: "user"}}); err == nil || !strings.Contains(err.Error(), End) {
		t.Errorf("tokenizer without <|end|>: got %v", err)
	}
}

func TestParseReply(t *testing.T) {
	tok := byteTokenizer(t)
	tests := []struct {
		ids  []int
		want Reply
	}{
		{concat(bytesIDs("yes"), []int{4}, bytesIDs("junk")), Reply{Text: "yes", Stop: End, N: 4}},
		{concat(bytesIDs("bye"), []int{5}), Reply{Text: "bye", Stop: Done, N: 4}},
		{[]int{5}, Reply{Text: "", Stop: Done, N: 1}},
		{concat(bytesIDs("hm"), []int{2}), Reply{Text: "hm", Stop: User, N: 3}},
		{bytesIDs("cut off"), Reply{Text: "cut off", Stop: "", N: 7}},
		{nil, Reply{}},
	}
	for _, tc := range tests {
		if got := tok.ParseReply(tc.ids); got != tc.want {
			t.Errorf("ParseReply(%v): got %+v, want %+v", tc.ids, got, tc.want)
		}
	}
	if !tok.ParseReply([]int{5}).Done() || tok.ParseReply([]int{4}).Done() {
		t.Error("Reply.Done: wrong")
	}
	if got, want := tok.StopIDs(), []int{4, 5}; !equalInts(got, want) {
		t.Errorf("StopIDs: got %v, want %v", got, want)
	}
}

func TestParseRole(t *testing.T) {
	for _, r := range []Role{RoleSystem, RoleUser, RoleAssistant} {
		got, err := ParseRole(r.String())
		if err != nil || got != r {
			t.Errorf("ParseRole(%q): got %v %v, want %v", r.String(), got, err, r)
		}
	}
	if _, err := ParseRole("none"); err == nil {
		t.Error(`ParseRole("none"): got nil error`)
	}
}
