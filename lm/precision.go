package lm

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/calibrl/calibrl/gemm"
)

// Precision is the arithmetic of the model's weight matrix products.
//
// FP32 is the engine's own. BF16 is mixed precision: the products with a
// weight matrix (the blocks' four linear layers and the LM head) round
// the weights and the activations to bfloat16 and accumulate in fp32
// (gemm.Bgemm), on CPUs with AMX-BF16 several times the fp32 rate. That
// covers sampling, Forward (log-probs, the loss), and Backward's input
// gradients dx = dy·Wᵀ and weight gradients dW += xᵀ·dy (gemm.BgemmTA,
// the sum over tokens accumulated in fp32 onto the fp32 gradient, as
// autocast training runs it). Everything else stays fp32: the weights
// themselves (master copies; packed to bf16 once per Sample, Forward and
// Backward call, as the optimizer may have changed them), the gradients
// as stored, the optimizer state and step, layer norms, attention,
// softmax, the loss. The sampler's KV cache is the one
// exception among activations: it is stored in bf16 (half the bytes,
// which decoding reads at every step) and widened exactly to fp32 as
// attention reads it (attendRowBF16), so a cached key or value is the one
// the bf16 qkv product gave, rounded once more. bf16 has 8 significant
// bits: logits move by about 2⁻⁸ of the magnitude of their terms.
type Precision int32

const (
	FP32 Precision = iota
	BF16
)

func (p Precision) String() string {
	switch p {
	case FP32:
		return "fp32"
	case BF16:
		return "bf16"
	}
	return fmt.Sprintf("Precision(%d)", int32(p))
}

// ParsePrecision reads "fp32" or "bf16".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "fp32":
		return FP32, nil
	case "bf16":
		return BF16, nil
	}
	return FP32, fmt.Errorf("precision %q: want fp32 or bf16", s)
}

// precisionSetting is Forward's and Backward's precision (the loss, the
// log-probs a trainer or a scorer reads, the gradients);
// samplePrecisionSetting is Sample's. SetPrecision sets both;
// SetSamplePrecision sets Sample's apart, as a run that trains in fp32
// and samples in bf16 does: sampling a policy in bf16 moves its success
// by at most 0.005 (results/README.md, "bf16 against fp32"), while
// training in bf16 buys this engine little (1.08× on an AVX512_BF16 CPU
// without AMX, results/mathchat-quick-rounding/).
var precisionSetting, samplePrecisionSetting atomic.Int32

// SetPrecision sets the precision of every model's Forward, Backward and
// Sample, and returns the previous setting of Forward's. BF16 on a CPU
// without bf16 instructions (AMX-BF16 or AVX512_BF16) runs in fp32 and
// says so once in the log: the Go twin would give the same numbers far
// more slowly.
func SetPrecision(p Precision) Precision {
	warnIfNoBF16(p)
	samplePrecisionSetting.Store(int32(p))
	return Precision(precisionSetting.Swap(int32(p)))
}

// SetSamplePrecision sets Sample's precision alone and returns its
// previous setting. The sampler's log-probs, which the RL trainers take as
// the old log-probs of their first update, are then the sample
// precision's: with bf16 sampling and fp32 training the clipped ratio
// starts within about 2⁻⁸ of the logits' terms of 1 rather than at 1, the
// sampler's policy being the one the conversations came from.
func SetSamplePrecision(p Precision) Precision {
	warnIfNoBF16(p)
	return Precision(samplePrecisionSetting.Swap(int32(p)))
}

func warnIfNoBF16(p Precision) {
	if p == BF16 && !gemm.HasBF16() {
		warnNoBF16.Do(func() {
			slog.Warn("bf16 requested but this CPU has no AMX-BF16 or AVX512_BF16: running in fp32")
		})
	}
}

var warnNoBF16 sync.Once

// ActivePrecision is the precision Forward and Backward run at now: the
// setting, or FP32 where the CPU lacks bf16 instructions.
func ActivePrecision() Precision { return active(precisionSetting.Load()) }

// ActiveSamplePrecision is the precision Sample runs at now.
func ActiveSamplePrecision() Precision { return active(samplePrecisionSetting.Load()) }

func active(setting int32) Precision {
	if p := Precision(setting); p == BF16 && gemm.HasBF16() {
		return BF16
	}
	return FP32
}

