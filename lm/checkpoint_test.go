package lm

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func trainedTiny(t *testing.T, untied bool) (*Model, *AdamW) {
	t.Helper()
	cfg := tinyConfig()
	cfg.Untied = untied
	rng := rand.New(rand.NewPCG(51, 52))
	m, err := New(cfg, rng)
	if err != nil {
		t.Fatal(err)
	}
	opt, err := NewAdamW(cfg, DefaultAdamW())
	if err != nil {
		t.Fatal(err)
	}
	tokens := make([]int, 2*8)
	for i := range tokens {
		tokens[i] = rng.IntN(cfg.VocabSize)
	}
	for i := 0; i < 3; i++ {
		if _, err := SFTStep(m, opt, TrainConfig{LR: 1e-2, ClipNorm: 1}, tokens, 2, 8, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	return m, opt
}

func sameBits(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}

func TestCheckpointRoundTrip(t *testing.T) {
	for _, untied := range []bool{false, true} {
		m, opt := trainedTiny(t, untied)
		dir := filepath.Join(t.TempDir(), "ck")
		tok := []byte(`{"version":"1.0"}`)
		if err := SaveCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt, Tokenizer: tok}); err != nil {
			t.Fatal(err)
		}
		ck, err := LoadCheckpoint(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := ck.Model.Config.Mismatch(m.Config); err != nil {
			t.Errorf("config: %v", err)
		}
		if i := sameBits(m.Params.Data, ck.Model.Params.Data); i >= 0 {
			t.Errorf("weight %d: saved %v, loaded %v", i, m.Params.Data[i], ck.Model.Params.Data[i])
		}
		if ck.Optimizer == nil {
			t.Fatal("optimizer state not loaded")
		}
		if i := sameBits(opt.M.Data, ck.Optimizer.M.Data); i >= 0 {
			t.Errorf("exp_avg %d differs", i)
		}
		if i := sameBits(opt.V.Data, ck.Optimizer.V.Data); i >= 0 {
			t.Errorf("exp_avg_sq %d differs", i)
		}
		if ck.Optimizer.Step != opt.Step || ck.Optimizer.Config != opt.Config {
			t.Errorf("optimizer: got step %d %+v, want %d %+v", ck.Optimizer.Step, ck.Optimizer.Config, opt.Step, opt.Config)
		}
		if !bytes.Equal(ck.Tokenizer, tok) {
			t.Errorf("tokenizer: got %q, want %q", ck.Tokenizer, tok)
		}
		// Resuming continues exactly as the uninterrupted run.
		tokens := []int{1, 2, 3, 4, 5, 6, 7, 8}
		for _, run := range []struct {
			m *Model
			o *AdamW
		}{{m, opt}, {ck.Model, ck.Optimizer}} {
			if _, err := SFTStep(run.m, run.o, TrainConfig{LR: 1e-2, ClipNorm: 1}, tokens, 1, 8, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		if i := sameBits(m.Params.Data, ck.Model.Params.Data); i >= 0 {
			t.Errorf("after one resumed step weight %d differs", i)
		}
	}
}

func TestCheckpointWithoutOptimizer(t *testing.T) {
	m, _ := trainedTiny(t, false)
	dir := t.TempDir()
	if err := SaveCheckpoint(dir, Checkpoint{Model: m}); err != nil {
		t.Fatal(err)
	}
	ck, err := LoadCheckpoint(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ck.Optimizer != nil || ck.Tokenizer != nil {
		t.Errorf("got optimizer %v tokenizer %q, want neither", ck.Optimizer != nil, ck.Tokenizer)
	}
}

func TestCheckpointMismatch(t *testing.T) {
	m, opt := trainedTiny(t, false)
	other := tinyConfig()
	other.Dim, other.Heads = 16, 4
	m2, err := New(other, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		corrupt func(t *testing.T, dir string)
		want    string
	}{
		{"config disagrees with weights", func(t *testing.T, dir string) {
			// Weights of a 16-wide model under an 8-wide config.
			src := t.TempDir()
			if err := SaveCheckpoint(src, Checkpoint{Model: m2}); err != nil {
				t.Fatal(err)
			}
			copyFile(t, filepath.Join(src, WeightsFile), filepath.Join(dir, WeightsFile))
		}, "tensor wte.weight has shape [11 16], config wants [11 8]"},
		{"layer count", func(t *testing.T, dir string) {
			editConfig(t, dir, `"n_layer": 2`, `"n_layer": 3`)
		}, "tensor h.2.ln_1.weight missing"},
		{"untied config, tied weights", func(t *testing.T, dir string) {
			editConfig(t, dir, `"tie_word_embeddings": true`, `"tie_word_embeddings": false`)
		}, "tensor lm_head.weight missing"},
		{"unsupported activation", func(t *testing.T, dir string) {
			editConfig(t, dir, `"gelu_new"`, `"relu"`)
		}, `activation_function "relu"`},
		{"heads do not divide dim", func(t *testing.T, dir string) {
			editConfig(t, dir, `"n_head": 2`, `"n_head": 3`)
		}, "dim 8 not divisible by heads 3"},
		{"truncated weights", func(t *testing.T, dir string) {
			p := filepath.Join(dir, WeightsFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)-4], 0o644)
		}, "model.safetensors: safetensors: tensor"},
		{"optimizer step", func(t *testing.T, dir string) {
			p := filepath.Join(dir, OptimizerFile)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte(`"step":"3"`), []byte(`"step":"x"`), 1), 0o644)
		}, `metadata step "x"`},
		{"missing config", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, ConfigFile))
		}, "config.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := SaveCheckpoint(dir, Checkpoint{Model: m, Optimizer: opt}); err != nil {
				t.Fatal(err)
			}
			tc.corrupt(t, dir)
			_, err := LoadCheckpoint(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestConfigMismatch(t *testing.T) {
	a, b := DefaultConfig(), DefaultConfig()
	if err := a.Mismatch(b); err != nil {
		t.Errorf("equal configs: got %v", err)
	}
	b.Dim, b.Untied = 256, true
	err := a.Mismatch(b)
	if err == nil || !strings.Contains(err.Error(), "n_embd is 128, want 256") || !strings.Contains(err.Error(), "tie_word_embeddings is true, want false") {
		t.Errorf("got %v", err)
	}
}

func editConfig(t *testing.T, dir, old, new string) {
	t.Helper()
	p := filepath.Join(dir, ConfigFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("config.json has no %s:\n%s", old, b)
	}
	if err := os.WriteFile(p, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func FuzzParseSafetensors(f *testing.F) {
	var buf bytes.Buffer
	writeSafetensors(&buf, []namedTensor{{"a", []int{2}, []float32{1, 2}}, {"b", []int{1, 1}, []float32{3}}}, map[string]string{"k": "v"})
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Add([]byte("\x02\x00\x00\x00\x00\x00\x00\x00{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tensors, _, err := parseSafetensors(data)
		if err != nil {
			return
		}
		// Whatever parses must write back and parse to the same tensors.
		var out bytes.Buffer
		if err := writeSafetensors(&out, tensors, nil); err != nil {
			t.Fatal(err)
		}
		again, _, err := parseSafetensors(out.Bytes())
		if err != nil || len(again) != len(tensors) {
			t.Fatalf("re-parse: %v (%d tensors, want %d)", err, len(again), len(tensors))
		}
	})
}

func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"model_type":"gpt2","vocab_size":11,"n_positions":8,"n_embd":8,"n_layer":2,"n_head":2}`))
	f.Add([]byte(`{"n_embd":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseConfig(data)
		if err == nil && c.Validate() != nil {
			t.Fatalf("parseConfig accepted invalid %+v", c)
		}
	})
}
