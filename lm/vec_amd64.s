//go:build amd64 && !purego

#include "textflag.h"

// Constants, each broadcast from one float32.
DATA expHi<>+0(SB)/4, $88.3762626647949     // largest x with 2^k representable
GLOBL expHi<>(SB), RODATA|NOPTR, $4
DATA expLo<>+0(SB)/4, $-87.3365447504019
GLOBL expLo<>(SB), RODATA|NOPTR, $4
DATA log2e<>+0(SB)/4, $1.44269504088896341
GLOBL log2e<>(SB), RODATA|NOPTR, $4
DATA ln2hi<>+0(SB)/4, $0.693359375
GLOBL ln2hi<>(SB), RODATA|NOPTR, $4
DATA ln2lo<>+0(SB)/4, $-2.12194440e-4
GLOBL ln2lo<>(SB), RODATA|NOPTR, $4
DATA ep0<>+0(SB)/4, $1.9875691500e-4
GLOBL ep0<>(SB), RODATA|NOPTR, $4
DATA ep1<>+0(SB)/4, $1.3981999507e-3
GLOBL ep1<>(SB), RODATA|NOPTR, $4
DATA ep2<>+0(SB)/4, $8.3334519073e-3
GLOBL ep2<>(SB), RODATA|NOPTR, $4
DATA ep3<>+0(SB)/4, $4.1665795894e-2
GLOBL ep3<>(SB), RODATA|NOPTR, $4
DATA ep4<>+0(SB)/4, $1.6666665459e-1
GLOBL ep4<>(SB), RODATA|NOPTR, $4
DATA ep5<>+0(SB)/4, $5.0000001201e-1
GLOBL ep5<>(SB), RODATA|NOPTR, $4
DATA one<>+0(SB)/4, $1.0
GLOBL one<>(SB), RODATA|NOPTR, $4
DATA half<>+0(SB)/4, $0.5
GLOBL half<>(SB), RODATA|NOPTR, $4
DATA bias127<>+0(SB)/4, $127
GLOBL bias127<>(SB), RODATA|NOPTR, $4

// func expShiftAVX2(x []float32, shift float32) float32
TEXT ·expShiftAVX2(SB), NOSPLIT, $0-36
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	VBROADCASTSS shift+24(FP), Y15
	VBROADCASTSS expHi<>(SB), Y14
	VBROADCASTSS expLo<>(SB), Y13
	VBROADCASTSS log2e<>(SB), Y12
	VBROADCASTSS ln2hi<>(SB), Y11
	VBROADCASTSS ln2lo<>(SB), Y10
	VBROADCASTSS ep0<>(SB), Y9
	VBROADCASTSS one<>(SB), Y8
	VPBROADCASTD bias127<>(SB), Y7
	VXORPS Y6, Y6, Y6 // running sum
	SHRQ $3, CX

exploop:
	VMOVUPS (SI), Y0
	VSUBPS Y15, Y0, Y0       // x − shift
	VMINPS Y14, Y0, Y0
	VMAXPS Y13, Y0, Y0
	VMULPS Y12, Y0, Y1       // x·log2e
	VROUNDPS $0, Y1, Y1      // k = round to nearest
	VFNMADD231PS Y11, Y1, Y0 // r = x − k·ln2hi
	VFNMADD231PS Y10, Y1, Y0 // r = r − k·ln2lo (ln2lo < 0)
	VMOVAPS Y9, Y2
	VBROADCASTSS ep1<>(SB), Y3
	VFMADD213PS Y3, Y0, Y2   // p = p·r + c1
	VBROADCASTSS ep2<>(SB), Y3
	VFMADD213PS Y3, Y0, Y2
	VBROADCASTSS ep3<>(SB), Y3
	VFMADD213PS Y3, Y0, Y2
	VBROADCASTSS ep4<>(SB), Y3
	VFMADD213PS Y3, Y0, Y2
	VBROADCASTSS ep5<>(SB), Y3
	VFMADD213PS Y3, Y0, Y2
	VMULPS Y0, Y0, Y4        // r²
	VFMADD213PS Y0, Y4, Y2   // p = p·r² + r
	VADDPS Y8, Y2, Y2        // + 1
	VCVTPS2DQ Y1, Y1         // k as int32
	VPADDD Y7, Y1, Y1
	VPSLLD $23, Y1, Y1       // 2^k
	VMULPS Y1, Y2, Y2
	VMOVUPS Y2, (SI)
	VADDPS Y2, Y6, Y6
	ADDQ $32, SI
	DECQ CX
	JNZ exploop

	// horizontal sum of Y6
	VEXTRACTF128 $1, Y6, X0
	VADDPS X0, X6, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $1, X0, X1
	VADDSS X1, X0, X0
	MOVSS X0, ret+32(FP)
	VZEROUPPER
	RET

