package tokenizer

import (
	"bytes"
	"encoding/json"
)

// HFTokens are the special token ids a Hugging Face model folder names in
// config.json and generation_config.json, for a tokenizer with the chat
// template's special tokens (IsChat).
type HFTokens struct {
	// EOS are the ids that end a generated turn, StopIDs: <|end|> and
	// <|done|>. generate() stops at either.
	EOS []int
	// Pad is <|pad|>'s id.
	Pad int
	// There is no BOS: RenderChat starts with the first turn's role
	// token, and nothing is prepended to a sequence.
}

// IsChat reports whether t has every special token of the chat template
// (DefaultSpecials), so that ChatTemplate, HFTokenIDs and the
// tokenizer_config.json of ConfigJSON describe it.
func (t *Tokenizer) IsChat() bool {
	for _, s := range DefaultSpecials() {
		if _, ok := t.specials[s]; !ok {
			return false
		}
	}
	return true
}

// HFTokenIDs returns the ids of a chat tokenizer (IsChat) for a Hugging
// Face folder's config files.
func (t *Tokenizer) HFTokenIDs() HFTokens {
	return HFTokens{EOS: t.StopIDs(), Pad: int(t.specials[Pad])}
}

// SpecialTokensMapJSON returns special_tokens_map.json, the special
// tokens as ConfigJSON names them: <|end|> as eos_token (the turn end;
// generation_config.json lists <|done|> too), <|pad|> as pad_token, and
// every special token as additional_special_tokens.
func (t *Tokenizer) SpecialTokensMapJSON() []byte {
	m := map[string]any{"additional_special_tokens": t.Specials()}
	if _, ok := t.specials[Pad]; ok {
		m["pad_token"] = Pad
	}
	if _, ok := t.specials[End]; ok {
		m["eos_token"] = End
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // <|end|>, not \u003c|end|\u003e
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		panic(err) // strings always marshal
	}
	return b.Bytes()
}
