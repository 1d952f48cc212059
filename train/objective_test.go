package train

import (
	"math"
	"testing"
)

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestGroupAdvantages(t *testing.T) {
	cases := []struct {
		name    string
		rewards []float64
		group   int
		want    []float64
	}{
		{"equal rewards give zero", []float64{1, 1, 1, 1}, 4, []float64{0, 0, 0, 0}},
		{"all zero", []float64{0, 0}, 2, []float64{0, 0}},
		// mean 0.5, population std 0.5
		{"one right one wrong", []float64{1, 0}, 2, []float64{1, -1}},
		// mean 0.25, std sqrt(0.1875)=0.4330127
		{"one of four", []float64{0, 1, 0, 0}, 4, []float64{-0.57735027, 1.7320508, -0.57735027, -0.57735027}},
		{"two groups independent", []float64{1, 0, 1, 1}, 2, []float64{1, -1, 0, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := GroupAdvantages(c.rewards, c.group, 0)
			for i := range got {
				if !near(got[i], c.want[i], 1e-6) {
					t.Fatalf("got %v, want %v", got, c.want)
				}
			}
		})
	}
	if got := GroupAdvantages([]float64{1, 0}, 2, 1e-4); !near(got[0], 0.5/(0.5+1e-4), 1e-12) {
		t.Fatalf("eps not added to std: got %v", got[0])
	}
}

func TestKLk3(t *testing.T) {
	if got := KLk3(-1.3, -1.3); got != 0 {
		t.Fatalf("KLk3 of equal log-probs = %v, want 0", got)
	}
	// ref − logp = 1: e − 1 − 1
	if got, want := KLk3(-2, -1), math.E-2; !near(got, want, 1e-12) {
		t.Fatalf("KLk3(-2,-1) = %v, want %v", got, want)
	}
	for _, d := range []float64{-3, -0.5, 0.2, 4} {
		if KLk3(0, d) < 0 {
			t.Fatalf("KLk3 negative at d=%v", d)
		}
	}
}

func TestPolicyLossHandComputed(t *testing.T) {
	// Token 0: on-policy (ratio 1), A=2 → loss −2, grad −2.
	// Token 1: ratio e^0.5≈1.6487 > 1.2 with A=1 → clipped: loss −1.2, grad 0.
	// Token 2: ratio e^−0.5≈0.6065 < 0.8 with A=−1 → min(−0.6065, −0.8)=−0.8
	//          is the clipped one → loss 0.8, grad 0.
	// Token 3: masked out (a user token).
	logp := []float32{-1, -0.5, -1.5, -2}
	old := []float32{-1, -1, -1, -7}
	adv := []float32{2, 1, -1, 5}
	mask := []float32{1, 1, 1, 0}
	st, d := PolicyLoss(logp, old, nil, adv, mask, 0.2, 0)
	if st.Tokens != 3 {
		t.Fatalf("counted %d tokens, want 3", st.Tokens)
	}
	if want := (-2 - 1.2 + 0.8) / 3; !near(st.Loss, want, 1e-6) {
		t.Fatalf("loss %v, want %v", st.Loss, want)
	}
	if !near(st.ClipFrac, 2.0/3, 1e-12) {
		t.Fatalf("clip fraction %v, want 2/3", st.ClipFrac)
	}
	want := []float32{-2.0 / 3, 0, 0, 0}
	for i := range d {
		if !near(float64(d[i]), float64(want[i]), 1e-6) {
			t.Fatalf("dlogp %v, want %v", d, want)
		}
	}
}

func TestPolicyLossZeroAdvantageOnlyKL(t *testing.T) {
	logp := []float32{-1, -2}
	st, d := PolicyLoss(logp, logp, []float32{-1, -2}, []float32{0, 0}, []float32{1, 1}, 0.2, 0.1)
	if st.Loss != 0 || st.KL != 0 || d[0] != 0 || d[1] != 0 {
		t.Fatalf("equal rewards and policy = reference: loss %v KL %v grad %v, want all zero", st.Loss, st.KL, d)
	}
}

// The analytic gradient matches central finite differences of the loss in
// float64, in the unclipped region and with the KL term on.
func TestPolicyLossGradientFiniteDifference(t *testing.T) {
	logp := []float32{-1.1, -0.7, -2.3}
	old := []float32{-1.0, -0.75, -2.2}
	ref := []float32{-0.9, -1.0, -2.0}
	adv := []float32{0.8, -1.3, 0.4}
	mask := []float32{1, 1, 1}
	_, d := PolicyLoss(logp, old, ref, adv, mask, 0.2, 0.05)
	const h = 1e-3
	for i := range logp {
		up := append([]float32(nil), logp...)
		dn := append([]float32(nil), logp...)
		up[i] += h
		dn[i] -= h
		lu, _ := PolicyLoss(up, old, ref, adv, mask, 0.2, 0.05)
		ld, _ := PolicyLoss(dn, old, ref, adv, mask, 0.2, 0.05)
		fd := (lu.Loss - ld.Loss) / (2 * h)
		if !near(fd, float64(d[i]), 1e-4) {
			t.Fatalf("token %d: analytic %v, finite difference %v", i, d[i], fd)
		}
	}
}

// With mask weights that give each sequence the same total weight, a
// one-token and a three-token sequence of opposite advantages push with
// the same total force; with plain 0/1 masks the longer one pushes three
// times as hard.
func TestPolicyLossSequenceWeights(t *testing.T) {
	logp := []float32{-1, -1, -1, -1}
	adv := []float32{1, -1, -1, -1}
	sum := func(d []float32, lo, hi int) float64 {
		s := 0.0
		for _, v := range d[lo:hi] {
			s += float64(v)
		}
		return s
	}
	_, tok := PolicyLoss(logp, logp, logp, adv, []float32{1, 1, 1, 1}, 0.2, 0)
	if a, b := sum(tok, 0, 1), sum(tok, 1, 4); math.Abs(a+0.25) > 1e-6 || math.Abs(b-0.75) > 1e-6 {
		t.Fatalf("token mean: pushes %v and %v, want -0.25 and 0.75", a, b)
	}
	// meanTrained 2: weights 2/1 and 2/3.
	_, seq := PolicyLoss(logp, logp, logp, adv, []float32{2, 2.0 / 3, 2.0 / 3, 2.0 / 3}, 0.2, 0)
	if a, b := sum(seq, 0, 1), sum(seq, 1, 4); math.Abs(a+0.5) > 1e-6 || math.Abs(b-0.5) > 1e-6 {
		t.Fatalf("sequence mean: pushes %v and %v, want -0.5 and 0.5", a, b)
	}
}