// tanh rational fit (Eigen ptanh_float) coefficients
DATA tclamp<>+0(SB)/4, $7.90531110763549805
GLOBL tclamp<>(SB), RODATA|NOPTR, $4
DATA tnclamp<>+0(SB)/4, $-7.90531110763549805
GLOBL tnclamp<>(SB), RODATA|NOPTR, $4
DATA ta13<>+0(SB)/4, $-2.76076847742355e-16
GLOBL ta13<>(SB), RODATA|NOPTR, $4
DATA ta11<>+0(SB)/4, $2.00018790482477e-13
GLOBL ta11<>(SB), RODATA|NOPTR, $4
DATA ta9<>+0(SB)/4, $-8.60467152213735e-11
GLOBL ta9<>(SB), RODATA|NOPTR, $4
DATA ta7<>+0(SB)/4, $5.12229709037114e-08
GLOBL ta7<>(SB), RODATA|NOPTR, $4
DATA ta5<>+0(SB)/4, $1.48572235717979e-05
GLOBL ta5<>(SB), RODATA|NOPTR, $4
DATA ta3<>+0(SB)/4, $6.37261928875436e-04
GLOBL ta3<>(SB), RODATA|NOPTR, $4
DATA ta1<>+0(SB)/4, $4.89352455891786e-03
GLOBL ta1<>(SB), RODATA|NOPTR, $4
DATA tb6<>+0(SB)/4, $1.19825839466702e-06
GLOBL tb6<>(SB), RODATA|NOPTR, $4
DATA tb4<>+0(SB)/4, $1.18534705686654e-04
GLOBL tb4<>(SB), RODATA|NOPTR, $4
DATA tb2<>+0(SB)/4, $2.26843463243900e-03
GLOBL tb2<>(SB), RODATA|NOPTR, $4
DATA tb0<>+0(SB)/4, $4.89352518554385e-03
GLOBL tb0<>(SB), RODATA|NOPTR, $4
DATA geluS<>+0(SB)/4, $0.7978845608028654
GLOBL geluS<>(SB), RODATA|NOPTR, $4
DATA geluK<>+0(SB)/4, $0.044715
GLOBL geluK<>(SB), RODATA|NOPTR, $4

// func geluAVX2(out, th, x []float32)
TEXT ·geluAVX2(SB), NOSPLIT, $0-72
	MOVQ out_base+0(FP), DI
	MOVQ th_base+24(FP), DX
	MOVQ x_base+48(FP), SI
	MOVQ x_len+56(FP), CX
	SHRQ $3, CX
	VBROADCASTSS tclamp<>(SB), Y15
	VBROADCASTSS tnclamp<>(SB), Y14
	VBROADCASTSS geluS<>(SB), Y13
	VBROADCASTSS geluK<>(SB), Y12
	VBROADCASTSS one<>(SB), Y11
	VBROADCASTSS half<>(SB), Y10

