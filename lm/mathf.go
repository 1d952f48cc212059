package lm

import "math"

// expf is a float32 e^x accurate to about 2 ulp, several times faster than
// math.Exp: softmax calls it millions of times per training step. Range
// reduction x = k·ln2 + r, |r| ≤ ln2/2, then a degree-6 polynomial (Cephes
// expf coefficients) scaled by 2^k built from its exponent bits.
func expf(x float32) float32 {
	if x < -87.33654 {
		return 0
	}
	if x > 88.0 {
		if x > 88.72283 {
			return float32(math.Inf(1))
		}
		return 2 * expf(x-0.6931471805599453)
	}
	// k = round(x/ln2), via the 1.5·2²³ trick (valid for |x/ln2| < 2²²).
	const shifter = 12582912
	kf := (x*1.44269504088896341 + shifter) - shifter
	r := x - kf*0.693359375 + kf*2.12194440e-4
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	p = p*r*r + r + 1
	return p * math.Float32frombits(uint32(int32(kf)+127)<<23)
}

// tanhf is a float32 tanh, a 13/6 rational minimax fit on [−7.9, 7.9]
// (Eigen's ptanh_float), accurate to a few ulp and branch-light: GELU
// calls it for every MLP activation.
func tanhf(x float32) float32 {
	const clamp = 7.90531110763549805
	x = max(-clamp, min(clamp, x))
	x2 := x * x
	p := float32(-2.76076847742355e-16)
	p = p*x2 + 2.00018790482477e-13
	p = p*x2 - 8.60467152213735e-11
	p = p*x2 + 5.12229709037114e-08
	p = p*x2 + 1.48572235717979e-05
	p = p*x2 + 6.37261928875436e-04
	p = p*x2 + 4.89352455891786e-03
	p *= x
	q := float32(1.19825839466702e-06)
	q = q*x2 + 1.18534705686654e-04
	q = q*x2 + 2.26843463243900e-03
	q = q*x2 + 4.89352518554385e-03
	return p / q
}

// logf is float32 log through float64; called once per row, not per element.
func logf(x float32) float32 { return float32(math.Log(float64(x))) }

func sqrtf(x float32) float32 { return float32(math.Sqrt(float64(x))) }
