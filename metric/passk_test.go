package metric

import (
	"math"
	"testing"
)

// binom is C(n, k) in float64, for small n.
func binom(n, k int) float64 {
	if k < 0 || k > n {
		return 0
	}
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// PassAtK matches 1 − C(n−c, k)/C(n, k) computed directly, is the
// success rate at k = 1, 1 when any k samples must include a success, and
// 0 with no success.
func TestPassAtK(t *testing.T) {
	for n := 1; n <= 12; n++ {
		for c := 0; c <= n; c++ {
			for k := 1; k <= n; k++ {
				want := 1 - binom(n-c, k)/binom(n, k)
				if got := PassAtK(n, c, k); math.Abs(got-want) > 1e-12 {
					t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", n, c, k, got, want)
				}
			}
			if got := PassAtK(n, c, 1); math.Abs(got-float64(c)/float64(n)) > 1e-12 {
				t.Errorf("pass@1 of %d/%d = %v", c, n, got)
			}
		}
	}
	if PassAtK(4, 0, 2) != 0 || PassAtK(4, 3, 2) != 1 || PassAtK(2, 1, 3) != 0 || PassAtK(0, 0, 1) != 0 {
		t.Error("edge cases")
	}
	if got := PassAtK(1000, 10, 100); !(got > 0.6 && got < 0.7) { // 1 − (0.9)^10 ≈ 0.65
		t.Errorf("PassAtK(1000, 10, 100) = %v", got)
	}
}
