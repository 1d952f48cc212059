package tokenizer

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestChatTemplateStructure renders chats by substituting into
// ChatTemplate's own parts — a loop over messages whose body is one
// concatenation of quoted literals and message fields, a choice of closing
// token on done, then the optional generation prompt — and checks that the
// text is RenderChat's or RenderPrompt's. It is no Jinja engine: it reads
// exactly this template's shape and fails on any other (Jinja2 itself
// renders it in TestChatTemplateGolden).
func TestChatTemplateStructure(t *testing.T) {
	rest := ChatTemplate
	take := func(open, close string) string {
		t.Helper()
		if !strings.HasPrefix(rest, open) {
			t.Fatalf("template: want %q at %q", open, rest)
		}
		inner, after, ok := strings.Cut(rest[len(open):], close)
		if !ok {
			t.Fatalf("template: no %q after %q", close, open)
		}
		rest = after
		return inner
	}
	body := take("{% for message in messages %}", "{% endfor %}")
	gen := take("{% if add_generation_prompt %}", "{% endif %}")
	if rest != "" {
		t.Fatalf("template: %q left over", rest)
	}
	rest = body
	turn := take("{{ ", " }}")
	doneTok := take("{% if message.done %}{{ ", " }}")
	endTok := take("{% else %}{{ ", " }}{% endif %}")
	if rest != "" {
		t.Fatalf("template loop: %q left over", rest)
	}
	rest = gen
	open := take("{{ ", " }}")
	if rest != "" {
		t.Fatalf("template prompt: %q left over", rest)
	}
	const defaultRole = "(generation_role if generation_role is defined else 'assistant')"
	// eval concatenates the quoted literals and the named values of expr.
	eval := func(expr string, vars map[string]string) string {
		t.Helper()
		var b strings.Builder
		for _, term := range strings.Split(expr, " + ") {
			if v, ok := vars[term]; ok {
				b.WriteString(v)
			} else if len(term) >= 2 && term[0] == '\'' && term[len(term)-1] == '\'' && !strings.ContainsAny(term[1:len(term)-1], `'\`) {
				b.WriteString(term[1 : len(term)-1])
			} else {
				t.Fatalf("template: term %q is neither a literal nor one of %v", term, vars)
			}
		}
		return b.String()
	}
	render := func(msgs []Message, next string) string {
		var b strings.Builder
		for _, m := range msgs {
			b.WriteString(eval(turn, map[string]string{"message['role']": m.Role, "message['content']": m.Content}))
			if m.Done {
				b.WriteString(eval(doneTok, nil))
			} else {
				b.WriteString(eval(endTok, nil))
			}
		}
		if next != "" {
			// The term's value: generation_role, or, undefined, 'assistant'.
			b.WriteString(eval(open, map[string]string{defaultRole: next}))
		}
		return b.String()
	}

	tok := mustDialog(t)
	for _, c := range []struct {
		msgs []Message
		next string
	}{
		{[]Message{{Role: "system", Content: "Answer sums."}, {Role: "user", Content: "what is 2 plus 3?"}}, ""},
		{[]Message{{Role: "user", Content: "2+3?"}, {Role: "assistant", Content: "5."}}, "user"},
		{[]Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "thanks, bye", Done: true}}, ""},
		{[]Message{{Role: "system", Content: "Be brief."}, {Role: "user", Content: "héllo 12"}}, "assistant"},
	} {
		var ids []int
		var err error
		if c.next == "" {
			ids, _, err = tok.RenderChat(c.msgs)
		} else {
			ids, _, err = tok.RenderPrompt(c.msgs, c.next)
		}
		if err != nil {
			t.Fatal(err)
		}
		text := render(c.msgs, c.next)
		if want := tok.Decode(ids); text != want {
			t.Errorf("%v next %q: template gives %q, RenderChat %q", c.msgs, c.next, text, want)
		}
		if got := tok.EncodeWithSpecials(text); !equalInts(got, ids) {
			t.Errorf("%v next %q: template text encodes to %v, RenderChat gives %v", c.msgs, c.next, got, ids)
		}
	}
}

func TestHFTokenFiles(t *testing.T) {
	tok := mustDialog(t)
	if !tok.IsChat() {
		t.Fatal("dialog tokenizer: IsChat false")
	}
	ids := tok.HFTokenIDs()
	end, _ := tok.SpecialID(End)
	done, _ := tok.SpecialID(Done)
	pad, _ := tok.SpecialID(Pad)
	if !slices.Equal(ids.EOS, []int{end, done}) || ids.Pad != pad {
		t.Errorf("HFTokenIDs: got %+v, want eos [%d %d] pad %d", ids, end, done, pad)
	}
	var m struct {
		EOS        string   `json:"eos_token"`
		Pad        string   `json:"pad_token"`
		Additional []string `json:"additional_special_tokens"`
	}
	if err := json.Unmarshal(tok.SpecialTokensMapJSON(), &m); err != nil {
		t.Fatal(err)
	}
	if m.EOS != End || m.Pad != Pad || !slices.Equal(m.Additional, DefaultSpecials()) {
		t.Errorf("special_tokens_map: got %+v", m)
	}
	cfg := DefaultTrainConfig()
	cfg.VocabSize, cfg.Specials = 300, []string{Pad, End}
	plain, err := Train([]string{"a b c a b c"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if plain.IsChat() {
		t.Error("a tokenizer without role tokens: IsChat true")
	}
}
