package lm

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/calibrl/calibrl/tokenizer"
)

func chatTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := tokenizer.Load("../tokenizer/testdata/golden_tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	if !tok.IsChat() {
		t.Fatal("golden tokenizer lacks the chat specials")
	}
	return tok
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	return v
}

func ints(t *testing.T, what string, v any) []int {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: %v is not a list", what, v)
	}
	out := make([]int, len(list))
	for i, x := range list {
		f, ok := x.(float64)
		if !ok || f != float64(int(f)) {
			t.Fatalf("%s: %v is not a list of ids", what, v)
		}
		out[i] = int(f)
	}
	return out
}

// TestHFFolder: a checkpoint with a chat tokenizer is a complete Hugging
// Face folder: the tokenizer, special-token and generation configs exist,
// are listed in checkpoint.json, and name the tokenizer's own ids.
func TestHFFolder(t *testing.T) {
	tok := chatTokenizer(t)
	cfg := Config{VocabSize: tok.VocabSize(), Context: 16, Dim: 8, Layers: 1, Heads: 2}
	m, err := New(cfg, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	id := func(s string) int {
		i, ok := tok.SpecialID(s)
		if !ok {
			t.Fatalf("no %s", s)
		}
		return i
	}
	eos := []int{id(tokenizer.End), id(tokenizer.Done)}
	for _, save := range []func(string, Checkpoint) error{SaveCheckpoint, ReplaceCheckpoint} {
		dir := filepath.Join(t.TempDir(), "ck")
		if err := save(dir, Checkpoint{Model: m, Tokenizer: tok.Bytes()}); err != nil {
			t.Fatal(err)
		}
		man := readJSON(t, filepath.Join(dir, ManifestFile))["files"].(map[string]any)
		for _, name := range []string{TokenizerConfigFile, SpecialTokensMapFile, GenerationConfigFile, TokenizerFile, ConfigFile} {
			if _, ok := man[name]; !ok {
				t.Errorf("%s does not list %s", ManifestFile, name)
			}
		}
		c := readJSON(t, filepath.Join(dir, ConfigFile))
		if v, ok := c["bos_token_id"]; !ok || v != nil {
			t.Errorf("config bos_token_id: got %v (present %v), want null", v, ok)
		}
		if got := ints(t, "config eos_token_id", c["eos_token_id"]); !slices.Equal(got, eos) {
			t.Errorf("config eos_token_id: got %v, want %v", got, eos)
		}
		if c["pad_token_id"] != float64(id(tokenizer.Pad)) {
			t.Errorf("config pad_token_id: got %v, want %d", c["pad_token_id"], id(tokenizer.Pad))
		}
		g := readJSON(t, filepath.Join(dir, GenerationConfigFile))
		if got := ints(t, "generation eos_token_id", g["eos_token_id"]); !slices.Equal(got, eos) {
			t.Errorf("generation eos_token_id: got %v, want %v", got, eos)
		}
		if g["pad_token_id"] != float64(id(tokenizer.Pad)) || g["max_length"] != float64(cfg.Context) || g["top_k"] != 0.0 {
			t.Errorf("generation config: %v", g)
		}
		tc := readJSON(t, filepath.Join(dir, TokenizerConfigFile))
		if tc["chat_template"] != tokenizer.ChatTemplate {
			t.Errorf("tokenizer_config chat_template: got %v", tc["chat_template"])
		}
		sm := readJSON(t, filepath.Join(dir, SpecialTokensMapFile))
		for _, v := range []map[string]any{tc, sm} {
			if v["eos_token"] != tokenizer.End || v["pad_token"] != tokenizer.Pad {
				t.Errorf("eos/pad tokens: got %v/%v", v["eos_token"], v["pad_token"])
			}
		}
		ck, err := LoadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ck.Files) != 0 {
			t.Errorf("derived files came back as Files: %v", sortedKeys(ck.Files))
		}
		// They belong to the save like every other file.
		path := filepath.Join(dir, GenerationConfigFile)
		data, _ := os.ReadFile(path)
		if err := os.WriteFile(path, bytes.Replace(data, []byte(`"do_sample": true`), []byte(`"do_sample": false`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCheckpoint(dir); err == nil || !strings.Contains(err.Error(), GenerationConfigFile) {
			t.Errorf("edited %s: got %v, want a manifest mismatch naming it", GenerationConfigFile, err)
		}
		os.Remove(path)
		if _, err := LoadCheckpoint(dir); err == nil {
			t.Errorf("missing %s: loaded", GenerationConfigFile)
		}
		// A save without a chat tokenizer drops them.
		if err := save(dir, Checkpoint{Model: m, Tokenizer: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		for _, name := range hfFiles {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				t.Errorf("%s left by a save without a chat tokenizer", name)
			}
		}
		if _, ok := readJSON(t, filepath.Join(dir, ConfigFile))["eos_token_id"]; ok {
			t.Error("config.json names token ids without a chat tokenizer")
		}
		if _, err := LoadCheckpoint(dir); err != nil {
			t.Fatal(err)
		}
	}
	// The derived files' names are the checkpoint's own.
	err = SaveCheckpoint(t.TempDir(), Checkpoint{Model: m, Files: map[string][]byte{TokenizerConfigFile: []byte("{}")}})
	if err == nil {
		t.Errorf("Files named %s: saved", TokenizerConfigFile)
	}
	// A tokenizer with more ids than the model's vocabulary is refused.
	small := cfg
	small.VocabSize = tok.VocabSize() - 1
	sm, _ := New(small, rand.New(rand.NewPCG(1, 2)))
	if err := SaveCheckpoint(t.TempDir(), Checkpoint{Model: sm, Tokenizer: tok.Bytes()}); err == nil {
		t.Error("tokenizer larger than vocab_size: saved")
	}
}

// refCases are the conversations the Hugging Face reference script scores.
var refCases = []struct {
	Messages []tokenizer.Message `json:"messages"`
	Next     string              `json:"next,omitempty"` // add_generation_prompt for this role
}{
	{Messages: []tokenizer.Message{
		{Role: "system", Content: "Answer sums."}, {Role: "user", Content: "what is 3 plus 4?"},
		{Role: "assistant", Content: "3 + 4 = 7."}, {Role: "user", Content: "right, thanks!", Done: true}}},
	{Messages: []tokenizer.Message{
		{Role: "system", Content: "You are the user."}, {Role: "user", Content: "Maya buys 12 apples at $3.50 each."}}, Next: "assistant"},
	{Messages: []tokenizer.Message{
		{Role: "system", Content: "Be brief."}, {Role: "user", Content: "héllo  wörld\n\n 你好 🙂"},
		{Role: "assistant", Content: "How many are left?"}}, Next: "user"},
}

// TestWriteHFReference writes what lm/testdata/hf_reference.py compares
// against, when CALIBRL_HF_REF names an output folder: OUT/model, a
// checkpoint folder (the one in CALIBRL_HF_REF_FROM, re-saved, or a small
// model trained here), and OUT/logprobs.json with, per conversation, the
// ids RenderChat/RenderPrompt give, the per-token log-probs Forward gives
// and a greedy turn Sample writes.
func TestWriteHFReference(t *testing.T) {
	out := os.Getenv("CALIBRL_HF_REF")
	if out == "" {
		t.Skip("set CALIBRL_HF_REF=DIR to write the Hugging Face reference data")
	}
	var m *Model
	var tok *tokenizer.Tokenizer
	if from := os.Getenv("CALIBRL_HF_REF_FROM"); from != "" {
		ck, err := LoadCheckpoint(from)
		if err != nil {
			t.Fatal(err)
		}
		if tok, err = tokenizer.Parse(ck.Tokenizer); err != nil {
			t.Fatal(err)
		}
		m = ck.Model
	} else {
		tok = chatTokenizer(t)
		m = trainedChat(t, tok)
	}
	if err := SaveCheckpoint(filepath.Join(out, "model"), Checkpoint{Model: m, Tokenizer: tok.Bytes()}); err != nil {
		t.Fatal(err)
	}
	type result struct {
		Messages []tokenizer.Message `json:"messages"`
		Next     string              `json:"next,omitempty"`
		IDs      []int               `json:"ids"`
		LogProbs []float32           `json:"logprobs"` // logprobs[i] = log p(ids[i+1] | ids[≤i])
		Greedy   []int               `json:"greedy,omitempty"`
	}
	var res []result
	for _, c := range refCases {
		var ids []int
		var err error
		if c.Next == "" {
			ids, _, err = tok.RenderChat(c.Messages)
		} else {
			ids, _, err = tok.RenderPrompt(c.Messages, c.Next)
		}
		if err != nil {
			t.Fatal(err)
		}
		logp, err := m.Forward(ids, 1, len(ids), nil)
		if err != nil {
			t.Fatal(err)
		}
		r := result{Messages: c.Messages, Next: c.Next, IDs: ids, LogProbs: logp[:len(ids)-1]}
		if c.Next != "" {
			comp, err := m.Sample([][]int{ids}, SampleConfig{Temperature: 0, TopP: 1, MaxNewTokens: 24, Stop: tok.StopIDs()}, []*rand.Rand{nil})
			if err != nil {
				t.Fatal(err)
			}
			r.Greedy = comp[0].Tokens
		}
		res = append(res, r)
	}
	data, err := json.MarshalIndent(res, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "logprobs.json"), append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s/model and %s/logprobs.json", out, out)
}

// trainedChat fits a small model to a few rendered chats, so that its
// log-probs are far from uniform.
func trainedChat(t *testing.T, tok *tokenizer.Tokenizer) *Model {
	cfg := Config{VocabSize: tok.VocabSize(), Context: 64, Dim: 32, Layers: 2, Heads: 4}
	rng := rand.New(rand.NewPCG(3, 4))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		t.Fatal(err)
	}
	const B = 8
	tokens := make([]int, B*cfg.Context)
	lens := make([]int, B)
	for step := 0; step < 150; step++ {
		clear(tokens)
		for b := range B {
			x, y := rng.IntN(10), rng.IntN(10)
			ids, _, err := tok.RenderChat([]tokenizer.Message{
				{Role: "system", Content: "Answer sums."},
				{Role: "user", Content: "what is " + strconv.Itoa(x) + " plus " + strconv.Itoa(y) + "?"},
				{Role: "assistant", Content: strconv.Itoa(x) + " + " + strconv.Itoa(y) + " = " + strconv.Itoa(x+y) + "."},
				{Role: "user", Content: "right, thanks!", Done: true},
			})
			if err != nil {
				t.Fatal(err)
			}
			lens[b] = copy(tokens[b*cfg.Context:(b+1)*cfg.Context], ids)
		}
		if _, err := SFTStep(m, opt, TrainConfig{LR: 3e-3, ClipNorm: 1}, tokens, B, cfg.Context, lens, nil); err != nil {
			t.Fatal(err)
		}
	}
	return m
}
