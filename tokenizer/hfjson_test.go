package tokenizer

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// handTokenizer is the hand-checked tokenizer of TestTrainHandChecked:
// merges "a b" and "Ġ ab", ids 262 and 263.
func handTokenizer(t testing.TB, digits bool) *Tokenizer {
	t.Helper()
	cfg := DefaultTrainConfig()
	cfg.VocabSize = 300
	cfg.SplitDigits = digits
	tok, err := Train([]string{"ab ab ab cd\n", "x\n"}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestSaveLoad(t *testing.T) {
	for _, tok := range []*Tokenizer{mustDialog(t), handTokenizer(t, false)} {
		path := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := tok.Save(path); err != nil {
			t.Fatal(err)
		}
		got, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(tok) || !bytes.Equal(got.Bytes(), tok.Bytes()) {
			t.Fatal("Load(Save(t)) differs from t")
		}
		if got.SplitsDigits() != tok.SplitsDigits() || got.VocabSize() != tok.VocabSize() || got.NumMerges() != tok.NumMerges() {
			t.Fatal("Load(Save(t)) lost a setting")
		}
		for _, s := range dialogCorpus(21, 20) {
			if a, b := tok.Encode(s), got.Encode(s); !equalInts(a, b) {
				t.Fatalf("Encode differs after Load on %q: %v vs %v", s, a, b)
			}
		}
		// MarshalJSON/UnmarshalJSON go through the same format.
		data, err := json.Marshal(tok)
		if err != nil {
			t.Fatal(err)
		}
		var u Tokenizer
		if err := json.Unmarshal(data, &u); err != nil {
			t.Fatal(err)
		}
		if !u.Equal(tok) {
			t.Fatal("json round trip differs")
		}
	}
}

// The file must be the layout Hugging Face tokenizers writes for a
// byte-level BPE (checked by hand against GPT-2's tokenizer.json).
func TestFileLayout(t *testing.T) {
	tok := handTokenizer(t, true)
	var f map[string]any
	if err := json.Unmarshal(tok.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	model := f["model"].(map[string]any)
	vocab := model["vocab"].(map[string]any)
	checks := []struct {
		name string
		got  any
		want any
	}{
		{"model.type", model["type"], "BPE"},
		{"model.merges", model["merges"], []any{"a b", "Ġ ab"}},
		{"vocab[Ġab]", vocab["Ġab"], 263.0},
		{"vocab[ab]", vocab["ab"], 262.0},
		{"vocab[Ġ]", vocab["Ġ"], float64(6 + ' ')},
		{"vocab[Ċ]", vocab["Ċ"], float64(6 + '\n')},
		{"vocab[<|pad|>]", vocab["<|pad|>"], 0.0},
		{"len(vocab)", len(vocab), 264},
		{"added_tokens[4]", f["added_tokens"].([]any)[4], map[string]any{
			"id": 4.0, "content": "<|end|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true}},
		{"pre_tokenizer", f["pre_tokenizer"], map[string]any{"type": "Sequence", "pretokenizers": []any{
			map[string]any{"type": "Digits", "individual_digits": true},
			map[string]any{"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}}}},
		{"decoder.type", f["decoder"].(map[string]any)["type"], "ByteLevel"},
		{"normalizer", f["normalizer"], nil},
	}
	for _, c := range checks {
		if !jsonEqual(c.got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	// Without SplitDigits the pre-tokenizer is ByteLevel alone.
	if !bytes.Contains(handTokenizer(t, false).Bytes(), []byte(`"pre_tokenizer": {"type": "ByteLevel"`)) {
		t.Error("SplitDigits false: pre_tokenizer is not a plain ByteLevel")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// Parse accepts the newer merge spelling, [left, right], too.
func TestParseMergePairs(t *testing.T) {
	tok := handTokenizer(t, false)
	data := strings.Replace(string(tok.Bytes()), `"a b"`, `["a", "b"]`, 1)
	got, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(tok) {
		t.Error("pair-form merges parse differently")
	}
}

func TestParseRejects(t *testing.T) {
	base := string(handTokenizer(t, false).Bytes())
	tests := []struct {
		name     string
		old, new string // replace old by new in the canonical file (once)
		want     string // the error must name this field
	}{
		{"not json", base, "{", "not a tokenizer.json"},
		{"model type", `"type": "BPE"`, `"type": "WordPiece"`, "model.type"},
		{"missing model", `"model": {`, `"model_": {`, "model: missing"},
		{"unk token", `"unk_token": null`, `"unk_token": "<unk>"`, "model.unk_token"},
		{"ignore merges", `"ignore_merges": false`, `"ignore_merges": true`, "model.ignore_merges"},
		{"normalizer", `"normalizer": null`, `"normalizer": {"type": "NFC"}`, "normalizer"},
		{"padding", `"padding": null`, `"padding": {}`, "padding"},
		{"prefix space", `"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false`,
			`"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": true`, "pre_tokenizer"},
		{"pre_tokenizer null", `"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}`,
			`"pre_tokenizer": null`, "pre_tokenizer"},
		{"decoder", `"decoder": {"type": "ByteLevel"`, `"decoder": {"type": "BPEDecoder"`, "decoder"},
		{"post processor", `"post_processor": null`, `"post_processor": {"type": "TemplateProcessing"}`, "post_processor"},
		{"missing byte", `"Ā": 6,`, ``, "model.vocab: id 6 missing"},
		{"byte renamed", `"Ā": 6,`, `"x y": 6,`, `model.vocab["x y"]: not a byte-level token`},
		{"byte replaced", `"Ā": 6,`, `"Q1": 6,`, `model.vocab: byte 0x00`},
		{"repeated token", `"Ā": 6,`, `"Ā": 6, "Ā": 7,`, `model.vocab["Ā"]: token repeats`},
		{"repeated id", `"ā": 7,`, `"ā": 6,`, `model.vocab["ā"]: id 6 already`},
		{"bad id", `"ā": 7,`, `"ā": "seven",`, `model.vocab["ā"]: want an integer`},
		{"negative id", `"ā": 7,`, `"ā": -7,`, `model.vocab["ā"]: id -7`},
		{"merge unknown", `"a b"`, `"a q9"`, `model.merges[0]: "q9" not in model.vocab`},
		{"merge result unknown", `"Ġ ab"`, `"Ġ a"`, `model.merges[1]: "Ġa" not in model.vocab`},
		{"merge three parts", `"a b"`, `"a b c"`, "model.merges[0]"},
		{"merge repeats", `"Ġ ab"`, `"a b"`, "model.merges[1]"},
		{"merge makes special", `"a b"`, `"<|pad b"`, "model.merges[0]"},
		{"added id mismatch", `{"id": 4, "content": "<|end|>"`, `{"id": 5, "content": "<|end|>"`, "added_tokens[4].id"},
		{"added not special", `"content": "<|pad|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": true`,
			`"content": "<|pad|>", "single_word": false, "lstrip": false, "rstrip": false, "normalized": false, "special": false`, "added_tokens[0].special"},
		{"added lstrip", `"content": "<|pad|>", "single_word": false, "lstrip": false`, `"content": "<|pad|>", "single_word": false, "lstrip": true`, "added_tokens[0]"},
		{"added empty", `"content": "<|pad|>"`, `"content": ""`, "added_tokens[0].content"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(base, tc.old, tc.new, 1)
			if data == base {
				t.Fatalf("mutation %q not found in the file", tc.old)
			}
			_, err := Parse([]byte(data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestLoadErrorNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokenizer.json")
	bad := strings.Replace(string(handTokenizer(t, false).Bytes()), `"type": "BPE"`, `"type": "Unigram"`, 1)
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "model.type") {
		t.Errorf("got %v, want an error naming %s and model.type", err, path)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("Load of a missing file: got nil error")
	}
}

// A file whose special tokens sit after the model's vocab (as in files
// where added tokens were appended) loads too.
func TestParseAddedAfterVocab(t *testing.T) {
	base := string(handTokenizer(t, false).Bytes())
	// Move <|pad|> (id 0) out of vocab and give it id 264, the next free id;
	// id 0 then goes to the last learned token.
	data := strings.Replace(base, `"<|pad|>": 0,`, ``, 1)
	data = strings.Replace(data, `"Ġab": 263`, `"Ġab": 0`, 1)
	data = strings.Replace(data, `{"id": 0, "content": "<|pad|>"`, `{"id": 263, "content": "<|pad|>"`, 1)
	tok, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := tok.SpecialID(Pad); !ok || id != 263 {
		t.Errorf("SpecialID(Pad): got %d %v, want 263 true", id, ok)
	}
	if got := tok.Encode(" ab"); !equalInts(got, []int{0}) {
		t.Errorf("Encode(\" ab\"): got %v, want [0]", got)
	}
}
