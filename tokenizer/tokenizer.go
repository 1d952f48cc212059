// Package tokenizer holds calibrl's byte-level BPE tokenizer (Sennrich et
// al. 2016, "Neural Machine Translation of Rare Words with Subword Units",
// in the byte-level form of GPT-2) and the chat template that turns a
// conversation into token ids with a role per token.
//
// A Tokenizer is trained offline on the project's own text (Train), and is
// saved as a Hugging Face tokenizer.json (model type BPE, ByteLevel
// pre-tokenizer and decoder, special tokens in added_tokens) that Load reads
// back exactly. Any UTF-8 or non-UTF-8 string encodes and decodes back to
// itself byte for byte. Ordinary text never yields a special token, even when
// it contains a special token's spelling; only EncodeWithSpecials and the
// chat template emit them. (Hugging Face's encoder matches special spellings
// in any text, as EncodeWithSpecials does.) ConfigJSON gives the
// tokenizer_config.json, with the chat template in Jinja, that lets
// transformers load the same folder.
//
// A Tokenizer is immutable after construction and safe for concurrent use.
package tokenizer

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
)

// The special tokens of the chat template. Their names are fixed: models and
// checkpoints refer to them by spelling.
const (
	Pad       = "<|pad|>"       // padding; never trained on
	System    = "<|system|>"    // opens a system turn
	User      = "<|user|>"      // opens a user turn
	Assistant = "<|assistant|>" // opens an assistant turn
	End       = "<|end|>"       // ends a turn
	Done      = "<|done|>"      // ends the episode: the user leaves instead of ending a turn
)

// DefaultSpecials returns the chat template's special tokens in id order
// (Pad gets id 0).
func DefaultSpecials() []string {
	return []string{Pad, System, User, Assistant, End, Done}
}

// merge is one BPE rule: the adjacent tokens left, right become result.
type merge struct{ left, right, result int32 }

// Tokenizer is a trained byte-level BPE vocabulary with special tokens.
type Tokenizer struct {
	tokens    []string         // id → raw bytes of the token (a special's spelling)
	special   []bool           // id → is a special token
	specials  map[string]int32 // spelling → id
	byteID    [256]int32       // byte → id of its one-byte token
	merges    []merge          // in rank order: earlier rules apply first
	rank      map[uint64]int32 // pairKey(left, right) → index into merges
	digits    bool             // isolate numeric runes before the GPT-2 split
	cache     *pieceCache
	fpOnce    sync.Once
	fp        string
	canonical []byte // Bytes(), computed with fp
}

func pairKey(a, b int32) uint64 { return uint64(uint32(a))<<32 | uint64(uint32(b)) }

// VocabSize is the number of ids, special tokens included; ids are
// 0..VocabSize()-1.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// SpecialID returns the id of the special token spelled name.
func (t *Tokenizer) SpecialID(name string) (int, bool) {
	id, ok := t.specials[name]
	return int(id), ok
}

// Specials returns the special tokens' spellings in id order.
func (t *Tokenizer) Specials() []string {
	var out []string
	for id, sp := range t.special {
		if sp {
			out = append(out, t.tokens[id])
		}
	}
	return out
}

// IsSpecial reports whether id is a special token's id.
func (t *Tokenizer) IsSpecial(id int) bool {
	return id >= 0 && id < len(t.special) && t.special[id]
}

// Token returns the raw bytes a token id stands for (a special token's
// spelling), and false for an id outside the vocabulary.
func (t *Tokenizer) Token(id int) (string, bool) {
	if id < 0 || id >= len(t.tokens) {
		return "", false
	}
	return t.tokens[id], true
}

// NumMerges is the number of BPE merge rules.
func (t *Tokenizer) NumMerges() int { return len(t.merges) }

// SplitsDigits reports whether numbers are cut into single digits before BPE.
func (t *Tokenizer) SplitsDigits() bool { return t.digits }

// Fingerprint is the hex SHA-256 of the tokenizer's canonical tokenizer.json
// (Bytes): two tokenizers with the same fingerprint encode every string the
// same way. A checkpoint stores it to notice a tokenizer swap.
func (t *Tokenizer) Fingerprint() string {
	t.fpOnce.Do(func() {
		t.canonical = t.marshal()
		sum := sha256.Sum256(t.canonical)
		t.fp = hex.EncodeToString(sum[:])
	})
	return t.fp
}

// Equal reports whether t and u have the same vocabulary, merges, special
// tokens and pre-tokenization (the same Fingerprint).
func (t *Tokenizer) Equal(u *Tokenizer) bool {
	if t == nil || u == nil {
		return t == u
	}
	return t.Fingerprint() == u.Fingerprint()
}

// build fills the derived tables (byteID, specials, rank, cache) from
// tokens, special and merges. It assumes they are consistent (Train builds
// them so, Parse checks them first).
func (t *Tokenizer) build() {
	t.specials = make(map[string]int32)
	for i := range t.byteID {
		t.byteID[i] = -1
	}
	for id, s := range t.tokens {
		if t.special[id] {
			t.specials[s] = int32(id)
		} else if len(s) == 1 {
			t.byteID[s[0]] = int32(id)
		}
	}
	t.rank = make(map[uint64]int32, len(t.merges))
	for r, m := range t.merges {
		t.rank[pairKey(m.left, m.right)] = int32(r)
	}
	t.cache = newPieceCache()
}
