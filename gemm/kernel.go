package gemm

// activeKernel is the fastest kernel this CPU supports, chosen at start-up.
var activeKernel = bestKernel()

// usableKernels lists the kernels this CPU can run, fastest first; tests
// and benchmarks run each of them, the portable one included.
func usableKernels() []*kernel {
	return append(asmKernels(), goKernel2x4)
}

func bestKernel() *kernel { return usableKernels()[0] }

// KernelName reports which micro-kernel Sgemm uses on this CPU:
// "avx512-8x32", "avx2-6x16" or "go2x4".
func KernelName() string { return activeKernel.name }

// goKernel2x4 is the portable micro-kernel, used on CPUs without the
// vector units the assembly kernels need: a 2×4 tile of accumulators in
// locals. The compiler keeps its 8 sums and 6 operands in the 15 free XMM
// registers; a 4×4 tile spilled to the stack and ran 1.45× slower (4.2
// against 6.1 GFLOP/s on one Zen 4 core).
var goKernel2x4 = &kernel{name: "go2x4", mr: 2, nr: 4, fn: kernGo2x4}

func kernGo2x4(kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int, alpha float32, over bool) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	ai, bi := aOff, bOff
	for p := 0; p < kc; p++ {
		bb := b[bi : bi+4 : bi+4]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		a0, a1 := a[ai], a[ai+rsA]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		ai += csA
		bi += ldb
	}
	r := c[cOff : cOff+4 : cOff+4]
	if over {
		clear(r)
		clear(c[cOff+ldc : cOff+ldc+4])
	}
	r[0] += alpha * c00
	r[1] += alpha * c01
	r[2] += alpha * c02
	r[3] += alpha * c03
	r = c[cOff+ldc : cOff+ldc+4 : cOff+ldc+4]
	r[0] += alpha * c10
	r[1] += alpha * c11
	r[2] += alpha * c12
	r[3] += alpha * c13
}
