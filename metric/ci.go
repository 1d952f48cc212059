package metric

import "math"

// Z95 is the standard normal quantile for a two-sided 95% interval.
const Z95 = 1.959963984540054

// WilsonCI is the Wilson score interval (Wilson 1927) for a success rate of
// successes out of n trials, at normal quantile z (Z95 for 95%). Unlike the
// normal-approximation interval it stays inside [0,1] and is not empty at
// 0 or n successes.
//
// Edge cases: n ≤ 0 gives the uninformative [0,1]; successes is clamped to
// [0,n]; z ≤ 0 or NaN is taken as Z95.
func WilsonCI(successes, n int, z float64) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	if !(z > 0) {
		z = Z95
	}
	s := min(max(successes, 0), n)
	nf := float64(n)
	p := float64(s) / nf
	z2 := z * z
	denom := 1 + z2/nf
	center := (p + z2/(2*nf)) / denom
	half := z * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / denom
	lo, hi = max(center-half, 0), min(center+half, 1)
	// At 0 or n successes the bound is exactly 0 or 1; rounding can leave
	// it a hair off.
	if s == 0 {
		lo = 0
	}
	if s == n {
		hi = 1
	}
	return lo, hi
}

// MeanCI returns the mean of xs and its two-sided 95% confidence interval
// from Student's t distribution with len(xs)−1 degrees of freedom:
// mean ± t·s/√n, s the sample standard deviation.
//
// Edge cases: no values give (0, 0, 0); one value x gives (x, x, x), since
// no spread can be estimated from it (callers should report n); a NaN or
// infinite value makes the result NaN or infinite.
func MeanCI(xs []float64) (mean, lo, hi float64) {
	return MeanCILevel(xs, 0.95)
}

// MeanCILevel is MeanCI at confidence level conf in (0,1); a level outside
// that range is taken as 0.95.
func MeanCILevel(xs []float64, conf float64) (mean, lo, hi float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return mean, mean, mean
	}
	ss := 0.0
	for _, x := range xs {
		d := x - mean
		ss += d * d
	}
	sd := math.Sqrt(ss / float64(n-1))
	if !(conf > 0 && conf < 1) {
		conf = 0.95
	}
	half := StudentTQuantile(0.5+conf/2, float64(n-1)) * sd / math.Sqrt(float64(n))
	return mean, mean - half, mean + half
}

// StudentTQuantile returns t such that P(T ≤ t) = p for Student's t with df
// degrees of freedom (df > 0, p in (0,1)); it returns NaN otherwise. It
// inverts the CDF by bisection to full float64 precision.
func StudentTQuantile(p, df float64) float64 {
	if !(p > 0 && p < 1) || !(df > 0) || math.IsInf(df, 0) {
		return math.NaN()
	}
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -StudentTQuantile(1-p, df)
	}
	hi := 1.0
	for studentTCDF(hi, df) < p {
		hi *= 2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	lo := 0.0
	for i := 0; i < 200 && hi-lo > 1e-15*hi; i++ {
		mid := (lo + hi) / 2
		if studentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// studentTCDF is P(T ≤ t) for t ≥ 0: 1 − ½·I_{df/(df+t²)}(df/2, ½).
func studentTCDF(t, df float64) float64 {
	return 1 - 0.5*regIncBeta(df/2, 0.5, df/(df+t*t))
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), by the
// continued fraction of Numerical Recipes §6.4 (modified Lentz), using the
// symmetry I_x(a,b) = 1 − I_{1−x}(b,a) where that converges faster.
func regIncBeta(a, b, x float64) float64 {
	if x <= 0 {
		return 0
	}
	if x >= 1 {
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaCF(a, b, x) / a
	}
	return 1 - front*betaCF(b, a, 1-x)/b
}

func betaCF(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-16
	clampTiny := func(v float64) float64 {
		if math.Abs(v) < tiny {
			return tiny
		}
		return v
	}
	qab, qap, qam := a+b, a+1, a-1
	c := 1.0
	d := 1 / clampTiny(1-qab*x/qap)
	h := d
	for m := 1; m <= 1000; m++ {
		mf := float64(m)
		m2 := 2 * mf
		aa := mf * (b - mf) * x / ((qam + m2) * (a + m2))
		d = 1 / clampTiny(1+aa*d)
		c = clampTiny(1 + aa/c)
		h *= d * c
		aa = -(a + mf) * (qab + mf) * x / ((a + m2) * (qap + m2))
		d = 1 / clampTiny(1+aa*d)
		c = clampTiny(1 + aa/c)
		del := d * c
		h *= del
		if math.Abs(del-1) < eps {
			break
		}
	}
	return h
}