geluloop:
	VMOVUPS (SI), Y0         // x
	VMULPS Y0, Y0, Y1        // x²
	VMOVAPS Y11, Y2
	VFMADD231PS Y12, Y1, Y2  // 1 + k·x²
	VMULPS Y0, Y2, Y2        // x + k·x³
	VMULPS Y13, Y2, Y2       // u = s·(x + k·x³)
	VMINPS Y15, Y2, Y2
	VMAXPS Y14, Y2, Y2
	VMULPS Y2, Y2, Y3        // u²
	VBROADCASTSS ta13<>(SB), Y4
	VBROADCASTSS ta11<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4   // p = p·u² + a11
	VBROADCASTSS ta9<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS ta7<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS ta5<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS ta3<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VBROADCASTSS ta1<>(SB), Y5
	VFMADD213PS Y5, Y3, Y4
	VMULPS Y2, Y4, Y4        // p·u
	VBROADCASTSS tb6<>(SB), Y6
	VBROADCASTSS tb4<>(SB), Y5
	VFMADD213PS Y5, Y3, Y6   // q = q·u² + b4
	VBROADCASTSS tb2<>(SB), Y5
	VFMADD213PS Y5, Y3, Y6
	VBROADCASTSS tb0<>(SB), Y5
	VFMADD213PS Y5, Y3, Y6
	VDIVPS Y6, Y4, Y4        // t = p/q
	VMOVUPS Y4, (DX)
	VADDPS Y11, Y4, Y4       // 1 + t
	VMULPS Y10, Y0, Y0       // ½x
	VMULPS Y4, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNZ geluloop
	VZEROUPPER
	RET

// func scoresAVX2(s, q, k []float32, stride int, scale float32)
// s[j] = scale·Σ_i q[i]·k[j·stride+i]; len(q) a positive multiple of 8.
// Eight keys at a time, one accumulator each (independent FMA chains), then
// a transposing horizontal-add tree that leaves the eight sums in order.
TEXT ·scoresAVX2(SB), NOSPLIT, $0-84
	MOVQ s_base+0(FP), DI
	MOVQ s_len+8(FP), CX
	MOVQ q_base+24(FP), SI
	MOVQ q_len+32(FP), R8
	MOVQ k_base+48(FP), DX
	MOVQ stride+72(FP), R9
	SHLQ $2, R9              // stride in bytes
	VBROADCASTSS scale+80(FP), Y15
	SHRQ $3, R8              // 8-float blocks per key
	LEAQ (R9)(R9*2), R13     // 3·stride
	LEAQ (R9)(R9*4), R14     // 5·stride
	LEAQ (R13)(R9*4), BX     // 7·stride
	MOVQ R9, AX
	SHLQ $3, AX              // 8·stride

scores8:
	CMPQ CX, $8
	JLT scores1
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, R12

scores8i:
	VMOVUPS (R10), Y8
	VFMADD231PS (R11), Y8, Y0
	VFMADD231PS (R11)(R9*1), Y8, Y1
	VFMADD231PS (R11)(R9*2), Y8, Y2
	VFMADD231PS (R11)(R13*1), Y8, Y3
	VFMADD231PS (R11)(R9*4), Y8, Y4
	VFMADD231PS (R11)(R14*1), Y8, Y5
	VFMADD231PS (R11)(R13*2), Y8, Y6
	VFMADD231PS (R11)(BX*1), Y8, Y7
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ R12
	JNZ scores8i

	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ AX, DX
	SUBQ $8, CX
	JMP scores8

scores1:
	TESTQ CX, CX
	JZ scoresdone

scoresj:
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, R12

scoresi:
	VMOVUPS (R10), Y1
	VFMADD231PS (R11), Y1, Y0
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ R12
	JNZ scoresi

	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $1, X0, X1
	VADDSS X1, X0, X0
	VMULSS X15, X0, X0
	MOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ R9, DX
	DECQ CX
	JNZ scoresj

scoresdone:
	VZEROUPPER
	RET

// func mixAVX2(o, p, v []float32, stride int)
// o[i] += Σ_j p[j]·v[j·stride+i]; len(o) a positive multiple of 8.
// 32 outputs at a time in four accumulators (independent FMA chains), then
// any remaining 8-wide blocks one at a time.
TEXT ·mixAVX2(SB), NOSPLIT, $0-80
	MOVQ o_base+0(FP), DI
	MOVQ o_len+8(FP), R8
	MOVQ p_base+24(FP), SI
	MOVQ p_len+32(FP), CX
	MOVQ v_base+48(FP), DX
	MOVQ stride+72(FP), R9
	SHLQ $2, R9
	SHRQ $3, R8              // 8-float blocks of o
	TESTQ CX, CX
	JZ mixdone

