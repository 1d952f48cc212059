package tokenizer

import (
	"encoding/json"
	"fmt"

	"github.com/calibrl/calibrl/atomicfile"
)

// ChatTemplate is RenderChat and RenderPrompt as a Jinja template, in the
// form Hugging Face transformers reads from tokenizer_config.json
// (apply_chat_template): messages with role and content (and an optional
// done flag), add_generation_prompt to open the next turn, and an optional
// generation_role ("user" for the simulator; "assistant" by default).
// TestChatTemplateGolden checks it against RenderChat with Jinja2.
const ChatTemplate = "{% for message in messages %}" +
	"{{ '<|' + message['role'] + '|>' + message['content'] }}" +
	"{% if message.done %}{{ '<|done|>' }}{% else %}{{ '<|end|>' }}{% endif %}" +
	"{% endfor %}" +
	"{% if add_generation_prompt %}" +
	"{{ '<|' + (generation_role if generation_role is defined else 'assistant') + '|>' }}" +
	"{% endif %}"

// ConfigJSON returns a tokenizer_config.json that lets Hugging Face
// transformers load the folder's tokenizer.json as a PreTrainedTokenizerFast
// with this package's chat template. clean_up_tokenization_spaces is off so
// that decoding stays exact.
func (t *Tokenizer) ConfigJSON() []byte {
	cfg := map[string]any{
		"tokenizer_class":              "PreTrainedTokenizerFast",
		"chat_template":                ChatTemplate,
		"clean_up_tokenization_spaces": false,
		"model_max_length":             1 << 30,
		"additional_special_tokens":    t.Specials(),
	}
	if _, ok := t.specials[Pad]; ok {
		cfg["pad_token"] = Pad
	}
	if _, ok := t.specials[End]; ok {
		cfg["eos_token"] = End
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		panic(err) // strings, bools and ints always marshal
	}
	return append(data, '\n')
}

// SaveConfig writes ConfigJSON to path (tokenizer_config.json beside
// tokenizer.json), atomically.
func (t *Tokenizer) SaveConfig(path string) error {
	if err := atomicfile.WriteBytes(path, t.ConfigJSON()); err != nil {
		return fmt.Errorf("save tokenizer config: %w", err)
	}
	return nil
}