// forwardPacks are a model's weights packed as the forward products read
// them (op(B) = W): P is gemm.PackedB (bf16) or gemm.PackedS (fp32).
type forwardPacks[P any] struct {
	qkv, attProj, fc, fcProj []P // per layer
	lmHead                   P
}

// packForward packs m's current weights into fp, reusing its memory. It
// runs once per Sample call: the weights may have changed since the last
// one (an optimizer step), and packing them (under 2 ms at the quick
// preset's size) costs a small fraction of a call's decoding.
func packForward[P any, PP interface {
	*P
	Pack(transB bool, k, n int, b []float32, ldb int)
}](fp *forwardPacks[P], m *Model) {
	cfg, p := m.Config, m.Params
	C, H, L := cfg.Dim, cfg.Hidden(), cfg.Layers
	if len(fp.qkv) != L {
		fp.qkv, fp.attProj = make([]P, L), make([]P, L)
		fp.fc, fp.fcProj = make([]P, L), make([]P, L)
	}
	parallelFor(m.workers(), L, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			lp := p.Layer(l)
			PP(&fp.qkv[l]).Pack(false, C, 3*C, lp.QKVW, 3*C)
			PP(&fp.attProj[l]).Pack(false, C, C, lp.AttProjW, C)
			PP(&fp.fc[l]).Pack(false, C, H, lp.FCW, H)
			PP(&fp.fcProj[l]).Pack(false, H, C, lp.FCProjW, C)
		}
	})
	PP(&fp.lmHead).Pack(true, C, cfg.VocabSize, p.LMHead, C)
}

// packedWeights are a model's weights in bf16, packed for gemm.Bgemm:
// as the forward products read them (op(B) = W), and, for Backward's
// input gradients, transposed (op(B) = Wᵀ).
type packedWeights struct {
	forwardPacks[gemm.PackedB]
	qkvT, attProjT, fcT, fcProjT []gemm.PackedB
	lmHeadT                      gemm.PackedB
	// dy is Backward's scratch: the upstream gradient of the product
	// whose weight gradient is being taken, packed as BgemmTA's B.
	dy gemm.PackedB
}

// pack rounds m's current weights into pw's forward packs.
func (pw *packedWeights) pack(m *Model) { packForward(&pw.forwardPacks, m) }

// packT rounds m's weights transposed, for Backward's dx = dy·Wᵀ.
func (pw *packedWeights) packT(m *Model) {
	cfg, p := m.Config, m.Params
	C, H, L := cfg.Dim, cfg.Hidden(), cfg.Layers
	if len(pw.qkvT) != L {
		pw.qkvT, pw.attProjT = make([]gemm.PackedB, L), make([]gemm.PackedB, L)
		pw.fcT, pw.fcProjT = make([]gemm.PackedB, L), make([]gemm.PackedB, L)
	}
	parallelFor(m.workers(), L, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			lp := p.Layer(l)
			pw.qkvT[l].Pack(true, 3*C, C, lp.QKVW, 3*C)
			pw.attProjT[l].Pack(true, C, C, lp.AttProjW, C)
			pw.fcT[l].Pack(true, H, C, lp.FCW, H)
			pw.fcProjT[l].Pack(true, C, H, lp.FCProjW, C)
		}
	})
	pw.lmHeadT.Pack(false, cfg.VocabSize, C, p.LMHead, C)
}

// packedF32 is the sampler's fp32 weights packed once per Sample call
// for Sgemm's kernel (gemm.PackedS). A decoding step multiplies a few
// dozen rows by every weight matrix, and Sgemm copied each matrix into
// its panels at every step: 8% of an fp32 rollout's decoding CPU. The
// products' bits are the same.
type packedF32 = forwardPacks[gemm.PackedS]

// unpacked stands for no packed weights (fp32): layerMM never reads it.
var unpacked packedWeights

// layerMM runs the forward product of layer l's weight w (packed as
// pw[l] when bf16) over N rows: out = x·w + b (+ resid).
func layerMM(W int, bf16 bool, out, x, w []float32, pw []gemm.PackedB, l int, b, resid []float32, N, IC, OC int) {
	if bf16 {
		matmulForwardBF16(W, out, x, &pw[l], b, resid, N, IC, OC)
		return
	}
	matmulForward(W, out, x, w, b, resid, N, IC, OC)
}