mix32:
	CMPQ R8, $4
	JLT mix8
	VMOVUPS (DI), Y0
	VMOVUPS 32(DI), Y1
	VMOVUPS 64(DI), Y2
	VMOVUPS 96(DI), Y3
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ CX, R12

mix32j:
	VBROADCASTSS (R10), Y4
	VFMADD231PS (R11), Y4, Y0
	VFMADD231PS 32(R11), Y4, Y1
	VFMADD231PS 64(R11), Y4, Y2
	VFMADD231PS 96(R11), Y4, Y3
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ R12
	JNZ mix32j

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ $128, DI
	ADDQ $128, DX
	SUBQ $4, R8
	JMP mix32

mix8:
	TESTQ R8, R8
	JZ mixdone

mixi:
	VMOVUPS (DI), Y0
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ CX, R12

mixj:
	VBROADCASTSS (R10), Y1
	VFMADD231PS (R11), Y1, Y0
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ R12
	JNZ mixj

	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ R8
	JNZ mixi

mixdone:
	VZEROUPPER
	RET

// func softmaxBackAVX2(d, p []float32, s, scale float32)
// d[j] = scale·p[j]·(d[j] − s); len(d) a positive multiple of 8.
TEXT ·softmaxBackAVX2(SB), NOSPLIT, $0-56
	MOVQ d_base+0(FP), DI
	MOVQ d_len+8(FP), CX
	MOVQ p_base+24(FP), SI
	VBROADCASTSS s+48(FP), Y15
	VBROADCASTSS scale+52(FP), Y14
	SHRQ $3, CX

sbloop:
	VMOVUPS (DI), Y0
	VSUBPS Y15, Y0, Y0
	VMULPS (SI), Y0, Y0
	VMULPS Y14, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNZ sbloop
	VZEROUPPER
	RET

// func geluBackAVX2(dx, dout, x, th []float32)
// dx = dout·(½(1+t) + ½x(1−t²)·s(1+3k·x²)); lengths a positive multiple of 8.
TEXT ·geluBackAVX2(SB), NOSPLIT, $0-96
	MOVQ dx_base+0(FP), DI
	MOVQ dx_len+8(FP), CX
	MOVQ dout_base+24(FP), R8
	MOVQ x_base+48(FP), SI
	MOVQ th_base+72(FP), DX
	SHRQ $3, CX
	VBROADCASTSS geluS<>(SB), Y15
	VBROADCASTSS geluK3<>(SB), Y14
	VBROADCASTSS one<>(SB), Y13
	VBROADCASTSS half<>(SB), Y12

gbloop:
	VMOVUPS (SI), Y0         // x
	VMOVUPS (DX), Y1         // t
	VMULPS Y0, Y0, Y2        // x²
	VMOVAPS Y13, Y3
	VFMADD231PS Y14, Y2, Y3  // 1 + 3k·x²
	VMULPS Y15, Y3, Y3       // s(1+3k·x²)
	VMOVAPS Y13, Y4
	VFNMADD231PS Y1, Y1, Y4  // 1 − t²
	VMULPS Y4, Y3, Y3        // (1−t²)·s(1+3k·x²)
	VMULPS Y0, Y3, Y3        // x·(...)
	VADDPS Y13, Y1, Y1       // 1 + t
	VADDPS Y1, Y3, Y3        // (1+t) + x(...)
	VMULPS Y12, Y3, Y3       // ½(...)
	VMULPS (R8), Y3, Y3      // · dout
	VMOVUPS Y3, (DI)
	ADDQ $32, DI
	ADDQ $32, R8
	ADDQ $32, SI
	ADDQ $32, DX
	DECQ CX
	JNZ gbloop
	VZEROUPPER
	RET

DATA geluK3<>+0(SB)/4, $0.134145
GLOBL geluK3<>(SB), RODATA|NOPTR, $4

// func maxAVX2(x []float32) float32; len(x) a positive multiple of 8.
TEXT ·maxAVX2(SB), NOSPLIT, $0-28
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	VMOVUPS (SI), Y0
	ADDQ $32, SI
	DECQ CX
	JZ maxreduce

