package gemm

// goKernel4x4 is the portable micro-kernel: a 4×4 tile of accumulators in
// locals (the most the Go compiler keeps in registers without spilling),
// used on CPUs without the vector units the assembly kernels need.
var goKernel4x4 = &kernel{name: "go4x4", mr: 4, nr: 4, fn: kernGo4x4}

// activeKernel is the fastest kernel this CPU supports, chosen at start-up.
var activeKernel = bestKernel()

// kernelNames lists the kernels usable on this CPU, fastest first; tests
// and benchmarks run each of them.
func usableKernels() []*kernel {
	var ks []*kernel
	for _, k := range asmKernels() {
		ks = append(ks, k)
	}
	return append(ks, goKernel4x4)
}

func bestKernel() *kernel { return usableKernels()[0] }

// KernelName reports which micro-kernel Sgemm uses on this CPU:
// "avx512-8x32", "avx2-6x16" or "go4x4".
func KernelName() string { return activeKernel.name }

func kernGo4x4(kc int, a []float32, aOff, rsA, csA int, b []float32, bOff, ldb int, c []float32, cOff, ldc int, alpha float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	var c20, c21, c22, c23, c30, c31, c32, c33 float32
	ai, bi := aOff, bOff
	for p := 0; p < kc; p++ {
		bb := b[bi : bi+4 : bi+4]
		b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
		a0, a1, a2, a3 := a[ai], a[ai+rsA], a[ai+2*rsA], a[ai+3*rsA]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
		c20 += a2 * b0
		c21 += a2 * b1
		c22 += a2 * b2
		c23 += a2 * b3
		c30 += a3 * b0
		c31 += a3 * b1
		c32 += a3 * b2
		c33 += a3 * b3
		ai += csA
		bi += ldb
	}
	r := c[cOff : cOff+4 : cOff+4]
	r[0] += alpha * c00
	r[1] += alpha * c01
	r[2] += alpha * c02
	r[3] += alpha * c03
	r = c[cOff+ldc : cOff+ldc+4 : cOff+ldc+4]
	r[0] += alpha * c10
	r[1] += alpha * c11
	r[2] += alpha * c12
	r[3] += alpha * c13
	r = c[cOff+2*ldc : cOff+2*ldc+4 : cOff+2*ldc+4]
	r[0] += alpha * c20
	r[1] += alpha * c21
	r[2] += alpha * c22
	r[3] += alpha * c23
	r = c[cOff+3*ldc : cOff+3*ldc+4 : cOff+3*ldc+4]
	r[0] += alpha * c30
	r[1] += alpha * c31
	r[2] += alpha * c32
	r[3] += alpha * c33
}
