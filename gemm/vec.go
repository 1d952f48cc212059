package gemm

// Dot returns Σ x[i]·y[i]. It panics if the lengths differ. On amd64 with
// AVX2+FMA it sums in eight-lane vector accumulators (so the rounding
// differs from a left-to-right loop by a few ulps); the result is the same
// for the same inputs on every call.
func Dot(x, y []float32) float32 {
	if len(x) != len(y) {
		panic("gemm: Dot of slices with different lengths")
	}
	var s float32
	i := 0
	if useVecAsm && len(x) >= 8 {
		i = len(x) &^ 7
		s = dotAsm(x[:i], y[:i])
	}
	for ; i < len(x); i++ {
		s += x[i] * y[i]
	}
	return s
}

// Axpy sets y[i] += alpha·x[i]. It panics if the lengths differ.
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic("gemm: Axpy of slices with different lengths")
	}
	i := 0
	if useVecAsm && len(x) >= 8 {
		i = len(x) &^ 7
		axpyAsm(alpha, x[:i], y[:i])
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// dotGo and axpyGo are the portable loops, unrolled by four so the
// compiler keeps independent partial sums in flight.
func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}

func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += alpha * v
	}
}