maxloop:
	VMAXPS (SI), Y0, Y0
	ADDQ $32, SI
	DECQ CX
	JNZ maxloop

maxreduce:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VMAXPS X1, X0, X0
	VPSHUFD $1, X0, X1
	VMAXSS X1, X0, X0
	MOVSS X0, ret+24(FP)
	VZEROUPPER
	RET

// func scaleAVX2(x []float32, s float32); len(x) a positive multiple of 8.
TEXT ·scaleAVX2(SB), NOSPLIT, $0-28
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	SHRQ $3, CX
	VBROADCASTSS s+24(FP), Y1

scaleloop:
	VMULPS (SI), Y1, Y0
	VMOVUPS Y0, (SI)
	ADDQ $32, SI
	DECQ CX
	JNZ scaleloop
	VZEROUPPER
	RET

// Horizontal sum of Y0 into X0's low lane (clobbers X1).
#define HSUM0 \
	VEXTRACTF128 $1, Y0, X1; \
	VADDPS X1, X0, X0; \
	VMOVHLPS X0, X0, X1; \
	VADDPS X1, X0, X0; \
	VPSHUFD $1, X0, X1; \
	VADDSS X1, X0, X0

// func lnStatsAVX2(x []float32) (mean, rstd float32)
// mean = Σx/n, rstd = 1/√(Σ(x−mean)²/n + 1e-5); len(x) a positive multiple of 8.
TEXT ·lnStatsAVX2(SB), NOSPLIT, $0-32
	MOVQ x_base+0(FP), SI
	MOVQ x_len+8(FP), CX
	MOVQ CX, R8
	SHRQ $3, CX
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ CX, R12

lnsum:
	VADDPS (R10), Y0, Y0
	ADDQ $32, R10
	DECQ R12
	JNZ lnsum
	HSUM0
	VCVTSI2SSQ R8, X2, X2    // n
	VDIVSS X2, X0, X3        // mean
	VBROADCASTSS X3, Y4
	VXORPS Y0, Y0, Y0
	MOVQ SI, R10
	MOVQ CX, R12

lnvar:
	VMOVUPS (R10), Y5
	VSUBPS Y4, Y5, Y5
	VFMADD231PS Y5, Y5, Y0
	ADDQ $32, R10
	DECQ R12
	JNZ lnvar
	HSUM0
	VDIVSS X2, X0, X0        // variance
	VADDSS lneps<>(SB), X0, X0
	VSQRTSS X0, X0, X0
	VMOVSS one<>(SB), X1
	VDIVSS X0, X1, X0        // rstd
	MOVSS X3, mean+24(FP)
	MOVSS X0, rstd+28(FP)
	VZEROUPPER
	RET

DATA lneps<>+0(SB)/4, $1e-5
GLOBL lneps<>(SB), RODATA|NOPTR, $4

// func lnApplyAVX2(out, x, w, b []float32, mean, rstd float32)
// out = (x−mean)·rstd·w + b; lengths equal, a positive multiple of 8.
TEXT ·lnApplyAVX2(SB), NOSPLIT, $0-104
	MOVQ out_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ w_base+48(FP), DX
	MOVQ b_base+72(FP), R8
	VBROADCASTSS mean+96(FP), Y14
	VBROADCASTSS rstd+100(FP), Y15
	SHRQ $3, CX

lnapply:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0
	VMOVUPS (R8), Y1
	VFMADD231PS (DX), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, R8
	DECQ CX
	JNZ lnapply
	VZEROUPPER
	RET

// func lnBack1AVX2(cw, cb, x, dout, w []float32, mean, rstd float32) (sd, sdx float32)
// With x̂ = (x−mean)·rstd and dn = dout·w: cb += dout, cw += dout·x̂,
// returns Σdn and Σdn·x̂. Lengths equal, a positive multiple of 8.
TEXT ·lnBack1AVX2(SB), NOSPLIT, $0-136
	MOVQ cw_base+0(FP), DI
	MOVQ cb_base+24(FP), BX
	MOVQ x_base+48(FP), SI
	MOVQ x_len+56(FP), CX
	MOVQ dout_base+72(FP), R8
	MOVQ w_base+96(FP), DX
	VBROADCASTSS mean+120(FP), Y14
	VBROADCASTSS rstd+124(FP), Y15
	SHRQ $3, CX
	VXORPS Y6, Y6, Y6        // Σdn
	VXORPS Y7, Y7, Y7        // Σdn·x̂

