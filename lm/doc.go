// Package lm is calibrl's language-model engine: a GPT-style causal
// transformer with hand-written forward and backward passes, AdamW, batched
// KV-cache sampling and Hugging Face-style checkpoints, in the spirit of
// Karpathy's llm.c (train_gpt2.c).
//
// Shape legend, used by every comment in the package:
//
//	B  batch size (sequences)
//	T  time steps in the batch (≤ Context)
//	C  channels (Config.Dim)
//	V  vocabulary size
//	NH attention heads, HS = C/NH the head size
//	L  transformer layers
//
// Tensors are row-major float32; [B,T,C] means index (b*T+t)*C+c.
//
// The model is the GPT-2 decoder: token and learned position embeddings,
// L pre-norm blocks (LayerNorm → causal multi-head attention → residual,
// LayerNorm → GELU MLP with 4C hidden units → residual), a final LayerNorm
// and an output projection that by default reuses the token embedding
// (tied). There is no dropout. Linear weights are stored [in, out] as in
// Hugging Face's GPT-2 (Conv1D), and tensors carry its names.
//
// Each layer is a forward/backward pair side by side (layers.go,
// attention.go). Forward saves exactly what backward needs; backward ADDS
// into parameter gradients. All parameters live in one []float32 with named
// views (Params, Params.Layer); gradients and AdamW moments share that
// layout, so the optimizer is one flat loop.
//
// The central API is Model.Forward, which returns per-token log-probs of
// the given next tokens, logp[b,t] = log p(x[b,t+1] | x[b,≤t]), and
// Model.Backward, which takes any upstream gradient dlogp[b,t] and
// accumulates parameter gradients. Supervised fine-tuning is MaskedNLL
// (or SFTStep); policy-gradient losses are built on top by the trainer.
//
// The API, by use:
//
//	build        DefaultConfig, Config.Validate, New, Model.Clone
//	score/train  Model.Forward, Model.Backward, Model.ZeroGrad, MaskedNLL,
//	             Model.Logits
//	optimise     NewAdamW, AdamW.Update, ClipGradNorm, LRSchedule, SFTStep
//	generate     Model.Sample (SampleConfig, Completion)
//	persist      SaveCheckpoint, LoadCheckpoint, Config.Mismatch
//	measure      Bench, BenchGemm, BenchModels
//
// Correctness is pinned three ways: every layer's backward against central
// finite differences (grad_test.go), the whole model against an
// independent float64 PyTorch GPT-2 (golden_test.go, testdata/golden.py),
// and the KV-cache sampler against full recomputation (sample_test.go).
//
// The elementwise kernels (softmax exponentials, GELU, decode attention)
// have AVX2+FMA versions in vec_amd64.s beside pure-Go twins, selected at
// start-up with golang.org/x/sys/cpu; tests compare the two, and the
// build tag purego (go test -tags purego) runs everything on the twins.
//
// Work inside a step is spread over Model.Workers goroutines. Every split
// is over independent rows, heads or fixed chunks, so results are bitwise
// identical for any worker count.
package lm
