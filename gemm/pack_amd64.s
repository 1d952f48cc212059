//go:build amd64 && !purego

#include "textflag.h"

// func transpose8AVX(dst *float32, stride int, src *float32, ld int, kc int)
//
// For r < kc (a multiple of 8) and i < 8: dst[r·stride+i] = src[i·ld+r].
// Eight rows of src are read 8 floats at a time and turned into eight
// 8-float columns with the usual unpack / shuffle / lane-permute 8×8
// transpose (24 shuffles per 64 floats).
TEXT ·transpose8AVX(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ stride+8(FP), R8
	SHLQ $2, R8
	MOVQ src+16(FP), SI
	MOVQ ld+24(FP), R10
	SHLQ $2, R10
	MOVQ kc+32(FP), CX
	SHRQ $3, CX
	JZ   done
	LEAQ (SI)(R10*2), R11
	ADDQ R10, R11          // R11 = row 3
	LEAQ (R11)(R10*2), R12
	ADDQ R10, R12          // R12 = row 6
	LEAQ (DI)(R8*2), R13
	ADDQ R8, R13           // R13 = dst row 3
	LEAQ (R8)(R8*2), R9
	SHLQ $1, R9            // R9 = 6·stride bytes
	MOVQ R8, BX
	SHLQ $3, BX            // BX = 8·stride bytes

loop:
	VMOVUPS (SI), Y0
	VMOVUPS (SI)(R10*1), Y1
	VMOVUPS (SI)(R10*2), Y2
	VMOVUPS (R11), Y3
	VMOVUPS (R11)(R10*1), Y4
	VMOVUPS (R11)(R10*2), Y5
	VMOVUPS (R12), Y6
	VMOVUPS (R12)(R10*1), Y7

	VUNPCKLPS Y1, Y0, Y8
	VUNPCKHPS Y1, Y0, Y9
	VUNPCKLPS Y3, Y2, Y10
	VUNPCKHPS Y3, Y2, Y11
	VUNPCKLPS Y5, Y4, Y12
	VUNPCKHPS Y5, Y4, Y13
	VUNPCKLPS Y7, Y6, Y14
	VUNPCKHPS Y7, Y6, Y15

	VSHUFPS $0x44, Y10, Y8, Y0
	VSHUFPS $0xEE, Y10, Y8, Y1
	VSHUFPS $0x44, Y11, Y9, Y2
	VSHUFPS $0xEE, Y11, Y9, Y3
	VSHUFPS $0x44, Y14, Y12, Y4
	VSHUFPS $0xEE, Y14, Y12, Y5
	VSHUFPS $0x44, Y15, Y13, Y6
	VSHUFPS $0xEE, Y15, Y13, Y7

	VPERM2F128 $0x20, Y4, Y0, Y8
	VPERM2F128 $0x20, Y5, Y1, Y9
	VPERM2F128 $0x20, Y6, Y2, Y10
	VPERM2F128 $0x20, Y7, Y3, Y11
	VPERM2F128 $0x31, Y4, Y0, Y12
	VPERM2F128 $0x31, Y5, Y1, Y13
	VPERM2F128 $0x31, Y6, Y2, Y14
	VPERM2F128 $0x31, Y7, Y3, Y15

	VMOVUPS Y8, (DI)
	VMOVUPS Y9, (DI)(R8*1)
	VMOVUPS Y10, (DI)(R8*2)
	VMOVUPS Y11, (R13)
	VMOVUPS Y12, (R13)(R8*1)
	VMOVUPS Y13, (R13)(R8*2)
	VMOVUPS Y14, (DI)(R9*1)
	LEAQ (DI)(R9*1), AX
	VMOVUPS Y15, (AX)(R8*1)

	ADDQ $32, SI
	ADDQ $32, R11
	ADDQ $32, R12
	ADDQ BX, DI
	ADDQ BX, R13
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