lnb1:
	VMOVUPS (SI), Y0
	VSUBPS Y14, Y0, Y0
	VMULPS Y15, Y0, Y0       // x̂
	VMOVUPS (R8), Y1         // d
	VMULPS (DX), Y1, Y2      // dn
	VADDPS Y2, Y6, Y6
	VFMADD231PS Y0, Y2, Y7
	VADDPS (BX), Y1, Y3
	VMOVUPS Y3, (BX)
	VMOVUPS (DI), Y3
	VFMADD231PS Y0, Y1, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, DI
	ADDQ $32, BX
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DX
	DECQ CX
	JNZ lnb1
	VMOVAPS Y6, Y0
	HSUM0
	MOVSS X0, sd+128(FP)
	VMOVAPS Y7, Y0
	HSUM0
	MOVSS X0, sdx+132(FP)
	VZEROUPPER
	RET

// func lnBack2AVX2(dx, x, dout, w []float32, mean, rstd, sd, sdx float32)
// dx += rstd·(dout·w − sd − x̂·sdx), with sd and sdx already divided by n.
TEXT ·lnBack2AVX2(SB), NOSPLIT, $0-112
	MOVQ dx_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	MOVQ dout_base+48(FP), R8
	MOVQ w_base+72(FP), DX
	VBROADCASTSS mean+96(FP), Y12
	VBROADCASTSS rstd+100(FP), Y13
	VBROADCASTSS sd+104(FP), Y14
	VBROADCASTSS sdx+108(FP), Y15
	SHRQ $3, CX

lnb2:
	VMOVUPS (SI), Y0
	VSUBPS Y12, Y0, Y0
	VMULPS Y13, Y0, Y0       // x̂
	VMOVUPS (R8), Y1
	VMULPS (DX), Y1, Y1      // dn
	VSUBPS Y14, Y1, Y1       // dn − sd
	VFNMADD231PS Y15, Y0, Y1 // − x̂·sdx
	VMOVUPS (DI), Y2
	VFMADD231PS Y13, Y1, Y2  // dx += rstd·(...)
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	ADDQ $32, R8
	ADDQ $32, DX
	DECQ CX
	JNZ lnb2
	VZEROUPPER
	RET

// The bf16 cache's 32-value blocks hold pairs (x[t], x[16+t]), t < 16
// (putBF16Row): a block loaded as 16 dwords gives x[0:16] with each dword
// shifted up 16 bits and x[16:32] with its low half masked off, both
// exact fp32, two instructions per 32 values.

// func scoresBF16AVX512(s, q []float32, k []uint16, stride int, scale float32)
// s[j] = scale·Σ_i q[i]·k[j·stride+i], k in bf16 pair blocks; len(q) a
// positive multiple of 32. Eight keys at a time, one accumulator each;
// each accumulator's halves added, then scoresAVX2's transposing tree.
TEXT ·scoresBF16AVX512(SB), NOSPLIT, $0-84
	MOVQ s_base+0(FP), DI
	MOVQ s_len+8(FP), CX
	MOVQ q_base+24(FP), SI
	MOVQ q_len+32(FP), R8
	MOVQ k_base+48(FP), DX
	MOVQ stride+72(FP), R9
	SHLQ $1, R9              // stride in bytes
	VBROADCASTSS scale+80(FP), Y15
	SHRQ $5, R8              // 32-value blocks per key
	LEAQ (R9)(R9*2), R13     // 3·stride
	LEAQ (R9)(R9*4), R14     // 5·stride
	LEAQ (R13)(R9*4), BX     // 7·stride
	MOVQ R9, AX
	SHLQ $3, AX              // 8·stride
	VPTERNLOGD $0xff, Z14, Z14, Z14
	VPSLLD $16, Z14, Z14     // 0xffff0000 a lane

