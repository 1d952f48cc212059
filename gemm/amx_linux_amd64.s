//go:build amd64 && !purego

#include "textflag.h"

// The AMX kernel. Go's assembler has no AMX mnemonics: each instruction
// is its VEX bytes (from GNU as), the Intel spelling in the comment.
// Tiles: tmm0–tmm3 the 32×32 fp32 accumulators (2×2 tiles of 16×16),
// tmm4–tmm5 A's rows 0–15 and 16–31 (16 rows × 16 bf16 pairs),
// tmm6–tmm7 B's columns 0–15 and 16–31 (16 pair-rows × 16 columns).

// func amx32x32(kt int, a *uint32, lda int, b *uint32, np int, out *float32, ldo int, cfg *byte, load int)
//
// For each of np column panels q of 32: out[0:32, 32q:32q+32] =
// A[32 × 16·kt pairs]·B_q, added onto the block's own values when
// load ≠ 0 (the accumulators start from them instead of from zero),
// A's pair (i,p) at a + i·lda + 4p (lda bytes),
// panel q's pair (p,j) at b + q·kt·2048 + 128p + 4j (PackedB's layout),
// out (i,j) at out + i·ldo + 4j (ldo bytes). The tile configuration is
// loaded and released inside the call: tile state is per thread, and a
// goroutine keeps its thread only until it next yields.
TEXT ·amx32x32(SB), NOSPLIT, $0-72
	MOVQ cfg+56(FP), AX
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // ldtilecfg [rax]
	MOVQ kt+0(FP), BX
	MOVQ a+8(FP), AX
	MOVQ lda+16(FP), R8
	MOVQ b+24(FP), DI
	MOVQ $128, R9
	MOVQ out+40(FP), DX
	MOVQ ldo+48(FP), R10
	MOVQ R10, R12
	SHLQ $4, R12
	ADDQ DX, R12
	MOVQ np+32(FP), R13

panel:
	MOVQ load+64(FP), CX
	TESTQ CX, CX
	JNZ  loadc
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // tilezero tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // tilezero tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // tilezero tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8 // tilezero tmm3
	JMP  ready

loadc:
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x12 // tileloadd tmm0, [rdx+r10]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x4c; BYTE $0x12; BYTE $0x40 // tileloadd tmm1, [rdx+r10+64]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x14 // tileloadd tmm2, [r12+r10]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x5c; BYTE $0x14; BYTE $0x40 // tileloadd tmm3, [r12+r10+64]

ready:
	MOVQ AX, SI
	MOVQ R8, R11
	SHLQ $4, R11
	ADDQ AX, R11
	MOVQ BX, CX

kstep:
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x06 // tileloadd tmm4, [rsi+r8]
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x03 // tileloadd tmm5, [r11+r8]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x0f // tileloadd tmm6, [rdi+r9]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x0f; BYTE $0x40 // tileloadd tmm7, [rdi+r9+64]
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4 // tdpbf16ps tmm0, tmm4, tmm6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc // tdpbf16ps tmm1, tmm4, tmm7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5 // tdpbf16ps tmm2, tmm5, tmm6
	BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd // tdpbf16ps tmm3, tmm5, tmm7
	ADDQ $64, SI
	ADDQ $64, R11
	ADDQ $2048, DI
	DECQ CX
	JNZ  kstep
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x12 // tilestored [rdx+r10], tmm0
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x12; BYTE $0x40 // tilestored [rdx+r10+64], tmm1
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x14 // tilestored [r12+r10], tmm2
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x5c; BYTE $0x14; BYTE $0x40 // tilestored [r12+r10+64], tmm3
	ADDQ $128, DX
	ADDQ $128, R12
	DECQ R13
	JNZ  panel
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // tilerelease
	RET
