package lm

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/calibrl/calibrl/gemm"
)

// Precision is the arithmetic of the sampler's matrix products.
//
// FP32 is the engine's own. BF16 rounds the weights (once per Sample
// call) and the activations of every decoder matmul and the LM head to
// bfloat16 and accumulates in fp32 (gemm.Bgemm): on CPUs with AMX-BF16 it
// runs several times the fp32 rate. Everything else stays fp32: layer
// norms, attention over the KV cache, softmax, the sampling itself, and
// all of training (Forward, Backward, the optimizer). Log-probabilities
// the sampler records are the bf16 model's, so an importance ratio
// against a fp32 Forward starts a little off 1 (bf16 has 8 significant
// bits: logits move by about 2⁻⁸ of their magnitude).
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

var precisionSetting atomic.Int32

// SetPrecision sets the sampler's precision for every model and returns
// the previous setting. BF16 on a CPU without bf16 instructions (AMX-BF16
// or AVX512_BF16) samples in fp32 and says so once in the log: the Go
// twin would give the same numbers far more slowly.
func SetPrecision(p Precision) Precision {
	if p == BF16 && !gemm.HasBF16() {
		warnNoBF16.Do(func() {
			slog.Warn("bf16 requested but this CPU has no AMX-BF16 or AVX512_BF16: sampling in fp32")
		})
	}
	return Precision(precisionSetting.Swap(int32(p)))
}

var warnNoBF16 sync.Once

// SamplePrecision is the precision Sample runs at now.
func SamplePrecision() Precision {
	if p := Precision(precisionSetting.Load()); p == BF16 && gemm.HasBF16() {
		return BF16
	}
	return FP32
}

// packedWeights are the sampler's weights in bf16, packed for gemm.Bgemm.
type packedWeights struct {
	qkv, attProj, fc, fcProj []gemm.PackedB // per layer
	lmHead                   gemm.PackedB
}

// pack rounds m's current weights into pw, reusing its memory. It runs
// once per Sample call: the weights may have changed since the last one
// (an optimizer step), and packing them (under 2 ms at the quick preset's
// size) costs a small fraction of a call's decoding.
func (pw *packedWeights) pack(m *Model) {
	cfg, p := m.Config, m.Params
	C, H, L := cfg.Dim, cfg.Hidden(), cfg.Layers
	if len(pw.qkv) != L {
		pw.qkv, pw.attProj = make([]gemm.PackedB, L), make([]gemm.PackedB, L)
		pw.fc, pw.fcProj = make([]gemm.PackedB, L), make([]gemm.PackedB, L)
	}
	parallelFor(m.workers(), L, func(lo, hi int) {
		for l := lo; l < hi; l++ {
			lp := p.Layer(l)
			pw.qkv[l].Pack(false, C, 3*C, lp.QKVW, 3*C)
			pw.attProj[l].Pack(false, C, C, lp.AttProjW, C)
			pw.fc[l].Pack(false, C, H, lp.FCW, H)
			pw.fcProj[l].Pack(false, H, C, lp.FCProjW, C)
		}
	})
	pw.lmHead.Pack(true, C, cfg.VocabSize, p.LMHead, C)
}

// The per-layer lists, nil on a nil receiver (fp32).
func (pw *packedWeights) qkvs() []gemm.PackedB {
	if pw == nil {
		return nil
	}
	return pw.qkv
}

func (pw *packedWeights) attProjs() []gemm.PackedB {
	if pw == nil {
		return nil
	}
	return pw.attProj
}

func (pw *packedWeights) fcs() []gemm.PackedB {
	if pw == nil {
		return nil
	}
	return pw.fc
}

func (pw *packedWeights) fcProjs() []gemm.PackedB {
	if pw == nil {
		return nil
	}
	return pw.fcProj
}
