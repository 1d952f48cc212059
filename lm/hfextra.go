package lm

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/calibrl/calibrl/tokenizer"
)

// The files that complete a Hugging Face folder, so that transformers
// loads the tokenizer with its chat template and generate() stops at a
// turn's end. They are written beside tokenizer.json when it is a chat
// tokenizer (tokenizer.Parse reads it and it has the chat template's
// special tokens), with the token ids in config.json, as parts of the
// same save: listed in checkpoint.json and swapped in with the rest.
// They are derived from tokenizer.json, so a loader checks them against
// checkpoint.json and otherwise ignores them.
//
//	tokenizer_config.json    tokenizer class, chat_template, eos/pad tokens
//	special_tokens_map.json  eos, pad and the additional special tokens
//	generation_config.json   eos_token_id [<|end|>, <|done|>], pad_token_id,
//	                         sampling at temperature 1 over the whole
//	                         vocabulary (top_k 0), max_length n_positions
//
// config.json then carries eos_token_id and pad_token_id as well, and
// bos_token_id null: nothing is prepended to a sequence (transformers'
// GPT-2 would otherwise assume id 50256).
const (
	TokenizerConfigFile  = "tokenizer_config.json"
	SpecialTokensMapFile = "special_tokens_map.json"
	GenerationConfigFile = "generation_config.json"
)

var hfFiles = []string{TokenizerConfigFile, SpecialTokensMapFile, GenerationConfigFile}

func isHFFile(name string) bool { return slices.Contains(hfFiles, name) }

// hfExtras is what completes a folder whose tokenizer.json is a chat
// tokenizer.
type hfExtras struct {
	ids   tokenizer.HFTokens
	files map[string][]byte
}

// generationConfig is generation_config.json.
type generationConfig struct {
	BOSTokenID  *int    `json:"bos_token_id"`
	EOSTokenID  []int   `json:"eos_token_id"`
	PadTokenID  int     `json:"pad_token_id"`
	DoSample    bool    `json:"do_sample"`
	Temperature float64 `json:"temperature"`
	TopK        int     `json:"top_k"`
	TopP        float64 `json:"top_p"`
	MaxLength   int     `json:"max_length"`
}

// chatExtras derives the Hugging Face files from tokenizer.json for a
// model of config c; nil when tokJSON is not a chat tokenizer.
func chatExtras(tokJSON []byte, c Config) (*hfExtras, error) {
	if tokJSON == nil {
		return nil, nil
	}
	tok, err := tokenizer.Parse(tokJSON)
	if err != nil || !tok.IsChat() {
		return nil, nil // stored as given, as before
	}
	if tok.VocabSize() > c.VocabSize {
		return nil, fmt.Errorf("%s has %d ids, the model's vocab_size is %d", TokenizerFile, tok.VocabSize(), c.VocabSize)
	}
	ids := tok.HFTokenIDs()
	gen, err := json.MarshalIndent(generationConfig{
		EOSTokenID: ids.EOS, PadTokenID: ids.Pad,
		DoSample: true, Temperature: 1, TopK: 0, TopP: 1, MaxLength: c.Context,
	}, "", "  ")
	if err != nil {
		return nil, err
	}
	return &hfExtras{ids: ids, files: map[string][]byte{
		TokenizerConfigFile:  tok.ConfigJSON(),
		SpecialTokensMapFile: tok.SpecialTokensMapJSON(),
		GenerationConfigFile: append(gen, '\n'),
	}}, nil
}

// setIDs puts the token ids into config.json.
func (e *hfExtras) setIDs(h *hfConfig) {
	eos, _ := json.Marshal(e.ids.EOS)
	pad, _ := json.Marshal(e.ids.Pad)
	h.BOSTokenID, h.EOSTokenID, h.PadTokenID = json.RawMessage("null"), eos, pad
}
