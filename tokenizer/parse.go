package tokenizer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

type fileJSON struct {
	Truncation    json.RawMessage `json:"truncation"`
	Padding       json.RawMessage `json:"padding"`
	AddedTokens   []addedJSON     `json:"added_tokens"`
	Normalizer    json.RawMessage `json:"normalizer"`
	PreTokenizer  json.RawMessage `json:"pre_tokenizer"`
	PostProcessor json.RawMessage `json:"post_processor"`
	Decoder       json.RawMessage `json:"decoder"`
	Model         *modelJSON      `json:"model"`
}

type addedJSON struct {
	ID         *int    `json:"id"`
	Content    *string `json:"content"`
	SingleWord bool    `json:"single_word"`
	Lstrip     bool    `json:"lstrip"`
	Rstrip     bool    `json:"rstrip"`
	Special    *bool   `json:"special"`
}

type modelJSON struct {
	Type                    string            `json:"type"`
	Dropout                 *float64          `json:"dropout"`
	UnkToken                *string           `json:"unk_token"`
	ContinuingSubwordPrefix *string           `json:"continuing_subword_prefix"`
	EndOfWordSuffix         *string           `json:"end_of_word_suffix"`
	ByteFallback            bool              `json:"byte_fallback"`
	IgnoreMerges            bool              `json:"ignore_merges"`
	Vocab                   json.RawMessage   `json:"vocab"`
	Merges                  []json.RawMessage `json:"merges"`
}

