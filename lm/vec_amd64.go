//go:build amd64 && !purego

package lm

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2+FMA kernels in vec_amd64.s for the elementwise
// work that dominates after the matrix multiplies (softmax exponentials,
// GELU). The pure-Go loops stay as the fallback and as the reference the
// tests compare against.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// expShiftAVX2 sets x[i] = e^(x[i]−shift) and returns Σ x[i]. len(x) must
// be a positive multiple of 8.
//
//go:noescape
func expShiftAVX2(x []float32, shift float32) float32

// geluAVX2 sets th[i] = tanh(√(2/π)(x+0.044715x³)) and out[i] =
// ½x(1+th[i]). All lengths equal and a positive multiple of 8; out may
// alias x.
//
//go:noescape
func geluAVX2(out, th, x []float32)

// scoresAVX2 sets s[j] = scale·Σ_i q[i]·k[j·stride+i]. len(q) must be a
// positive multiple of 8 and k must hold len(s) rows of stride floats
// (the last needs only len(q)).
//
//go:noescape
func scoresAVX2(s, q, k []float32, stride int, scale float32)

// mixAVX2 adds Σ_j p[j]·v[j·stride : j·stride+len(o)] into o. len(o) must
// be a positive multiple of 8.
//
//go:noescape
func mixAVX2(o, p, v []float32, stride int)

// softmaxBackAVX2 sets d[j] = scale·p[j]·(d[j]−s). len(d) must be a
// positive multiple of 8 and len(p) ≥ len(d).
//
//go:noescape
func softmaxBackAVX2(d, p []float32, s, scale float32)

// geluBackAVX2 is geluBackward's body: dx = dout·gelu'(x) from the saved
// tanh term th. Lengths equal, a positive multiple of 8; dx may alias dout.
//
//go:noescape
func geluBackAVX2(dx, dout, x, th []float32)

// maxAVX2 returns the largest x[i] (NaN-free input). len(x) must be a
// positive multiple of 8.
//
//go:noescape
func maxAVX2(x []float32) float32

// scaleAVX2 sets x[i] *= s. len(x) must be a positive multiple of 8.
//
//go:noescape
func scaleAVX2(x []float32, s float32)

// LayerNorm row kernels; every slice a positive multiple of 8 long.
//
//go:noescape
func lnStatsAVX2(x []float32) (mean, rstd float32)

//go:noescape
func lnApplyAVX2(out, x, w, b []float32, mean, rstd float32)

//go:noescape
func lnBack1AVX2(cw, cb, x, dout, w []float32, mean, rstd float32) (sd, sdx float32)

//go:noescape
func lnBack2AVX2(dx, x, dout, w []float32, mean, rstd, sd, sdx float32)

// useAVX512 selects the AVX-512 kernels that read a bf16 KV cache
// (attendRowBF16).
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

// scoresBF16AVX512 is scoresAVX2 with the keys in bf16 (putBF16Row's
// order): s[j] = scale·Σ_i q[i]·k_j[i], each bf16 key widened exactly to
// fp32. len(q) must be a positive multiple of 32.
//
//go:noescape
func scoresBF16AVX512(s, q []float32, k []uint16, stride int, scale float32)

// mixBF16AVX512 is mixAVX2 with the values in bf16 (putBF16Row's
// order): o[i] += Σ_j p[j]·v_j[i], the j summed in four interleaved
// partial sums. len(o) must be a positive multiple of 32.
//
//go:noescape
func mixBF16AVX512(o, p []float32, v []uint16, stride int)
