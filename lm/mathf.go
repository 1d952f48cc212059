package lm

import (
	"math"

	"github.com/calibrl/calibrl/gemm"
)

// expf is a float32 e^x accurate to about 2 ulp, several times faster than
// math.Exp: softmax calls it millions of times per training step. Range
// reduction x = k·ln2 + r, |r| ≤ ln2/2, then a degree-6 polynomial (Cephes
// expf coefficients) scaled by 2^k built from its exponent bits.
func expf(x float32) float32 {
	if x < -87.33654 {
		return 0
	}
	if x > 88.72283 {
		return float32(math.Inf(1))
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
	k := int32(kf)
	if k > 127 { // e^x near the float32 maximum: scale in two steps
		return 2 * p * math.Float32frombits(uint32(k+126)<<23)
	}
	return p * math.Float32frombits(uint32(k+127)<<23)
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

// expShiftSum sets x[i] = e^(x[i]−shift) and returns Σ x[i]: the inner
// step of every softmax. Vectorised where the CPU allows.
func expShiftSum(x []float32, shift float32) float32 {
	var sum float32
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		sum = expShiftAVX2(x[:i], shift)
	}
	for ; i < len(x); i++ {
		e := expf(x[i] - shift)
		x[i] = e
		sum += e
	}
	return sum
}

// geluSpan is geluForward's body for one span: out = gelu(x), th = tanh
// term. out may alias x.
func geluSpan(out, th, x []float32) {
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		geluAVX2(out[:i], th[:i], x[:i])
	}
	for ; i < len(x); i++ {
		v := x[i]
		t := tanhf(geluS * (v + geluK*v*v*v))
		th[i] = t
		out[i] = 0.5 * v * (1 + t)
	}
}

// attendRow is one query's attention over n cached positions for one head:
// s[j] = scale·q·k_j, softmax, o = Σ_j s[j]·v_j. k and v are the head's
// column slice of a [n,stride] cache. o and s are overwritten.
func attendRow(o, s, q, k, v []float32, n, stride int, scale float32) {
	s = s[:n]
	HS := len(q)
	if len(k) < (n-1)*stride+HS || len(v) < (n-1)*stride+HS {
		panic("lm: attendRow cache slice too short")
	}
	scoresRow(s, q, k, stride, scale)
	softmaxCausalRow(s, n-1)
	clear(o)
	mixRow(o, s, v, stride)
}

// scoresRow sets s[j] = scale·q·k_j for the keys k_j = k[j·stride:][:len(q)].
func scoresRow(s, q, k []float32, stride int, scale float32) {
	if useAVX2 && len(q)%8 == 0 {
		scoresAVX2(s, q, k, stride, scale)
		return
	}
	for j := range s {
		kj := k[j*stride : j*stride+len(q)]
		var d float32
		for i, qi := range q {
			d += qi * kj[i]
		}
		s[j] = d * scale
	}
}

// mixRow adds p[j]·v_j to o for the values v_j = v[j·stride:][:len(o)],
// in j order (each o[i] one chain of multiply-adds, as mixAVX2 keeps it).
func mixRow(o, p, v []float32, stride int) {
	if useAVX2 && len(o)%8 == 0 {
		mixAVX2(o, p, v, stride)
		return
	}
	for j, pj := range p {
		vj := v[j*stride : j*stride+len(o)]
		for i := range o {
			o[i] += pj * vj[i]
		}
	}
}

// softmaxBackRow turns d = ∂L/∂p for one probability row p into
// scale·∂L/∂scores: d[j] = scale·p[j]·(d[j] − D), where D = Σ_k p[k]·d[k]
// is supplied by the caller.
func softmaxBackRow(d, p []float32, D, scale float32) {
	j := 0
	if useAVX2 && len(d) >= 8 {
		j = len(d) &^ 7
		softmaxBackAVX2(d[:j], p[:j], D, scale)
	}
	for ; j < len(d); j++ {
		d[j] = scale * p[j] * (d[j] - D)
	}
}

// dotf is Σ a[i]·b[i].
func dotf(a, b []float32) float32 {
	if useAVX2 {
		return gemm.Dot(a, b)
	}
	var s float32
	for i, v := range a {
		s += v * b[i]
	}
	return s
}

// geluBackSpan is geluBackward's body for one span.
func geluBackSpan(dx, dout, x, th []float32) {
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		geluBackAVX2(dx[:i], dout[:i], x[:i], th[:i])
	}
	for ; i < len(x); i++ {
		v, t := x[i], th[i]
		d := 0.5*(1+t) + 0.5*v*(1-t*t)*geluS*(1+3*geluK*v*v)
		dx[i] = dout[i] * d
	}
}

// maxf returns the largest element of a non-empty x.
func maxf(x []float32) float32 {
	i, mx := 0, x[0]
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		mx = maxAVX2(x[:i])
	}
	for ; i < len(x); i++ {
		mx = max(mx, x[i])
	}
	return mx
}

// scalef sets x[i] *= s.
func scalef(x []float32, s float32) {
	i := 0
	if useAVX2 && len(x) >= 8 {
		i = len(x) &^ 7
		scaleAVX2(x[:i], s)
	}
	for ; i < len(x); i++ {
		x[i] *= s
	}
}

// addTo sets y[i] += x[i] (gemm.Axpy with alpha 1 is an exact add).
func addTo(y, x []float32) {
	if useAVX2 {
		gemm.Axpy(1, x, y)
		return
	}
	for i, v := range x {
		y[i] += v
	}
}