// component is any pre-tokenizer, decoder or post-processor entry.
type component struct {
	Type             string            `json:"type"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	UseRegex         *bool             `json:"use_regex"`
	IndividualDigits *bool             `json:"individual_digits"`
	Pretokenizers    []json.RawMessage `json:"pretokenizers"`
}

// Parse reads a tokenizer.json. It accepts exactly what this package can
// encode the same way Hugging Face tokenizers would: a BPE model without
// unk_token, dropout, subword prefixes/suffixes, byte fallback or
// ignore_merges; no normalizer, truncation or padding; a ByteLevel
// pre-tokenizer (add_prefix_space false, use_regex true), optionally after
// Digits(individual_digits true) in a Sequence; a ByteLevel decoder; no
// post-processor or a ByteLevel one; special added tokens only (no lstrip,
// rstrip or single_word). Ids must run 0..N-1 over vocab and added_tokens
// together, all 256 byte tokens must be present, and every merge must join
// two vocab tokens into a third. The error names the offending field.
func Parse(data []byte) (*Tokenizer, error) {
	var f fileJSON
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("not a tokenizer.json: %w", err)
	}
	for _, c := range []struct {
		name string
		raw  json.RawMessage
	}{{"truncation", f.Truncation}, {"padding", f.Padding}, {"normalizer", f.Normalizer}} {
		if !isNull(c.raw) {
			return nil, fmt.Errorf("%s: unsupported, want null", c.name)
		}
	}
	digits, err := parsePreTokenizer(f.PreTokenizer)
	if err != nil {
		return nil, err
	}
	if c, err := parseComponent(f.Decoder); err != nil || c.Type != "ByteLevel" {
		return nil, fmt.Errorf("decoder: want ByteLevel")
	}
	if !isNull(f.PostProcessor) {
		if c, err := parseComponent(f.PostProcessor); err != nil || c.Type != "ByteLevel" {
			return nil, fmt.Errorf("post_processor: want null or ByteLevel")
		}
	}
	m := f.Model
	switch {
	case m == nil:
		return nil, errors.New("model: missing")
	case m.Type != "BPE":
		return nil, fmt.Errorf("model.type: %q, want \"BPE\"", m.Type)
	case m.Dropout != nil && *m.Dropout != 0:
		return nil, errors.New("model.dropout: unsupported, want null")
	case m.UnkToken != nil:
		return nil, errors.New("model.unk_token: unsupported, want null (byte-level BPE has no unknowns)")
	case m.ContinuingSubwordPrefix != nil && *m.ContinuingSubwordPrefix != "":
		return nil, errors.New("model.continuing_subword_prefix: unsupported, want null")
	case m.EndOfWordSuffix != nil && *m.EndOfWordSuffix != "":
		return nil, errors.New("model.end_of_word_suffix: unsupported, want null")
	case m.ByteFallback:
		return nil, errors.New("model.byte_fallback: unsupported, want false")
	case m.IgnoreMerges:
		return nil, errors.New("model.ignore_merges: unsupported, want false")
	}
	vocab, err := parseVocab(m.Vocab)
	if err != nil {
		return nil, err
	}

	// Gather id → (spelling, special) over vocab and added_tokens.
	byID := make(map[int]string, len(vocab)+len(f.AddedTokens))
	for s, id := range vocab {
		byID[id] = s
	}
	isSpecial := make(map[int]bool, len(f.AddedTokens))
	for i, a := range f.AddedTokens {
		field := fmt.Sprintf("added_tokens[%d]", i)
		switch {
		case a.ID == nil || *a.ID < 0:
			return nil, fmt.Errorf("%s.id: missing or negative", field)
		case a.Content == nil || *a.Content == "":
			return nil, fmt.Errorf("%s.content: missing or empty", field)
		case a.Special == nil || !*a.Special:
			return nil, fmt.Errorf("%s.special: want true (only special added tokens are supported)", field)
		case a.SingleWord || a.Lstrip || a.Rstrip:
			return nil, fmt.Errorf("%s: single_word, lstrip and rstrip must be false", field)
		}
		id, s := *a.ID, *a.Content
		if vid, ok := vocab[s]; ok && vid != id {
			return nil, fmt.Errorf("%s.id: %d, but model.vocab[%q] is %d", field, id, s, vid)
		}
		if other, ok := byID[id]; ok && other != s {
			return nil, fmt.Errorf("%s.id: %d is already %q", field, id, other)
		}
		if isSpecial[id] {
			return nil, fmt.Errorf("%s: %q repeats", field, s)
		}
		byID[id] = s
		isSpecial[id] = true
	}
	n := len(byID)
	if n > MaxVocabSize {
		return nil, fmt.Errorf("model.vocab: %d ids, more than %d", n, MaxVocabSize)
	}
	for id := range n {
		if _, ok := byID[id]; !ok {
			return nil, fmt.Errorf("model.vocab: id %d missing (ids must run 0..%d over vocab and added_tokens)", id, n-1)
		}
	}

	t := &Tokenizer{digits: digits, tokens: make([]string, n), special: make([]bool, n)}
	var haveByte [256]bool
	for id := range n {
		s := byID[id]
		if isSpecial[id] {
			t.tokens[id], t.special[id] = s, true
			continue
		}
		raw, ok := byteLevelBytes(s)
		if !ok || len(raw) == 0 {
			return nil, fmt.Errorf("model.vocab[%q]: not a byte-level token (nor a special one in added_tokens)", s)
		}
		if len(raw) == 1 {
			haveByte[raw[0]] = true
		}
		t.tokens[id] = string(raw)
	}
	for b, ok := range haveByte {
		if !ok {
			return nil, fmt.Errorf("model.vocab: byte 0x%02x (%q) missing", b, string(byteToRune[b]))
		}
	}

	seen := make(map[uint64]int, len(m.Merges))
	for i, raw := range m.Merges {
		field := fmt.Sprintf("model.merges[%d]", i)
		l, r, err := parseMerge(raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		var ids [3]int32
		for k, s := range []string{l, r, l + r} {
			id, ok := vocab[s]
			if !ok {
				return nil, fmt.Errorf("%s: %q not in model.vocab", field, s)
			}
			if isSpecial[id] {
				return nil, fmt.Errorf("%s: %q is a special token", field, s)
			}
			ids[k] = int32(id)
		}
		key := pairKey(ids[0], ids[1])
		if j, dup := seen[key]; dup {
			return nil, fmt.Errorf("%s: %q %q repeats model.merges[%d]", field, l, r, j)
		}
		seen[key] = i
		t.merges = append(t.merges, merge{ids[0], ids[1], ids[2]})
	}
	t.build()
	return t, nil
}

func isNull(raw json.RawMessage) bool {
	s := bytes.TrimSpace(raw)
	return len(s) == 0 || string(s) == "null"
}

func parseComponent(raw json.RawMessage) (component, error) {
	var c component
	if isNull(raw) {
		return c, errors.New("null")
	}
	err := json.Unmarshal(raw, &c)
	return c, err
}

// parsePreTokenizer returns whether digits are isolated first.
func parsePreTokenizer(raw json.RawMessage) (digits bool, err error) {
	const want = "pre_tokenizer: want ByteLevel (add_prefix_space false, use_regex true), " +
		"alone or after Digits (individual_digits true) in a Sequence"
	c, err := parseComponent(raw)
	if err != nil {
		return false, errors.New(want)
	}
	if c.Type == "Sequence" {
		if len(c.Pretokenizers) != 2 {
			return false, errors.New(want)
		}
		d, err := parseComponent(c.Pretokenizers[0])
		if err != nil || d.Type != "Digits" || d.IndividualDigits == nil || !*d.IndividualDigits {
			return false, errors.New(want)
		}
		if c, err = parseComponent(c.Pretokenizers[1]); err != nil {
			return false, errors.New(want)
		}
		digits = true
	}
	// HF's ByteLevel defaults add_prefix_space to true, so it must be given.
	if c.Type != "ByteLevel" || c.AddPrefixSpace == nil || *c.AddPrefixSpace || (c.UseRegex != nil && !*c.UseRegex) {
		return false, errors.New(want)
	}
	return digits, nil
}

// parseVocab reads model.vocab token by token, so that a repeated key (which
// encoding/json would silently overwrite) is an error.
func parseVocab(raw json.RawMessage) (map[string]int, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("model.vocab: want an object of token → id")
	}
	vocab := make(map[string]int)
	ids := make(map[int]string)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("model.vocab: %w", err)
		}
		s := tok.(string) // object keys are always strings
		tok, err = dec.Token()
		num, isNum := tok.(json.Number)
		if err != nil || !isNum {
			return nil, fmt.Errorf("model.vocab[%q]: want an integer id", s)
		}
		id64, err := num.Int64()
		if err != nil || id64 < 0 || id64 >= MaxVocabSize {
			return nil, fmt.Errorf("model.vocab[%q]: id %s not an integer in [0, %d)", s, num, MaxVocabSize)
		}
		id := int(id64)
		if _, dup := vocab[s]; dup {
			return nil, fmt.Errorf("model.vocab[%q]: token repeats", s)
		}
		if other, dup := ids[id]; dup {
			return nil, fmt.Errorf("model.vocab[%q]: id %d already belongs to %q", s, id, other)
		}
		vocab[s], ids[id] = id, s
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, fmt.Errorf("model.vocab: %w", err)
	}
	return vocab, nil
}

// parseMerge reads a merge written as "left right" (tokenizers < 0.20) or
// as ["left", "right"] (later versions).
func parseMerge(raw json.RawMessage) (l, r string, err error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		parts := strings.Split(s, " ")
		if len(parts) != 2 {
			return "", "", fmt.Errorf("%q: want two tokens separated by one space", s)
		}
		return parts[0], parts[1], nil
	}
	var pair []string
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		return "", "", errors.New("want \"left right\" or [\"left\", \"right\"]")
	}
	return pair[0], pair[1], nil
}
