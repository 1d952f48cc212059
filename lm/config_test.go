package lm

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestConfig(t *testing.T) {
	untied := DefaultConfig()
	untied.Untied = true
	tests := []struct {
		name    string
		cfg     Config
		params  int    // hand-computed: V·C + ctx·C + L·(12C² + 13C) + 2C (+ V·C untied)
		wantErr string // "" for valid
	}{
		{"A", BenchModels()[0].Config, 891648, ""},
		{"B", BenchModels()[1].Config, 3356160, ""},
		{"A untied", untied, 891648 + 512*128, ""},
		{"tiny", tinyConfig(), 11*8 + 8*8 + 2*(12*64+13*8) + 16, ""},
		{"heads do not divide", Config{VocabSize: 10, Context: 4, Dim: 6, Layers: 1, Heads: 4}, 0, "not divisible"},
		{"zero value", Config{}, 0, "vocab_size 0, want ≥ 2"},
		{"absurd width", Config{VocabSize: 10, Context: 4, Dim: 65536, Layers: 1, Heads: 4}, 0, "n_embd 65536, want ≤ 16384"},
		{"absurd depth", Config{VocabSize: 10, Context: 4, Dim: 8, Layers: 100000000, Heads: 4}, 0, "n_layer 100000000, want ≤ 1024"},
		{"absurd vocabulary", Config{VocabSize: 2000000000, Context: 4, Dim: 8, Layers: 1, Heads: 4}, 0, "vocab_size 2000000000, want ≤ 1048576"},
		{"too many parameters", Config{VocabSize: 1 << 20, Context: 4, Dim: 1 << 14, Layers: 1, Heads: 4}, 0, "parameters, want ≤ 2147483648"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tc.wantErr)
				}
				if _, err := New(tc.cfg, rand.New(rand.NewPCG(1, 1))); err == nil {
					t.Error("New accepted an invalid config")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tc.cfg.NumParams(); got != tc.params {
				t.Errorf("NumParams = %d, want %d", got, tc.params)
			}
			var sum int
			for _, ti := range tc.cfg.tensors() {
				sum += ti.size()
			}
			if sum != tc.params {
				t.Errorf("tensor layout holds %d floats, want %d", sum, tc.params)
			}
		})
	}
}

func TestForwardRejectsBadInput(t *testing.T) {
	m, err := New(tinyConfig(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		tokens []int
		B, T   int
		lens   []int
		want   string
	}{
		{"token out of vocab", []int{1, 11}, 1, 2, nil, "outside vocab"},
		{"negative token", []int{-1, 1}, 1, 2, nil, "outside vocab"},
		{"longer than context", make([]int, 9), 1, 9, nil, "exceeds context"},
		{"wrong token count", make([]int, 5), 2, 3, nil, "5 tokens for a 2×3 batch"},
		{"length too long", make([]int, 4), 2, 2, []int{2, 3}, "length 3 of sequence 1"},
		{"wrong lens count", make([]int, 4), 2, 2, []int{2}, "1 lengths for 2 sequences"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := m.Forward(tc.tokens, tc.B, tc.T, tc.lens)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want error containing %q", err, tc.want)
			}
		})
	}
	if err := m.Backward(make([]float32, 2)); err != ErrNoForward {
		t.Errorf("Backward without Forward: got %v, want ErrNoForward", err)
	}
	if _, err := m.Forward([]int{1, 2, 3}, 1, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := m.Backward(make([]float32, 2)); err == nil {
		t.Error("Backward with 2 gradients for 3 positions: got no error")
	}
}

func TestClone(t *testing.T) {
	m, err := New(tinyConfig(), rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	c := m.Clone()
	if i := sameBits(m.Params.Data, c.Params.Data); i >= 0 {
		t.Fatalf("clone weight %d differs", i)
	}
	c.Params.Data[0]++
	if m.Params.Data[0] == c.Params.Data[0] {
		t.Error("clone shares its weights with the original")
	}
}