bscores8:
	CMPQ CX, $8
	JLT bscores1
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, R12

bscores8i:
	VMOVUPS (R10), Z8
	VMOVUPS 64(R10), Z9
	VMOVDQU32 (R11), Z16
	VMOVDQU32 (R11)(R9*1), Z17
	VMOVDQU32 (R11)(R9*2), Z18
	VMOVDQU32 (R11)(R13*1), Z19
	VMOVDQU32 (R11)(R9*4), Z20
	VMOVDQU32 (R11)(R14*1), Z21
	VMOVDQU32 (R11)(R13*2), Z22
	VMOVDQU32 (R11)(BX*1), Z23
	VPSLLD $16, Z16, Z24
	VPSLLD $16, Z17, Z25
	VPSLLD $16, Z18, Z26
	VPSLLD $16, Z19, Z27
	VPSLLD $16, Z20, Z28
	VPSLLD $16, Z21, Z29
	VPSLLD $16, Z22, Z30
	VPSLLD $16, Z23, Z31
	VFMADD231PS Z24, Z8, Z0
	VFMADD231PS Z25, Z8, Z1
	VFMADD231PS Z26, Z8, Z2
	VFMADD231PS Z27, Z8, Z3
	VFMADD231PS Z28, Z8, Z4
	VFMADD231PS Z29, Z8, Z5
	VFMADD231PS Z30, Z8, Z6
	VFMADD231PS Z31, Z8, Z7
	VPANDD Z14, Z16, Z16
	VPANDD Z14, Z17, Z17
	VPANDD Z14, Z18, Z18
	VPANDD Z14, Z19, Z19
	VPANDD Z14, Z20, Z20
	VPANDD Z14, Z21, Z21
	VPANDD Z14, Z22, Z22
	VPANDD Z14, Z23, Z23
	VFMADD231PS Z16, Z9, Z0
	VFMADD231PS Z17, Z9, Z1
	VFMADD231PS Z18, Z9, Z2
	VFMADD231PS Z19, Z9, Z3
	VFMADD231PS Z20, Z9, Z4
	VFMADD231PS Z21, Z9, Z5
	VFMADD231PS Z22, Z9, Z6
	VFMADD231PS Z23, Z9, Z7
	ADDQ $128, R10
	ADDQ $64, R11
	DECQ R12
	JNZ bscores8i

	VEXTRACTF64X4 $1, Z0, Y8
	VADDPS Y8, Y0, Y0
	VEXTRACTF64X4 $1, Z1, Y8
	VADDPS Y8, Y1, Y1
	VEXTRACTF64X4 $1, Z2, Y8
	VADDPS Y8, Y2, Y2
	VEXTRACTF64X4 $1, Z3, Y8
	VADDPS Y8, Y3, Y3
	VEXTRACTF64X4 $1, Z4, Y8
	VADDPS Y8, Y4, Y4
	VEXTRACTF64X4 $1, Z5, Y8
	VADDPS Y8, Y5, Y5
	VEXTRACTF64X4 $1, Z6, Y8
	VADDPS Y8, Y6, Y6
	VEXTRACTF64X4 $1, Z7, Y8
	VADDPS Y8, Y7, Y7
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y2, Y0, Y0
	VHADDPS Y6, Y4, Y4
	VPERM2F128 $0x20, Y4, Y0, Y1
	VPERM2F128 $0x31, Y4, Y0, Y2
	VADDPS Y2, Y1, Y1
	VMULPS Y15, Y1, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, DI
	ADDQ AX, DX
	SUBQ $8, CX
	JMP bscores8

bscores1:
	TESTQ CX, CX
	JZ bscoresdone

bscoresj:
	VPXORD Z0, Z0, Z0
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ R8, R12

bscoresi:
	VMOVUPS (R10), Z8
	VMOVUPS 64(R10), Z9
	VMOVDQU32 (R11), Z16
	VPSLLD $16, Z16, Z24
	VPANDD Z14, Z16, Z16
	VFMADD231PS Z24, Z8, Z0
	VFMADD231PS Z16, Z9, Z0
	ADDQ $128, R10
	ADDQ $64, R11
	DECQ R12
	JNZ bscoresi

	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VPSHUFD $1, X0, X1
	VADDSS X1, X0, X0
	VMULSS X15, X0, X0
	MOVSS X0, (DI)
	ADDQ $4, DI
	ADDQ R9, DX
	DECQ CX
	JNZ bscoresj

