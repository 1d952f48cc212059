package tokenizer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/calibrl/calibrl/atomicfile"
	"github.com/calibrl/calibrl/infile"
)

// The tokenizer.json layout written by Hugging Face tokenizers (≥ 0.13) for
// a byte-level BPE such as GPT-2's: a model of type BPE with vocab (token →
// id, tokens in the byte-level alphabet) and merges ("left right", in rank
// order), a ByteLevel pre-tokenizer and decoder, and the special tokens in
// added_tokens (also present in vocab, with the same ids). With SplitDigits
// the pre-tokenizer is Sequence[Digits(individual_digits), ByteLevel].

// Bytes returns the tokenizer as tokenizer.json. The output is canonical:
// equal tokenizers give identical bytes.
func (t *Tokenizer) Bytes() []byte {
	t.Fingerprint()
	return bytes.Clone(t.canonical)
}

// MarshalJSON implements json.Marshaler with Bytes.
func (t *Tokenizer) MarshalJSON() ([]byte, error) { return t.Bytes(), nil }

// UnmarshalJSON implements json.Unmarshaler with Parse.
func (t *Tokenizer) UnmarshalJSON(data []byte) error {
	u, err := Parse(data)
	if err != nil {
		return err
	}
	// Replace every field, the memoized fingerprint included.
	*t = Tokenizer{tokens: u.tokens, special: u.special, merges: u.merges, digits: u.digits}
	t.build()
	return nil
}

// Save writes the tokenizer to path as tokenizer.json, atomically.
func (t *Tokenizer) Save(path string) error {
	if err := atomicfile.WriteBytes(path, t.Bytes()); err != nil {
		return fmt.Errorf("save tokenizer: %w", err)
	}
	return nil
}

// Load reads a tokenizer.json written by Save or by Hugging Face tokenizers
// for a byte-level BPE; see Parse for what is accepted.
func Load(path string) (*Tokenizer, error) {
	data, err := infile.ReadFile(nil, path)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer: %w", err)
	}
	t, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load tokenizer %s: %w", path, err)
	}
	return t, nil
}

// marshal renders tokenizer.json by hand so that vocab lists tokens in id
// order (encoding/json would sort map keys) and the output is canonical.
func (t *Tokenizer) marshal() []byte {
	var b bytes.Buffer
	str := func(s string) {
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)           // a string cannot fail to encode
		b.Truncate(b.Len() - 1) // Encode adds a newline
	}
	b.WriteString("{\n  \"version\": \"1.0\",\n  \"truncation\": null,\n  \"padding\": null,\n  \"added_tokens\": [")
	first := true
	for id, sp := range t.special {
		if !sp {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString("\n    {\"id\": " + strconv.Itoa(id) + ", \"content\": ")
		str(t.tokens[id])
		b.WriteString(", \"single_word\": false, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"special\": true}")
	}
	b.WriteString("\n  ],\n  \"normalizer\": null,\n  \"pre_tokenizer\": ")
	const byteLevel = `{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`
	if t.digits {
		b.WriteString(`{"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": true}, ` + byteLevel + `]}`)
	} else {
		b.WriteString(byteLevel)
	}
	b.WriteString(",\n  \"post_processor\": null,\n  \"decoder\": " + byteLevel)
	b.WriteString(",\n  \"model\": {\n    \"type\": \"BPE\",\n    \"dropout\": null,\n    \"unk_token\": null," +
		"\n    \"continuing_subword_prefix\": null,\n    \"end_of_word_suffix\": null,\n    \"fuse_unk\": false," +
		"\n    \"byte_fallback\": false,\n    \"ignore_merges\": false,\n    \"vocab\": {")
	for id := range t.tokens {
		if id > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n      ")
		str(vocabString(t, id))
		b.WriteString(": " + strconv.Itoa(id))
	}
	b.WriteString("\n    },\n    \"merges\": [")
	for r, m := range t.merges {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n      ")
		str(vocabString(t, int(m.left)) + " " + vocabString(t, int(m.right)))
	}
	b.WriteString("\n    ]\n  }\n}\n")
	return b.Bytes()
}

// vocabString is how token id is spelt in tokenizer.json: a special token
// as itself, any other in the byte-level alphabet.
func vocabString(t *Tokenizer, id int) string {
	if t.special[id] {
		return t.tokens[id]
	}
	return byteLevelString([]byte(t.tokens[id]))
}
