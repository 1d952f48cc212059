package tokenizer

import (
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden_tokenizer.json (then rerun testdata/gen_encode_golden.py)")

// TestEncodeGolden loads a committed tokenizer.json and checks Encode
// against ids computed from that file by an independent Python reader
// (testdata/gen_encode_golden.py), which follows how Hugging Face
// tokenizers interprets the format.
func TestEncodeGolden(t *testing.T) {
	if *updateGolden {
		cfg := DefaultTrainConfig()
		cfg.VocabSize = 512
		tok, err := Train(dialogCorpus(1, 1000), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := tok.Save("testdata/golden_tokenizer.json"); err != nil {
			t.Fatal(err)
		}
	}
	tok, err := Load("testdata/golden_tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile("testdata/encode_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		In  string `json:"in"`
		IDs []int  `json:"ids"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 100 {
		t.Fatalf("golden file holds %d cases, want ≥ 100", len(cases))
	}
	for _, c := range cases {
		if got := tok.Encode(c.In); !equalInts(got, c.IDs) {
			t.Errorf("Encode(%q): got %v, want %v", c.In, got, c.IDs)
		}
	}
}

// TestChatTemplateGolden checks that ChatTemplate, rendered by Jinja2 as
// transformers renders chat templates (testdata/gen_chat_golden.py), gives
// the text RenderChat and RenderPrompt produce.
func TestChatTemplateGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/chat_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Messages []Message `json:"messages"`
		Next     string    `json:"next"`
		Text     string    `json:"text"`
	}
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 6 {
		t.Fatalf("golden file holds %d cases, want ≥ 6", len(cases))
	}
	tok := mustDialog(t)
	for i, c := range cases {
		var ids []int
		if c.Next == "" {
			ids, _, err = tok.RenderChat(c.Messages)
		} else {
			ids, _, err = tok.RenderPrompt(c.Messages, c.Next)
		}
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := tok.Decode(ids); got != c.Text {
			t.Errorf("case %d: got %q, want %q", i, got, c.Text)
		}
		// The template's text, encoded with specials (as transformers
		// tokenizes it), gives the same ids, unless a message spells a
		// special token: RenderChat keeps that literal, the text cannot.
		literal := false
		for _, m := range c.Messages {
			literal = literal || strings.Contains(m.Content, "<|")
		}
		if got := tok.EncodeWithSpecials(c.Text); !literal && !equalInts(got, ids) {
			t.Errorf("case %d: EncodeWithSpecials(template text) = %v, RenderChat = %v", i, got, ids)
		}
	}
}

func TestConfigJSON(t *testing.T) {
	tok := mustDialog(t)
	var cfg map[string]any
	if err := json.Unmarshal(tok.ConfigJSON(), &cfg); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{
		"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": ChatTemplate,
		"pad_token": Pad, "eos_token": End, "clean_up_tokenization_spaces": false,
	} {
		if cfg[key] != want {
			t.Errorf("%s: got %v, want %v", key, cfg[key], want)
		}
	}
	if got := len(cfg["additional_special_tokens"].([]any)); got != 6 {
		t.Errorf("additional_special_tokens: got %d, want 6", got)
	}
}