bscoresdone:
	VZEROUPPER
	RET

// func mixBF16AVX512(o, p []float32, v []uint16, stride int)
// o[i] += Σ_j p[j]·v[j·stride+i], v in bf16 pair blocks; len(o) a
// positive multiple of 32. Per 32-value block of o, two accumulators (o's
// halves) for each j mod 4 (the remainder goes to the first pair); they
// are summed and added to o.
TEXT ·mixBF16AVX512(SB), NOSPLIT, $0-80
	MOVQ o_base+0(FP), DI
	MOVQ o_len+8(FP), R8
	MOVQ p_base+24(FP), SI
	MOVQ p_len+32(FP), CX
	MOVQ v_base+48(FP), DX
	MOVQ stride+72(FP), R9
	SHLQ $1, R9              // stride in bytes
	SHRQ $5, R8              // 32-value blocks of o
	TESTQ CX, CX
	JZ bmixdone
	TESTQ R8, R8
	JZ bmixdone
	LEAQ (R9)(R9*2), R13     // 3·stride
	MOVQ R9, AX
	SHLQ $2, AX              // 4·stride
	VPTERNLOGD $0xff, Z14, Z14, Z14
	VPSLLD $16, Z14, Z14     // 0xffff0000 a lane

bmixblock:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ SI, R10
	MOVQ DX, R11
	MOVQ CX, R12

bmixj4:
	CMPQ R12, $4
	JLT bmixj1
	VBROADCASTSS (R10), Z8
	VBROADCASTSS 4(R10), Z9
	VBROADCASTSS 8(R10), Z10
	VBROADCASTSS 12(R10), Z11
	VMOVDQU32 (R11), Z16
	VMOVDQU32 (R11)(R9*1), Z17
	VMOVDQU32 (R11)(R9*2), Z18
	VMOVDQU32 (R11)(R13*1), Z19
	VPSLLD $16, Z16, Z20
	VPSLLD $16, Z17, Z21
	VPSLLD $16, Z18, Z22
	VPSLLD $16, Z19, Z23
	VPANDD Z14, Z16, Z16
	VPANDD Z14, Z17, Z17
	VPANDD Z14, Z18, Z18
	VPANDD Z14, Z19, Z19
	VFMADD231PS Z20, Z8, Z0
	VFMADD231PS Z16, Z8, Z1
	VFMADD231PS Z21, Z9, Z2
	VFMADD231PS Z17, Z9, Z3
	VFMADD231PS Z22, Z10, Z4
	VFMADD231PS Z18, Z10, Z5
	VFMADD231PS Z23, Z11, Z6
	VFMADD231PS Z19, Z11, Z7
	ADDQ $16, R10
	ADDQ AX, R11
	SUBQ $4, R12
	JMP bmixj4

bmixj1:
	TESTQ R12, R12
	JZ bmixsum

bmixj1loop:
	VBROADCASTSS (R10), Z8
	VMOVDQU32 (R11), Z16
	VPSLLD $16, Z16, Z20
	VPANDD Z14, Z16, Z16
	VFMADD231PS Z20, Z8, Z0
	VFMADD231PS Z16, Z8, Z1
	ADDQ $4, R10
	ADDQ R9, R11
	DECQ R12
	JNZ bmixj1loop

bmixsum:
	VADDPS Z2, Z0, Z0
	VADDPS Z6, Z4, Z4
	VADDPS Z4, Z0, Z0
	VADDPS Z3, Z1, Z1
	VADDPS Z7, Z5, Z5
	VADDPS Z5, Z1, Z1
	VADDPS (DI), Z0, Z0
	VADDPS 64(DI), Z1, Z1
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ $128, DI
	ADDQ $64, DX
	DECQ R8
	JNZ bmixblock

bmixdone:
	VZEROUPPER
	RET
