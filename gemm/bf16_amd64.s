//go:build amd64 && !purego

#include "textflag.h"

// The bf16 kernels. Go's assembler (1.26) has no AVX512_BF16 mnemonics, so
// the two instructions used are spelled as EVEX bytes by the macros below;
// `objdump -d` on a test binary shows them as vdpbf16ps / vcvtneps2bf16.
//
// EVEX_P0 writes 0x62 and P0: inverted R, X, B, R' (from the reg operand r
// and the r/m operand b) and map 0F38. The operands are register numbers.
#define EVEX_P0(r, b) BYTE $0x62; BYTE $(((1-(((r)>>3)&1))<<7) | ((1-(((b)>>4)&1))<<6) | ((1-(((b)>>3)&1))<<5) | ((1-(((r)>>4)&1))<<4) | 2)

// VDPBF16PS zmm(d), zmm(s1), zmm(s2): EVEX.512.F3.0F38.W0 52 /r. Each fp32
// lane i of d gets d += s1.bf16[2i+1]·s2.bf16[2i+1], then
// += s1.bf16[2i]·s2.bf16[2i] (Intel SDM pseudo-code; products exact, sums
// rounded to nearest even, denormals flushed).
#define VDPBF16PS_Z(d, s1, s2) EVEX_P0(d, s2); BYTE $(((15-((s1)&15))<<3) | 4 | 2); BYTE $(0x40 | ((1-(((s1)>>4)&1))<<3)); BYTE $0x52; BYTE $(0xC0 | (((d)&7)<<3) | ((s2)&7))

// VCVTNEPS2BF16 ymm(d), zmm(s): EVEX.512.F3.0F38.W0 72 /r: sixteen fp32
// to bf16, round to nearest even, denormals to zero.
#define VCVTNEPS2BF16_ZY(d, s) EVEX_P0(d, s); BYTE $(0x78 | 4 | 2); BYTE $(0x48); BYTE $0x72; BYTE $(0xC0 | (((d)&7)<<3) | ((s)&7))

// func kern8x32BF16(kp int, a *uint32, rsA int, b *uint32, ldb int, c *float32, ldc int, alpha float32)
//
// C[8×32] += alpha·A·B over kp k-pairs. A(i,p) is the bf16 pair at
// a + 4·(i·rsA + p), B(p, j) the pair at b + 4·(p·ldb + j), C(i,j) at
// c + 4·(i·ldc + j). Register use is kern8x32AVX512's: Z0–Z15 the 8×2
// accumulators, Z16–Z17 a row of B pairs, Z18–Z25 A's pairs broadcast.
TEXT ·kern8x32BF16(SB), NOSPLIT, $0-60
	MOVQ kp+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ rsA+16(FP), R10
	SHLQ $2, R10
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R8
	SHLQ $2, R8
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R9
	SHLQ $2, R9
	LEAQ (SI)(R10*2), R11
	ADDQ R10, R11
	LEAQ (R11)(R10*2), R12
	ADDQ R10, R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15
	TESTQ CX, CX
	JLE  storebf

loopbf:
	VMOVUPS (DI), Z16
	VMOVUPS 64(DI), Z17
	VPBROADCASTD (SI), Z18
	VPBROADCASTD (SI)(R10*1), Z19
	VPBROADCASTD (SI)(R10*2), Z20
	VPBROADCASTD (R11), Z21
	VPBROADCASTD (R11)(R10*1), Z22
	VPBROADCASTD (R11)(R10*2), Z23
	VPBROADCASTD (R12), Z24
	VPBROADCASTD (R12)(R10*1), Z25
	VDPBF16PS_Z(0, 18, 16)
	VDPBF16PS_Z(1, 18, 17)
	VDPBF16PS_Z(2, 19, 16)
	VDPBF16PS_Z(3, 19, 17)
	VDPBF16PS_Z(4, 20, 16)
	VDPBF16PS_Z(5, 20, 17)
	VDPBF16PS_Z(6, 21, 16)
	VDPBF16PS_Z(7, 21, 17)
	VDPBF16PS_Z(8, 22, 16)
	VDPBF16PS_Z(9, 22, 17)
	VDPBF16PS_Z(10, 23, 16)
	VDPBF16PS_Z(11, 23, 17)
	VDPBF16PS_Z(12, 24, 16)
	VDPBF16PS_Z(13, 24, 17)
	VDPBF16PS_Z(14, 25, 16)
	VDPBF16PS_Z(15, 25, 17)
	ADDQ $4, SI
	ADDQ $4, R11
	ADDQ $4, R12
	ADDQ R8, DI
	DECQ CX
	JNZ  loopbf

