package metric

// PassAtK is the unbiased estimate of pass@k for one problem from n
// samples of which c succeeded (Chen et al. 2021, "Evaluating Large
// Language Models Trained on Code", eq. 1): the chance that at least one
// of k samples drawn without replacement from the n succeeds, 1 −
// C(n−c, k)/C(n, k), computed as a running product so that large n does
// not overflow. It is 0 for k > n or n < 1 (not defined).
func PassAtK(n, c, k int) float64 {
	if n < 1 || k < 1 || k > n || c < 0 || c > n {
		return 0
	}
	if n-c < k {
		return 1
	}
	// C(n−c, k)/C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i)
	fail := 1.0
	for i := n - c + 1; i <= n; i++ {
		fail *= 1 - float64(k)/float64(i)
	}
	return 1 - fail
}