storebf:
	VBROADCASTSS alpha+56(FP), Z31
	VFMADD213PS (DX), Z31, Z0
	VFMADD213PS 64(DX), Z31, Z1
	VMOVUPS Z0, (DX)
	VMOVUPS Z1, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z2
	VFMADD213PS 64(DX), Z31, Z3
	VMOVUPS Z2, (DX)
	VMOVUPS Z3, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z4
	VFMADD213PS 64(DX), Z31, Z5
	VMOVUPS Z4, (DX)
	VMOVUPS Z5, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z6
	VFMADD213PS 64(DX), Z31, Z7
	VMOVUPS Z6, (DX)
	VMOVUPS Z7, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z8
	VFMADD213PS 64(DX), Z31, Z9
	VMOVUPS Z8, (DX)
	VMOVUPS Z9, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z10
	VFMADD213PS 64(DX), Z31, Z11
	VMOVUPS Z10, (DX)
	VMOVUPS Z11, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z12
	VFMADD213PS 64(DX), Z31, Z13
	VMOVUPS Z12, (DX)
	VMOVUPS Z13, 64(DX)
	ADDQ R9, DX
	VFMADD213PS (DX), Z31, Z14
	VFMADD213PS 64(DX), Z31, Z15
	VMOVUPS Z14, (DX)
	VMOVUPS Z15, 64(DX)
	VZEROUPPER
	RET

// func cvtBF16AVX512(dst *uint16, src *float32, n int)
//
// dst[i] = bf16(src[i]) for i < n, n a multiple of 16.
TEXT ·cvtBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   cvtdone

cvtloop:
	VMOVUPS (SI), Z0
	VCVTNEPS2BF16_ZY(1, 0)
	VMOVDQU Y1, (DI)
	ADDQ $64, SI
	ADDQ $32, DI
	DECQ CX
	JNZ  cvtloop

cvtdone:
	VZEROUPPER
	RET

// func halvesBF16AVX512(dst *uint16, src *float32, n int)
//
// For each block of 32 floats of src (n a multiple of 32): the 16 pairs
// bf16(src[t]) | bf16(src[16+t])<<16, t < 16, at dst as 32 uint16s
// (ToBF16Halves).
TEXT ·halvesBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $5, CX
	JZ   halvesdone

halvesloop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VCVTNEPS2BF16_ZY(4, 0)
	VCVTNEPS2BF16_ZY(5, 1)
	VPMOVZXWD Y4, Z4
	VPMOVZXWD Y5, Z5
	VPSLLD    $16, Z5, Z5
	VPORD     Z4, Z5, Z5
	VMOVDQU32 Z5, (DI)
	ADDQ      $128, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       halvesloop

halvesdone:
	VZEROUPPER
	RET

// func pairBF16AVX512(dst *uint32, step int, lo, hi *float32, n int)
//
// For j < n, n a multiple of 32: the pair bf16(lo[j]) | bf16(hi[j])<<16
// at dst + (j/32)·step + 4·(j%32) (step in bytes): two rows of fp32
// rounded and interleaved into PackedB's pairs, 32 at a time (one panel's
// row), without a pass through uint16 buffers.
TEXT ·pairBF16AVX512(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ step+8(FP), R8
	MOVQ lo+16(FP), SI
	MOVQ hi+24(FP), DX
	MOVQ n+32(FP), CX
	SHRQ $5, CX
	JZ   pairdone

pairloop:
	VMOVUPS (SI), Z0
	VMOVUPS (DX), Z1
	VMOVUPS 64(SI), Z2
	VMOVUPS 64(DX), Z3
	VCVTNEPS2BF16_ZY(4, 0)
	VCVTNEPS2BF16_ZY(5, 1)
	VCVTNEPS2BF16_ZY(6, 2)
	VCVTNEPS2BF16_ZY(7, 3)
	VPMOVZXWD Y4, Z4
	VPMOVZXWD Y5, Z5
	VPMOVZXWD Y6, Z6
	VPMOVZXWD Y7, Z7
	VPSLLD    $16, Z5, Z5
	VPSLLD    $16, Z7, Z7
	VPORD     Z4, Z5, Z5
	VPORD     Z6, Z7, Z7
	VMOVDQU32 Z5, (DI)
	VMOVDQU32 Z7, 64(DI)
	ADDQ      $128, SI
	ADDQ      $128, DX
	ADDQ      R8, DI
	DECQ      CX
	JNZ       pairloop

pairdone:
	VZEROUPPER
	RET
